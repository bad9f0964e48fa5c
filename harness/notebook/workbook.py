"""El taller: escribes el corazón del agente de la lección y lo pruebas como un proceso de verdad.

    from harness.notebook.workbook import Workbook
    workbook = Workbook("taller_tu_agente.ipynb")
    workbook.check("escritura")        # después de escribir save_checkpoint
    workbook.conformance()             # al final: el nivel de la lección entero sobre tu agente
    workbook.production()              # un adelanto: las defensas de «De la lección a producción»
    workbook.challenge()               # opcional: varias llamadas por turno (celdas «#| desafio»)

Cada celda ``#| export`` que ejecutas queda anotada tal como la ejecutaste (no hace falta guardar el
notebook): ``check`` arma con ellas ``_trabajo/taller/agent.py``, en el orden del notebook, lo corre
en procesos nuevos contra la parte de la matriz de caídas que decide esa pieza y muestra una tabla:
qué se esperaba, qué pasó, ✓ / ✗ y una pista que nombra el momento, sin darte el código. Lo que
todavía no escribiste (un ``raise not_yet(...)``, de ``harness.errors``) sale como «todavía no», nunca como una traza.
"""

import ast
import json
import re
import traceback
from pathlib import Path

from harness.conformidad.checks import CAPABILITIES, CHECKS, PRODUCTION_PIECES
from harness.conformidad.processes import Context, SuiteStopped
from harness.conformidad.report import all_passed, summary
from harness.conformidad.rows import not_yet
from harness.conformidad.suite import run_suite
from harness.errors import HarnessError
from harness.notebook.display import show_table
from harness.notebook.export import EXPORT_MARKER, export_agent, export_cells

# La marca de la celda del desafío opcional: no es del agente de la lección, solo de ``challenge()``.
CHALLENGE_MARKER = re.compile(r"#\|\s*desafio\s*")
# Lo que queda en blanco de una celda «tu turno»: ``raise not_yet("NOMBRE")`` (o ``todavia_no``, el
# nombre de antes, en los talleres ya repartidos).
STUB = re.compile(r"raise (?:not_yet|todavia_no)\(\s*\"(\w+)\"\s*\)")
# Lo que decide cada pieza: mientras siga en blanco, todas sus filas dirían «todavía no» (cada corrida
# pasa por ello), así que la comprobación lo dice sin correr procesos. None: la pieza corre siempre (una
# fila de la terminal no pasa por ninguna pieza en blanco). Las que no están (las caídas enteras,
# producción) pasan por todas: esperan a que no quede nada en blanco.
DECIDED_BY = {
    "escritura": "write_json_atomic",
    "lectura": "load_checkpoint",
    "apertura": "fresh_scene",
    "puntos": "punto_A",
    "registro": "run_tool_uses",
    "falla": "run_tool_uses",
    "aviso": "run_tool_uses",
    "reconcile": "reconcile",
    "terminal": None,
}
PREVIEW_WAITS = "El adelanto de producción corre cuando tu agente pase el nivel de la lección"
PREVIEW_NOTE = (
    "Un adelanto, no una nota: cada ✗ es una defensa que el agente de la lección no tiene, y la agrega "
    "«De la lección a producción» en la sección que nombra su fila."
)


def failure_line(err):
    """El error de una celda en pocas palabras, con su línea: «IndentationError en la línea 5: …»."""
    if isinstance(err, SyntaxError):
        return f"{type(err).__name__} en la línea {err.lineno}: {err.msg}"
    frames = [
        f
        for f in traceback.extract_tb(err.__traceback__)
        if f.filename.startswith(("<ipython", "/tmp/ipykernel"))
    ]
    where = f" en la línea {frames[-1].lineno}" if frames else ""
    return f"{type(err).__name__}{where}: {err}"


def defined_names(code):
    """Los nombres que define una celda en su nivel superior (funciones, clases, constantes): así se
    reconoce una celda aunque la hayas cambiado. Vacío si todavía no compila."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return frozenset()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(names)


def _waiting(piece, blank):
    """La sección de una pieza que todavía no se puede probar: falta escribir ``blank``."""
    title = CAPABILITIES[piece].title
    return title, [not_yet(title, "sus filas, con tu código", blank)]


class Workbook:
    """Las celdas ``#| export`` que ejecutaste, el agente que arman y sus comprobaciones."""

    def __init__(self, notebook):
        self.notebook = Path(notebook)
        if not self.notebook.exists():
            raise HarnessError(
                f"Abre y ejecuta el taller desde su carpeta notebooks/ (falta {self.notebook})."
            )
        self.agent = Path.cwd() / "_trabajo" / "taller" / "agent.py"
        self.ran = {}  # id de la celda (o sus nombres) → su código, tal como se ejecutó por última vez
        self.failed = {}  # id de la celda (o sus nombres) → por qué falló su última ejecución
        self.challenge_ran = {}  # lo mismo, para las celdas del desafío opcional
        self.lesson_passed = None  # (el agente que corrió workbook.conformance(), si pasó todo)
        from IPython import get_ipython  # solo dentro de un kernel

        shell = get_ipython()
        if shell is None:
            raise HarnessError(
                "El taller anota las celdas que ejecutas: úsalo dentro de un notebook (un kernel)."
            )
        for old in [
            cb
            for cb in shell.events.callbacks["post_run_cell"]
            if isinstance(getattr(cb, "__self__", None), Workbook)
        ]:
            shell.events.unregister(
                "post_run_cell", old
            )  # ejecutar de nuevo esta celda no duplica la anotación
        shell.events.register("post_run_cell", self._remember)

    def _remember(self, result):
        info = result.info
        code = info.raw_cell or ""
        first, _, rest = code.partition("\n")
        # El desafío se anota aparte: sus funciones reemplazan a las tuyas solo en ``challenge()``.
        table = self.challenge_ran if CHALLENGE_MARKER.fullmatch(first) else self.ran
        if table is self.ran and not EXPORT_MARKER.fullmatch(first):
            return
        # La celda se reconoce por su id (JupyterLab y Notebook 7 la mandan), o si no, por lo que define.
        key = info.cell_id or defined_names(rest)
        if result.success and defined_names(rest):
            table[key] = rest.strip("\n")
            self.failed.pop(key, None)
        elif not result.success:
            self.failed[key] = failure_line(result.error_before_exec or result.error_in_exec)

    def _lookup(self, table, cell_id, names):
        """Lo anotado para esa celda: por su id, o por los nombres que define (si el editor no manda ids)."""
        for key in (f"taller-{cell_id}", cell_id, names):
            if key in table:
                return table[key]
        return next((v for k, v in table.items() if isinstance(k, frozenset) and k & names), None)

    def cells(self):
        """[(id, código)] del agente: cada celda del notebook guardado, con el código que ejecutaste si
        la ejecutaste (si no, la versión guardada, que puede ser un «TU CÓDIGO AQUÍ»)."""
        found = []
        for cell_id, saved in export_cells(self.notebook):
            found.append((cell_id, self._lookup(self.ran, cell_id, defined_names(saved)) or saved))
        return found

    def edits_that_did_not_run(self):
        """Una línea por celda cuya última edición falló al ejecutarse: qué falló y qué se comprueba."""
        lines = []
        for cell_id, saved in export_cells(self.notebook):
            names = defined_names(saved)
            failed = self._lookup(self.failed, cell_id, names)
            if failed:
                checked = (
                    "la versión anterior, la que sí corrió"
                    if self._lookup(self.ran, cell_id, names)
                    else "la celda guardada"
                )
                shown = ", ".join(sorted(names)) or cell_id
                lines.append(f"Tu última edición de {shown} no corrió ({failed}): compruebo {checked}.")
        return lines

    def export(self):
        return export_agent(
            self.notebook, self.agent, shown_as=f"tu taller ({self.notebook.name})", cells=self.cells()
        )

    def challenge_cells(self):
        """[(id, código)] de las celdas del desafío opcional, como las ejecutaste (o como están guardadas)."""
        # json y no nbformat: importar nbformat (jsonschema) tarda segundos, y esto corre en la primera celda.
        with open(self.notebook, encoding="utf-8") as f:
            notebook = json.load(f)
        found = []
        for cell in notebook["cells"]:
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            first, _, saved = source.partition("\n")
            if cell["cell_type"] == "code" and CHALLENGE_MARKER.fullmatch(first):
                ran = self._lookup(self.challenge_ran, cell.get("id"), defined_names(saved))
                found.append((cell.get("id"), ran or saved.strip("\n")))
        return found

    def blanks(self):
        """Los nombres de lo que sigue en blanco en tu agente (cada ``raise not_yet(...)``), en orden."""
        return [name for _, code in self.cells() for name in STUB.findall(code)]

    def _results(self, pieces):
        """[(título, filas)] de esas piezas sobre tu agente: las que decide algo todavía en blanco dicen
        «todavía no» sin correr nada; las demás corren como procesos de verdad."""
        path, blanks = self.export(), self.blanks()
        waiting = {}
        for piece in pieces:
            needed = DECIDED_BY[piece] if piece in DECIDED_BY else next(iter(blanks), None)
            if needed and needed in blanks:
                waiting[piece] = needed
        ready = [p for p in pieces if p not in waiting]  # run_suite sin piezas correría todas
        ran = iter(run_suite(Context(str(path), {}), ready) if ready else [])
        return [_waiting(p, waiting[p]) if p in waiting else next(ran) for p in pieces]

    def check(self, *pieces):
        """Corre tu agente contra lo que deciden esas piezas y muestra la tabla (nunca lanza)."""
        self._show(lambda: self._results(list(pieces)))

    def _lesson_tier(self):
        """[(título, filas)] del nivel de la lección sobre tu agente; anota si pasó todo, y con qué agente."""
        results = self._results(list(CHECKS))
        rows = [row for _, piece_rows in results for row in piece_rows]
        self.lesson_passed = (self.agent.read_text(encoding="utf-8"), all_passed(rows))
        return results

    def conformance(self):
        """El nivel de la lección entero sobre tu agente, como ``python -m harness.conformidad _trabajo/taller/agent.py``."""
        self._show(self._lesson_tier)

    def production(self):
        """El nivel de producción sobre tu agente: qué defensas agrega el notebook siguiente. Corre solo
        cuando tu agente pasa el nivel de la lección: antes, cada fila fallaría por la lección, no por
        una defensa."""

        def run():
            blanks = list(dict.fromkeys(self.blanks()))
            if blanks:
                raise HarnessError(f"{PREVIEW_WAITS}; todavía no escribiste {', '.join(blanks)}.")
            if self.lesson_passed != (self.export().read_text(encoding="utf-8"), True):
                self._lesson_tier()  # el agente cambió desde workbook.conformance() (o no corrió)
            if not self.lesson_passed[1]:
                raise HarnessError(f"{PREVIEW_WAITS}: workbook.conformance() muestra qué filas no dan ✓.")
            return run_suite(Context(str(self.agent), {}), list(PRODUCTION_PIECES))

        self._show(run, preview=True)

    def challenge(self):
        """Tu agente con las celdas del desafío (varias llamadas por turno), contra las caídas de su guion."""

        written = self.challenge_cells()
        if not any(defined_names(code) - {"TASK", "ScriptedModel"} for _, code in written):
            print(
                "Todavía no escribiste el desafío (es opcional): la celda «#| desafio» no define ninguna función."
            )
            return

        def run():
            path = export_agent(
                self.notebook,
                self.agent.with_name("agent_varias.py"),
                shown_as=f"tu taller, con el desafío ({self.notebook.name})",
                cells=self.cells() + written,
            )
            return run_suite(Context(str(path), {}, several_calls=True), ["caidas"])

        self._show(run)

    comprobar = check  # el nombre de antes, para los talleres ya repartidos
    conformidad = conformance  # el nombre de antes, para los talleres ya repartidos
    produccion = production  # el nombre de antes, para los talleres ya repartidos
    desafio = challenge  # el nombre de antes, para los talleres ya repartidos

    def _show(self, results, preview=False):
        for line in self.edits_that_did_not_run():
            print(line)
        try:
            results = results()
        except (HarnessError, SuiteStopped) as err:  # una celda que no compila, un agente que no termina
            print(err)
            return
        rows = [row for _, piece_rows in results for row in piece_rows]
        if preview:
            show_table(
                ["sección de «De la lección a producción»", "escenario", "pasó", "resultado"],
                [[r.section, r.scenario, r.got, r.status] for r in rows],
                note=PREVIEW_NOTE,
            )
            return
        show_table(
            ["escenario", "se espera", "pasó", "resultado", "pista"],
            [[r.scenario, r.expected, r.got, r.status, r.hint] for r in rows],
        )
        print(summary(rows))


Taller = Workbook  # el nombre de antes, para los talleres ya repartidos

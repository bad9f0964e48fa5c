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

Una comprobación corre el código que está en la celda: si la última edición de una celda del agente no
corrió (no compila, falló, perdió su ``#| export``, o se guardó editada sin ejecutarla), lo dice con la
celda y la línea, y no corre nada (un ✓ de la versión anterior sería de un código que ya no está). Una
pieza se comprueba apenas está escrita: las piezas posteriores que siguen en blanco van con la versión
de la lección, en un agente aparte, y la comprobación lo dice.
"""

import ast
import json
import re
import traceback
from pathlib import Path
from typing import NamedTuple

from harness.conformidad.checks import CAPABILITIES, CHECKS, PRODUCTION_PIECES
from harness.conformidad.processes import Context, SuiteStopped
from harness.conformidad.report import summary
from harness.conformidad.rows import FAILED, NOT_YET, OK, not_yet
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
# Las piezas en el orden del taller: una comprobación usa la versión de la lección de las que vienen
# después de las suyas y siguen en blanco (su propio código nunca espera a una pieza posterior).
PIECE_ORDER = tuple(dict.fromkeys(name for name in DECIDED_BY.values() if name))
# Dónde anota ``maintainer.taller`` de qué celda de la lección viene cada celda (su ``ORIGIN``).
LESSON_ORIGIN = "derived_from"
BORROWED_AGENT = "agent_con_la_leccion.py"  # tu agente con las piezas posteriores de la lección
RUN_IT_AGAIN = (
    "Ejecuta esa celda (Shift+Enter) hasta que corra sin error y vuelve a comprobar: no compruebo una "
    "versión que ya no está en la celda."
)
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


# Para reconocer una celda que no compila: sus ``def``, ``class`` y asignaciones de nivel superior.
TOP_LEVEL_NAME = re.compile(r"^(?:(?:async\s+)?def|class)\s+(\w+)|^([A-Za-z_]\w*)\s*=", re.MULTILINE)


def written_names(code):
    """Los nombres que define una celda, también si no compila (leídos línea por línea)."""
    return defined_names(code) or frozenset(a or b for a, b in TOP_LEVEL_NAME.findall(code))


def first_difference(ran, saved):
    """La línea de la celda (contando la de ``#| export``) donde lo guardado deja de ser lo que corrió."""
    ran_lines, saved_lines = ran.splitlines(), saved.splitlines()
    same = next((i for i, (a, b) in enumerate(zip(ran_lines, saved_lines, strict=False)) if a != b), None)
    return 2 + (min(len(ran_lines), len(saved_lines)) if same is None else same)


class Saved(NamedTuple):
    """Una celda del agente tal como está guardada en el notebook."""

    cell_id: str
    code: str  # sin la línea ``#| export``
    exported: bool  # ¿empieza con ``#| export``? (una celda de la lección que la perdió, no)
    origin: dict  # de qué celda de la lección viene (vacío si es del taller)


def saved_cells(notebook):
    """Las celdas del agente guardadas: las ``#| export`` y las de la lección aunque perdieran la marca."""
    # json y no nbformat: importar nbformat (jsonschema) tarda segundos, y esto corre tras cada celda.
    with open(notebook, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    found = []
    for cell in cells:
        text = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        first, _, rest = text.partition("\n")
        exported = bool(EXPORT_MARKER.fullmatch(first))
        origin = cell.get("metadata", {}).get(LESSON_ORIGIN) or {}
        if cell["cell_type"] == "code" and (exported or origin):
            code = (rest if exported else text).strip("\n")
            found.append(Saved(cell.get("id", str(len(found))), code, exported, origin))
    return found


def nothing_failed(rows):
    """¿Ninguna fila ✗ ni «todavía no», y alguna ✓? Basta para el adelanto de producción: una fila que no
    se pudo comprobar en esta máquina (sin strace) no es un pase, pero tampoco una falla de la lección."""
    return any(row.status == OK for row in rows) and not any(row.status in (FAILED, NOT_YET) for row in rows)


def _as_names(key):
    """Los nombres de una clave de anotación (un id de celda no tiene)."""
    return key if isinstance(key, frozenset) else frozenset()


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
        self.saved_at_run = {}  # id de la celda (o sus nombres) → cómo estaba guardada cuando corrió
        self.challenge_ran = {}  # lo mismo, para las celdas del desafío opcional
        self.challenge_failed = {}  # y por qué falló su última ejecución
        self.lesson_passed = None  # (el agente que corrió workbook.conformance(), si nada falló)
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
        if CHALLENGE_MARKER.fullmatch(first):  # el desafío se anota aparte: solo lo usa ``challenge()``
            key = info.cell_id or written_names(rest)
            self._note(self.challenge_ran, self.challenge_failed, key, rest, result)
            return
        exported = EXPORT_MARKER.fullmatch(first)
        # La celda se reconoce por su id (JupyterLab y Notebook 7 la mandan), o si no, por lo que define.
        key = info.cell_id or written_names(rest if exported else code)
        saved = self._saved_version(key)
        if exported:
            self._note(self.ran, self.failed, key, rest, result)
            self.saved_at_run[key] = saved
        elif saved is not None:  # una celda del agente sin su marca: tu agente no la lleva
            self._forget(self.failed, key)
            self.failed[key] = (
                "en la línea 1 falta «#| export»: sin esa línea, la celda no es parte de tu agente"
            )

    def _note(self, table, failed, key, rest, result):
        """Anota lo que corrió (o por qué no corrió) la última vez en la celda ``key``: una celda que
        corrió vacía también se anota, para que no quede en su lugar una versión anterior."""
        self._forget(failed, key)
        if not result.success:
            failed[key] = failure_line(result.error_before_exec or result.error_in_exec)
        elif key:
            self._forget(table, key)
            table[key] = rest.strip("\n")

    @staticmethod
    def _forget(table, key):
        """Borra lo anotado para esa celda (por su id, o por cualquier nombre que comparta)."""
        for old in [k for k in table if k == key or (isinstance(k, frozenset) and k & _as_names(key))]:
            del table[old]

    def _saved_version(self, key):
        """El código guardado de la celda del agente ``key`` (un id o sus nombres), o None si no es una."""
        for cell in saved_cells(self.notebook):
            names = written_names(cell.code)
            if key in (cell.cell_id, f"taller-{cell.cell_id}") or _as_names(key) & names:
                return cell.code
        return None

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
        for cell in saved_cells(self.notebook):
            if cell.exported:
                ran = self._lookup(self.ran, cell.cell_id, written_names(cell.code))
                found.append((cell.cell_id, cell.code if ran is None else ran))
        return found

    def edits_that_did_not_run(self):
        """Una línea por celda del agente cuya versión actual no corrió: su última ejecución falló (una
        sintaxis rota, un error, sin ``#| export``) o se editó y se guardó sin ejecutarla. Con alguna,
        ninguna comprobación corre: un ✓ sería de un código que ya no está en la celda."""
        lines = []
        for cell in saved_cells(self.notebook):
            names = written_names(cell.code)
            shown = f"{', '.join(sorted(names)) or 'la celda'} (celda {cell.cell_id})"
            failed = self._lookup(self.failed, cell.cell_id, names)
            ran = self._lookup(self.ran, cell.cell_id, names)
            if failed:
                lines.append(f"Tu última edición de {shown} no corrió: {failed}.")
            elif not cell.exported:
                lines.append(
                    f"{shown}, guardada, no empieza con «#| export» (línea 1): no es parte de tu agente."
                )
            elif ran is not None and cell.code not in (
                ran,
                self._lookup(self.saved_at_run, cell.cell_id, names),
            ):
                line = first_difference(ran, cell.code)
                lines.append(
                    f"{shown} cambió desde que la ejecutaste (desde la línea {line}) y no corrió así."
                )
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
        «todavía no» sin correr nada; las demás corren como procesos de verdad, con la versión de la
        lección de cada pieza posterior que sigue en blanco (lo dice una línea antes de la tabla)."""
        borrowed = self._borrowed(pieces)
        cells = self._with(borrowed)
        blanks = [name for _, code in cells for name in STUB.findall(code)]
        waiting = {}
        for piece in pieces:
            needed = DECIDED_BY[piece] if piece in DECIDED_BY else next(iter(blanks), None)
            if needed and needed in blanks:
                waiting[piece] = needed
        ready = [p for p in pieces if p not in waiting]  # run_suite sin piezas correría todas
        if not ready:
            return [_waiting(p, waiting[p]) for p in pieces]
        path = self._export_with(borrowed) if borrowed else self.export()
        ran = iter(run_suite(Context(str(path), {}), ready))
        return [_waiting(p, waiting[p]) if p in waiting else next(ran) for p in pieces]

    def _borrowed(self, pieces):
        """{id de la celda: código de la lección} de las celdas en blanco de las piezas posteriores a
        las pedidas; vacío si alguna de las pedidas pasa por el agente entero (las caídas, el final)."""
        deciders = [DECIDED_BY.get(piece) for piece in pieces]
        if not deciders or None in deciders:
            return {}
        later = set(PIECE_ORDER[max(PIECE_ORDER.index(d) for d in deciders) + 1 :])
        origins = {cell.cell_id: cell.origin for cell in saved_cells(self.notebook)}
        borrowed = {}
        for cell_id, code in self.cells():
            lesson = self._lesson_version(origins.get(cell_id)) if later & set(STUB.findall(code)) else None
            if lesson:
                borrowed[cell_id] = lesson
        return borrowed

    def _lesson_version(self, origin):
        """El código de la celda de la lección de la que viene una celda, o None si la lección no está."""
        lesson = self.notebook.parent / (origin or {}).get("notebook", "")
        if not origin or not lesson.is_file():
            return None
        return dict(export_cells(lesson)).get(origin.get("cell"))

    def _with(self, borrowed):
        return [(cell_id, borrowed.get(cell_id, code)) for cell_id, code in self.cells()]

    def _export_with(self, borrowed):
        """Tu agente con la versión de la lección de esas celdas, aparte del tuyo (que no la lleva)."""
        names = [n for cell_id, code in self.cells() if cell_id in borrowed for n in STUB.findall(code)]
        names = ", ".join(n for n in dict.fromkeys(names) if n in PIECE_ORDER)
        print(f"Mientras no escribas {names}, las filas que pasan por ahí usan la versión de la lección.")
        return export_agent(
            self.notebook,
            self.agent.with_name(BORROWED_AGENT),
            shown_as=f"tu taller ({self.notebook.name}), con {names} de la lección",
            cells=self._with(borrowed),
        )

    def check(self, *pieces):
        """Corre tu agente contra lo que deciden esas piezas y muestra la tabla (nunca lanza)."""
        self._show(lambda: self._results(list(pieces)))

    def _lesson_tier(self):
        """[(título, filas)] del nivel de la lección sobre tu agente; anota si pasó todo, y con qué agente."""
        results = self._results(list(CHECKS))
        rows = [row for _, piece_rows in results for row in piece_rows]
        self.lesson_passed = (self.agent.read_text(encoding="utf-8"), nothing_failed(rows))
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
            if self.challenge_failed:
                failed = "; ".join(self.challenge_failed.values())
                raise HarnessError(f"Tu última edición del desafío no corrió: {failed}. {RUN_IT_AGAIN}")
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
        not_run = self.edits_that_did_not_run()
        if not_run:
            print("\n".join([*not_run, RUN_IT_AGAIN]))
            return
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

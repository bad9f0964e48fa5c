"""Las carpetas de trabajo de un notebook y el agente en un proceso aparte, mostrado como en la terminal.

from harness.notebook.workspace import Workspace
work = Workspace("leccion_6_puntos_de_control.ipynb")   # _trabajo/leccion/, vacía en cada corrida
"""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.contract import CRASH_VAR, VARIANT_VAR
from harness.defenses.workdir import fresh_dir, inside
from harness.errors import HarnessError
from harness.notebook.export import export_agent, export_cells
from harness.runs.launcher import AgentRun, run_agent_process
from harness.scenario import SAVE_A
from harness.tools import prepare_task_files

# Dónde empieza y termina el punto A en el run_agent de la lección (la variante «solo el punto B»).
POINT_A_START, POINT_A_END = "—— Punto A", f'crash_point("{SAVE_A}")'


class Workspace:
    """Las carpetas de un notebook: ``_trabajo/<carpeta>/<nombre>`` por demostración y el agente de la
    lección armado en ``_trabajo/agent.py``, al lado del notebook. Se crea vacía: cada corrida empieza
    sin rastros. ``agent=`` en ``run``/``terminal`` corre otro agente (los de «Más allá»)."""

    def __init__(self, notebook, folder="leccion"):
        self.notebook = Path(notebook)
        if not self.notebook.exists():
            raise HarnessError(
                f"Abre y ejecuta este notebook desde su carpeta notebooks/ (falta {self.notebook})."
            )
        self.root = Path(fresh_dir(Path.cwd() / "_trabajo" / folder))
        self.agent = Path.cwd() / "_trabajo" / "agent.py"

    def export(self):
        """Arma ``_trabajo/agent.py`` con las celdas ``#| export`` del notebook GUARDADO."""
        return export_agent(self.notebook, self.agent)

    def export_solo_b(self):
        """Arma ``_trabajo/agent_solo_b.py``: el mismo agente sin las líneas del punto A (desde su
        comentario «Punto A» hasta su ``crash_point``), e imprime las líneas que quitó."""
        cells, removed = [], []
        for cell_id, code in export_cells(self.notebook):
            kept, inside_a = [], False
            for line in code.splitlines():
                inside_a = inside_a or POINT_A_START in line
                (removed if inside_a else kept).append(line)
                inside_a = inside_a and POINT_A_END not in line
            cells.append((cell_id, "\n".join(kept)))
        if not removed:
            raise HarnessError(
                f"No encontré el punto A en las celdas de {self.notebook.name} (su comentario «{POINT_A_START}»)."
            )
        print("Sin estas líneas del punto A:\n" + "\n".join(f"  - {line.strip()}" for line in removed))
        return export_agent(self.notebook, self.agent.with_name("agent_solo_b.py"), cells=cells)

    def fresh(self, name):
        """Un directorio de trabajo nuevo, con las notas de ventas de la tarea."""
        workdir = self.root / name
        workdir.mkdir(parents=True)
        with inside(workdir):
            prepare_task_files()
        return workdir

    def run(self, workdir, agent=None, **options):
        """Un agente (el armado, si no se dice otro) en un proceso nuevo: ``resume``, ``crash_after``,
        ``variant``, ``env``."""
        return run_agent_process(workdir, agent=agent or self.agent, **options)

    def terminal(self, workdir, resume=False, crash_after=None, variant=None, agent=None, env=None):
        """Corre el agente en un proceso nuevo, lo muestra como en la terminal (stdout y stderr en el
        orden en que los escribió, y su código) y devuelve la corrida."""
        shown = {VARIANT_VAR: variant, CRASH_VAR: crash_after, **(env or {})}
        words = [f"{name}={_relative(value)}" for name, value in shown.items() if value]
        print(" ".join(["$", *words, self.command(agent), *["--resume"] * resume]))
        run = self.run(workdir, agent, resume=resume, crash_after=crash_after, variant=variant, env=env)
        print(run.as_terminal(), end="")
        return ShownRun(*run)

    def command(self, agent=None):
        """Cómo se corre ese agente en la terminal: ``python agent.py`` o ``python -m harness.…``."""
        path = Path(agent or self.agent).resolve()
        package = Path(__file__).resolve().parent
        if package in path.parents:
            return f"python -m {'.'.join(path.relative_to(package.parent).with_suffix('').parts)}"
        return f"python {path.name}"

    def crash_and_resume(self, label, variant=None, agent=None, env=None):
        """Una caída y su reanudación, cada una en un proceso nuevo, en una carpeta propia:
        (carpeta, reanudación)."""
        # Sin fresh(): corre en varios hilos a la vez, y fresh() cambia la carpeta del proceso un momento.
        # Las notas las crea la corrida nueva del agente.
        workdir = self.root / f"{Path(agent or self.agent).stem}-{label.replace(':', '-')}-{variant}"
        workdir.mkdir(parents=True)
        self.run(workdir, agent, crash_after=label, variant=variant, env=env)
        return workdir, self.run(workdir, agent, resume=True, variant=variant, env=env)

    def every_case(self, cases, agent=None, env=None):
        """{(caída, variante): (carpeta, reanudación)}, tres casos a la vez: cada uno tiene su carpeta,
        y mientras un proceso espera al disco o al motor, otro usa la CPU."""
        with ThreadPoolExecutor(max_workers=3) as pool:
            done = pool.map(lambda case: self.crash_and_resume(*case, agent=agent, env=env), cases)
            return dict(zip(cases, done, strict=True))


class ShownRun(AgentRun):
    """Una corrida que ``terminal`` ya mostró: como última línea de una celda no se muestra de nuevo."""

    def _ipython_display_(self):
        pass


def _relative(value):
    """Una ruta del entorno, relativa a la carpeta del notebook (la salida guardada no lleva rutas
    absolutas); cualquier otro valor, tal cual."""
    path = Path(str(value))
    if path.is_absolute() and Path.cwd() in path.parents:
        return path.relative_to(Path.cwd()).as_posix()
    return str(value)

"""Lo que el notebook de la lección necesita y no es el tema de la lección: carpetas de trabajo,
caídas simuladas dentro del kernel, el agente en un proceso aparte mostrado como en la terminal, y
tablas, archivos y código fuente mostrados con una versión en texto para cualquier visor.

    from harness.lesson import Workspace, crash_at, same_file, show_disk, show_file, show_source, show_table
    work = Workspace("leccion_6_puntos_de_control.ipynb")
"""

import contextlib
import inspect
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from html import escape
from pathlib import Path

from harness.contract import kill_line
from harness.crash import SimulatedCrash, reset_crash_points
from harness.disk_state import read_disk_state
from harness.errors import HarnessError
from harness.export import export_agent, export_cells
from harness.runner import AgentRun, run_agent_process
from harness.tools import prepare_task_files
from harness.workdir import fresh_dir, inside

# Dónde empieza y termina el punto A en el run_agent de la lección (la variante «solo el punto B»).
POINT_A_START, POINT_A_END = "—— Punto A", 'crash_point("after-save-a")'
# La hora de cada anotación del registro cambia en cada corrida: se muestra con este marcador.
AT_FIELD = re.compile(r'("at": )\d+')
AT_SHOWN = r"\1«ms»"


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
        """Corre el agente en un proceso nuevo, lo muestra como en la terminal y devuelve la corrida."""
        shown = {"AGENT_VARIANT": variant, "CRASH_AFTER": crash_after, **(env or {})}
        words = [f"{name}={_relative(value)}" for name, value in shown.items() if value]
        print(" ".join(["$", *words, self.command(agent), *["--resume"] * resume]))
        run = self.run(workdir, agent, resume=resume, crash_after=crash_after, variant=variant, env=env)
        exit_line = f"EXIT={run.returncode}\n" if run.returncode else ""  # el «echo EXIT=$?» de la terminal
        print(run.stdout + run.stderr + exit_line, end="")
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


@contextlib.contextmanager
def crash_at(label):
    """Como ``CRASH_AFTER=label`` en la terminal, pero dentro del kernel: la caída se imprime como
    ``[kill]`` y el bloque termina ahí."""
    os.environ["CRASH_AFTER"] = label
    reset_crash_points()  # cada bloque cuenta desde 1, como un proceso nuevo
    try:
        yield
    except SimulatedCrash as err:
        print(kill_line(err))
    finally:
        del os.environ["CRASH_AFTER"]
        reset_crash_points()


def _show_raw(bundle):
    from IPython.display import display  # solo dentro de un kernel

    display(bundle, raw=True)


def _show(html, text):
    _show_raw({"text/html": html, "text/plain": text})


def _cells(tag, row):
    return "".join(f"<{tag} style='text-align:left'>{escape(str(c))}</{tag}>" for c in row)


def show_table(headers, rows, note=""):
    """Una tabla HTML, con una versión en texto para quien no ve HTML; ``note``, una línea debajo (en la
    misma salida: una línea impresa aparte se guardaría junta con las demás, antes de la tabla)."""
    rows = [list(row) for row in rows]
    html = f"<table><tr>{_cells('th', headers)}</tr>"
    html += "".join(f"<tr>{_cells('td', row)}</tr>" for row in rows) + "</table>"
    text = "\n".join(" | ".join(map(str, row)) for row in [headers, *rows])
    _show(html + (f"<p>{escape(note)}</p>" if note else ""), text + (f"\n{note}" if note else ""))


def show_disk(*workdirs):
    """Lo que hay en disco: una fila por archivo, una columna por directorio de trabajo."""
    states = [read_disk_state(w).rows() for w in workdirs]
    rows = [[name, *(state[i][1] for state in states)] for i, (name, _) in enumerate(states[0])]
    show_table(["archivo", *(Path(w).name for w in workdirs)], rows)


def raw_text(path):
    """El texto de un archivo tal cual está en disco, salvo la hora ``at`` del registro."""
    return AT_FIELD.sub(AT_SHOWN, Path(path).read_text(encoding="utf-8"))


def show_file(path):
    """El archivo crudo, como lo mostraría ``cat`` (las horas ``at`` como «ms»)."""
    text = raw_text(path)
    note = (
        "\n(«ms»: la hora de la anotación en milisegundos; cambia en cada corrida)" if "«ms»" in text else ""
    )
    _show(
        f"<pre>$ cat {escape(Path(path).name)}\n{escape(text)}{escape(note)}</pre>",
        f"$ cat {Path(path).name}\n{text}{note}",
    )


def same_file(path_a, path_b, ignore_at=False):
    """¿Los dos archivos dicen lo mismo? Dos que faltan son iguales; ``ignore_at`` compara salvo la
    hora de cada anotación del registro."""
    paths = Path(path_a), Path(path_b)
    if not all(p.exists() for p in paths):
        return not any(p.exists() for p in paths)
    read = raw_text if ignore_at else Path.read_bytes
    return read(paths[0]) == read(paths[1])


def show_source(*objects):
    """El código fuente de funciones del arnés, resaltado como Python."""
    code = "\n\n".join(inspect.getsource(o).rstrip("\n") for o in objects)
    _show_raw({"text/markdown": f"```python\n{code}\n```", "text/plain": code})


# —— Las afirmaciones de la lección, mostradas con procesos de verdad ——

SAVE_PAUSED = "temporal escrito; el rename todavía no"
_KILL_DURING_SAVE = f"""
import json, os, signal, sys
from harness.runner import load_agent
agent = load_agent(sys.argv[1])
def replace(src, dst):  # el temporal ya está entero: el proceso se queda justo antes del rename
    print({SAVE_PAUSED!r}, flush=True)
    signal.pause()
os.replace = replace
agent.save_checkpoint(json.loads(sys.argv[2]))
"""


def kill_during_save(workdir, agent, cp):
    """Un proceso nuevo guarda ``cp`` con el ``save_checkpoint`` de ``agent`` y muere con SIGKILL a mitad
    del guardado: el temporal escrito, el rename sin hacer. Se lo mata cuando avisa que llegó ahí (un
    evento, no un tiempo). Devuelve su código de salida (-9: SIGKILL)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_DURING_SAVE, str(agent), json.dumps(cp)],
        cwd=workdir,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        arrived = proc.stdout.readline().strip() == SAVE_PAUSED
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
    if not arrived:
        raise HarnessError("el proceso terminó antes de llegar al rename: ¿save_checkpoint usa os.replace?")
    return proc.returncode


def kill_between_record_and_tool(workdir, agent, fn, call):
    """``fn(content)`` (una función de una celda que solo la define) en un proceso nuevo, con el registro
    del agente, muerto con SIGKILL entre la anotación y la herramienta: en cuanto ocurre la primera de
    las dos. Devuelve la corrida de ``harness.kill_at_moment``."""
    from harness.exercise_feedback import BETWEEN, cell_source
    from harness.kill_at_moment import run_and_kill

    return run_and_kill(
        workdir, agent=agent, stop_at=BETWEEN, function=fn.__name__, source=cell_source(fn), content=[call]
    )

"""Lo que el notebook de la lección necesita y no es el tema de la lección: carpetas de trabajo,
caídas simuladas dentro del kernel, el agente en un proceso aparte mostrado como en la terminal, y
tablas, archivos y código fuente mostrados con una versión en texto para cualquier visor.

    from harness.lesson import Workspace, crash_at, same_file, show_disk, show_file, show_source, show_table
    work = Workspace("leccion_6_puntos_de_control.ipynb")
"""

import contextlib
import inspect
import os
import re
from html import escape
from pathlib import Path

from harness.contract import kill_line
from harness.crash import SimulatedCrash, reset_crash_points
from harness.disk_state import read_disk_state
from harness.errors import HarnessError
from harness.export import export_agent
from harness.runner import run_agent_process
from harness.tools import prepare_task_files
from harness.workdir import fresh_dir, inside

# La hora de cada anotación del registro cambia en cada corrida: se muestra con este marcador.
AT_FIELD = re.compile(r'("at": )\d+')
AT_SHOWN = r"\1«ms»"


class Workspace:
    """Las carpetas de la lección: ``_trabajo/leccion/<nombre>`` por demostración y el agente armado
    en ``_trabajo/agent.py``, al lado del notebook. Se crea vacía: cada corrida empieza sin rastros."""

    def __init__(self, notebook):
        self.notebook = Path(notebook)
        if not self.notebook.exists():
            raise HarnessError(
                f"Abre y ejecuta este notebook desde su carpeta notebooks/ (falta {self.notebook})."
            )
        self.root = Path(fresh_dir(Path.cwd() / "_trabajo" / "leccion"))
        self.agent = Path.cwd() / "_trabajo" / "agent.py"

    def export(self):
        """Arma ``_trabajo/agent.py`` con las celdas ``#| export`` del notebook GUARDADO."""
        return export_agent(self.notebook, self.agent)

    def fresh(self, name):
        """Un directorio de trabajo nuevo, con las notas de ventas de la tarea."""
        workdir = self.root / name
        workdir.mkdir(parents=True)
        with inside(workdir):
            prepare_task_files()
        return workdir

    def run(self, workdir, **options):
        """El agente armado, en un proceso nuevo (``resume``, ``crash_after``, ``variant``)."""
        return run_agent_process(workdir, agent=self.agent, **options)

    def terminal(self, workdir, resume=False, crash_after=None, variant=None):
        """Corre el agente en un proceso nuevo y lo muestra como en la terminal."""
        env = [f"AGENT_VARIANT={variant}"] * bool(variant) + [f"CRASH_AFTER={crash_after}"] * bool(
            crash_after
        )
        print(" ".join(["$", *env, "python agent.py", *["--resume"] * resume]))
        run = self.run(workdir, resume=resume, crash_after=crash_after, variant=variant)
        exit_line = f"EXIT={run.returncode}\n" if run.returncode else ""  # el «echo EXIT=$?» de la terminal
        print(run.stdout + run.stderr + exit_line, end="")


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


def show_table(headers, rows):
    """Una tabla HTML, con una versión en texto para quien no ve HTML."""
    rows = [list(row) for row in rows]
    html = f"<table><tr>{_cells('th', headers)}</tr>"
    html += "".join(f"<tr>{_cells('td', row)}</tr>" for row in rows) + "</table>"
    _show(html, "\n".join(" | ".join(map(str, row)) for row in [headers, *rows]))


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

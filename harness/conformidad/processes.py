"""Correr el agente que se juzga, siempre en un proceso nuevo: entero (``run``, como en la terminal) o
una de sus funciones (``call``, con ``harness.conformidad.driver``). Ninguna corrida se importa aquí.

Cada corrida está contenida (``containment``): su grupo de procesos y lo que se le escape mueren con
ella, su salida tiene tope, no tiene entrada estándar, y su HOME y su TMPDIR apuntan a una carpeta de la
suite. ``Bounds``, compartido por todas las filas de una suite (``ctx.bounds``), cuenta las corridas
seguidas que no terminan (a la segunda, la suite se detiene con ``SuiteStopped``) y junta lo que el
agente escribió o borró fuera de su carpeta de trabajo (``outside``).

Con ``--comando`` (``ctx.command``: un agente en otro lenguaje) no hay módulo que importar: ``call``
lanza ``NeedsDriver``, y la suite marca esa pieza «no aplica» con su motivo. Y la suite le prepara los
archivos de la tarea antes de cada corrida nueva (``task_files``), como el arnés al agente en
Python: el agent.js de la lección no trae un ``prepareTaskFiles``.
"""

import json
import os
import re
import site
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

from harness.contract import NOT_WRITTEN
from harness.defenses.durable import remove_durably
from harness.runs.containment import OUTPUT_CAP, Servers, forking
from harness.runs.launcher import AgentRun, agent_command, launch
from harness.tools import NOTES_PATH, REPORT_PATH

from . import outside

# Las notas de ventas de la tarea, las mismas que deja harness.tools.prepare_task_files.
NOTES_SOURCE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", NOTES_PATH)


def _timeout(text, default=45):
    return int(text) if (text or "").isdigit() and int(text) > 0 else default


# Una red de seguridad, no una medida: una corrida sana tarda décimas de segundo. CONFORMANCE_TIMEOUT
# (segundos) la cambia: las pruebas de un agente que se cuelga no esperan dos minutos.
TIMEOUT = _timeout(os.environ.get("CONFORMANCE_TIMEOUT"))
# Corridas seguidas que no terminan (plazo vencido o salida sin fin) antes de detener la suite; y en
# total, para un agente que se cuelga solo a veces (cada --resume, por ejemplo): con el plazo de
# siempre, la suite de un agente que se cuelga termina en menos de HANG_TOTAL × TIMEOUT, unos 2 min.
HANG_LIMIT, HANG_TOTAL = 2, 3
_MISSING = re.compile(re.escape(NOT_WRITTEN) + r" (\S+)")


class SuiteStopped(BaseException):  # noqa: N818 (se lee como un hecho)
    """La suite se detiene: el agente no terminó en ``HANG_LIMIT`` corridas seguidas. Hereda de
    ``BaseException``, como ``KeyboardInterrupt``: el ``except Exception`` que vuelve fila ✗ cualquier
    error de una comprobación no la atrapa, y llega hasta quien corre la suite (una línea)."""


class NeedsDriver(Exception):  # noqa: N818
    """Esta comprobación importa el agente (el driver de Python): con ``--comando`` no aplica."""


class Bounds:
    """Lo que comparten las filas de una suite: la racha de corridas que no terminaron y lo que se
    escribió fuera de la carpeta de trabajo. Seguro entre hilos (las filas pueden correr en paralelo)."""

    def __init__(self, limit=HANG_LIMIT, total=HANG_TOTAL):
        self.limit, self.total, self._lock = limit, total, threading.Lock()
        self._streak, self._hung, self.stopped, self._found = 0, 0, "", {}
        # Las corridas de Python nacen de un servidor de corridas (un fork, no un intérprete nuevo).
        self.servers = Servers() if forking() else None

    def check(self):
        """Antes de cada corrida: si la suite ya se detuvo, ``SuiteStopped``."""
        if self.stopped:
            raise SuiteStopped(self.stopped)

    def record(self, outcome):
        """Después de cada corrida: una que terminó corta la racha; la ``limit``-ésima seguida que no
        terminó, o la ``total``-ésima en toda la suite, la detiene."""
        with self._lock:
            self._streak = 0 if outcome.finished else self._streak + 1
            self._hung += not outcome.finished
            if not self.stopped and self._streak >= self.limit:
                self.stopped = stop_line(outcome.ended, f"en {self.limit} corridas seguidas")
            elif not self.stopped and self._hung >= self.total:
                self.stopped = stop_line(outcome.ended, f"en {self.total} corridas")
        self.check()

    def found(self, findings):
        with self._lock:
            for finding in findings:
                self._found.setdefault(finding, None)

    def outside_findings(self):
        """Lo escrito o borrado fuera de la carpeta de trabajo, en el orden en que apareció."""
        with self._lock:
            return list(self._found)


def stop_line(ended, how_often):
    """La línea con la que se detiene la suite (``how_often``: «en 2 corridas seguidas»)."""
    if ended == "overflow":
        why = f"imprimió sin fin (más de {OUTPUT_CAP // (1024 * 1024)} MiB: se cortó su salida)"
        ask = "¿Un print dentro de un bucle que no termina?"
    else:
        why = f"no terminó en {TIMEOUT} s"
        ask = "¿Un bucle sin fin, o espera algo que nunca llega (la red, un candado, otro proceso)?"
    return (
        f"La suite se detiene: el agente {why} {how_often}, y cada fila que sigue esperaría lo mismo. "
        f"{ask} Córrelo a mano en una carpeta vacía y mira dónde se queda."
    )


@dataclass(frozen=True)
class Context:
    """El agente que se juzga (su ruta, o ``command``: otro lenguaje), su entorno extra, si pide varias
    llamadas por turno y los límites compartidos de esta suite."""

    agent: str | None
    env: dict
    several_calls: bool = False
    command: tuple = ()
    bounds: Bounds = field(default_factory=Bounds, compare=False)


def driver_missing(ctx):
    """'' si se pueden llamar funciones del agente; si no, por qué esa comprobación no aplica."""
    if ctx.command:
        return (
            "importa el agente y llama a una de sus funciones (el driver de Python); con --comando "
            "solo se corren las filas que lanzan el proceso entero"
        )
    return ""


# —— Carpetas ——

# La carpeta de una fila: <raíz>/fuera/trabajo es la de trabajo; HOME y TMPDIR, al lado.
WORK, ABOVE, HOME, TMP = "trabajo", "fuera", "casa", "tmp"


@contextmanager
def scratch():
    """Una carpeta de trabajo nueva, que se borra al terminar. Vive dos niveles debajo de su raíz, así
    que ``../x`` y ``../../x`` caen dentro de la suite, donde ``outside`` los ve."""
    with tempfile.TemporaryDirectory(prefix="conformidad-") as root:
        for folder in (HOME, TMP, os.path.join(ABOVE, WORK)):
            os.makedirs(os.path.join(root, folder))
        yield os.path.join(root, ABOVE, WORK)


def _sandbox(workdir):
    """La raíz de la carpeta de ``scratch`` que contiene ``workdir``, o None si es otra carpeta."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(workdir)))
    ok = os.path.basename(os.path.dirname(os.path.abspath(workdir))) == ABOVE
    return root if ok and os.path.isdir(os.path.join(root, HOME)) else None


def _environment(env, workdir):
    """El entorno de la corrida: sin escribir bytecode (que ensuciaría la carpeta del agente) y, dentro
    de una carpeta de ``scratch``, con HOME y TMPDIR en ella (y los paquetes de ``pip --user`` donde
    estaban, que HOME ya no los encontraría)."""
    env = {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}
    root = _sandbox(workdir)
    if root:
        tmp = os.path.join(root, TMP)
        env.update(HOME=os.path.join(root, HOME), TMPDIR=tmp, TMP=tmp, TEMP=tmp)
        env.setdefault("PYTHONUSERBASE", site.getuserbase())
    return env


def watched_folders(ctx):
    """{carpeta: su nombre en el informe}: donde un agente no debería tocar nada, la suya (o la de
    cada archivo que nombra su comando). La carpeta desde donde se corre la suite no: otras cosas
    (un notebook, otras pruebas) escriben ahí mientras tanto."""
    paths = [ctx.agent] if ctx.agent else [a for a in ctx.command if os.path.isfile(a)]
    return {os.path.dirname(os.path.abspath(p)): "la carpeta del agente" for p in paths}


# —— Correr ——


def _contained(ctx, args, workdir, env):
    """Una corrida contenida de ``args``: su ``AgentRun``, con los límites de la suite aplicados."""
    ctx.bounds.check()
    watch = outside.Watch(watched_folders(ctx), workdir, _sandbox(workdir), (ABOVE, WORK, HOME, TMP))
    servers = None if ctx.command else ctx.bounds.servers  # --comando: exec, como siempre
    outcome = launch(
        args,
        cwd=workdir,
        env=_environment(env, workdir),
        timeout=TIMEOUT,
        output_cap=OUTPUT_CAP,
        servers=servers,
    )
    ctx.bounds.found(watch.changes())
    stderr = outcome.stderr
    if outcome.ended == "timeout":
        stderr += f"\nno terminó en {TIMEOUT} s (¿un bucle, o espera algo?)"
    ctx.bounds.record(outcome)
    return AgentRun(outcome.returncode, outcome.stdout, stderr)


def task_files(workdir):
    """Los archivos de la tarea en ``workdir`` antes de una corrida nueva de un agente de ``--comando``,
    como los deja ``prepare_task_files`` al de Python: sin el reporte de la anterior y con las notas de
    ventas si faltan. Un --resume encuentra la carpeta como quedó (una fila borra las notas a propósito)."""
    remove_durably(os.path.join(workdir, REPORT_PATH))
    notes = os.path.join(workdir, NOTES_PATH)
    if not os.path.lexists(notes):
        with open(NOTES_SOURCE, "rb") as src, open(notes, "wb") as dst:
            dst.write(src.read())


def _args(ctx, workdir, **options):
    """(argumentos, entorno) del agente en ``workdir``: ``python agent.py`` o su ``--comando``."""
    return agent_command(workdir, agent=ctx.agent, command=ctx.command or None, env=ctx.env, **options)


def _task_args(ctx, workdir, **options):
    """Como ``_args``, con los archivos de la tarea preparados si es una corrida nueva de ``--comando``."""
    if ctx.command and not options.get("resume"):
        task_files(workdir)
    return _args(ctx, workdir, **options)


def run(ctx, workdir, **options):
    """El agente en ``workdir`` (``resume``, ``crash_after``, ``variant``); si no termina, código -1."""
    args, env = _task_args(ctx, workdir, **options)
    return _contained(ctx, args, workdir, env)


def run_prefixed(ctx, workdir, prefix, **options):
    """El agente (como ``run``) detrás de un comando como ``strace …``: para provocar una falla de E/S."""
    args, env = _task_args(ctx, workdir, **options)
    return _contained(ctx, [*prefix, *args], workdir, env)


def run_args(ctx, workdir, *args):
    """El agente con estos argumentos tal cual (para probar los que no valen): sin preparar nada, porque
    un argumento que no vale se rechaza antes de tocar la carpeta."""
    command, env = _args(ctx, workdir)
    return _contained(ctx, [*command, *args], workdir, env)


def missing(text):
    """La pieza que el agente dice que todavía no está escrita, o None."""
    found = _MISSING.search(text or "")
    return found and found[1].rstrip(".:,;")


def _driver(ctx, workdir, spec):
    """El driver en ``workdir`` con ``spec``: su respuesta JSON, o un error «Proceso» si no la dio."""
    env = {**os.environ, **ctx.env}
    done = _contained(
        ctx, [sys.executable, "-m", "harness.conformidad.driver", json.dumps(spec)], workdir, env
    )
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        last = (done.stderr.strip().splitlines() or ["sin salida"])[-1]
        return {"error": "Proceso", "message": f"el proceso terminó con código {done.returncode}: {last}"}


def call(ctx, workdir, function, *args):
    """``function(*args)`` del agente, en un proceso nuevo dentro de ``workdir``: {"value": …} o
    {"error": tipo, "message": texto}; un proceso que muere o no contesta es un error también."""
    why = driver_missing(ctx)
    if why:
        raise NeedsDriver(why)
    return _driver(
        ctx, workdir, {"agent": os.path.abspath(ctx.agent), "function": function, "args": list(args)}
    )


def import_problem(ctx):
    """Antes de la primera fila: '' si el agente se importa; si no, una línea en español con el
    archivo y la línea del error (de sintaxis o lo que lance al importarse). Con ``--comando`` solo se
    revisa la sintaxis de un ``node archivo.js`` (``node --check``); otro comando, ''."""
    if ctx.command:
        return _node_syntax(ctx)
    with scratch() as workdir:
        result = _driver(ctx, workdir, {"agent": os.path.abspath(ctx.agent), "function": None, "args": []})
    return "" if "value" in result else import_line(os.path.basename(ctx.agent), result)


_NODE_WHERE = re.compile(r"^(.*):(\d+)$")


def _node_syntax(ctx):
    """La línea de un ``node agent.js`` con un error de sintaxis (lo que dice ``node --check``), o ''."""
    program, *rest = ctx.command
    scripts = [a for a in rest if a.endswith((".js", ".cjs", ".mjs")) and os.path.isfile(a)]
    if os.path.basename(program) not in ("node", "node.exe") or not scripts:
        return ""
    with scratch() as workdir:
        done = _contained(ctx, [program, "--check", scripts[0]], workdir, dict(os.environ))
    lines = done.stderr.splitlines()
    found = _NODE_WHERE.match(lines[0]) if lines else None
    if done.returncode == 0 or not found:
        return ""
    code = lines[1].strip() if len(lines) > 1 else ""
    return import_line(
        os.path.basename(found[1]), {"error": "SyntaxError", "line": int(found[2]), "code": code}
    )


def import_line(name, result):
    """La línea de un agente que no se importa, con su número de línea si se sabe."""
    where = f"{name}, línea {result['line']}" if result.get("line") else name
    code = f": «{result['code']}»" if result.get("code") else ""
    tail = "Corrígelo y vuelve a comprobar: no se corrió ninguna fila."
    if result["error"] in ("SyntaxError", "IndentationError", "TabError"):
        what = "error de sangría" if result["error"] != "SyntaxError" else "error de sintaxis"
        return f"{where}: {what}, así que el agente no se puede importar{code}. {tail}"
    if result["error"] == "SystemExit":
        return (
            f"{where}: el agente sale al importarlo (sys.exit {result['message'] or 'None'}): ¿llama a main() "
            f'sin el «if __name__ == "__main__":»? {tail}'
        )
    if result["error"] == "Proceso":
        return f"{name}: importar el agente no terminó bien ({result['message']}). {tail}"
    return f"{where}: importar el agente lanza {result['error']}: {result['message']}. {tail}"

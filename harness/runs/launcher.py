"""Lanzar procesos: toda corrida que lanzan el arnés y la calificación pasa por aquí (un agente, como lo
lanzaría una persona en la terminal; git, nbgrader o pg_ctl; un script que se mata a propósito). Por
debajo, ``harness.runs.containment`` la contiene y ``harness.runs.fork_server`` puede hacerla nacer de un
fork. Cada corrida es un proceso nuevo que solo tiene el disco, y una caída lo termina de verdad.

    outcome = launch(args, cwd=carpeta, env=entorno)   # hasta que termina: Outcome (código, salida…)
    proc = start(args, cwd=carpeta, env=entorno)       # sin esperarlo: un Popen, para hablarle o matarlo

Lo que cambia de una corrida a otra son parámetros, no otro código:

- ``sandbox``: el comando que la envuelve (bwrap, setpriv, un strace ya armado), por fuera de todo;
- ``strace``: las opciones de strace (``-P``, ``-e inject=…``), que se antepone al comando;
- ``kill_at``: dónde muere. Una etiqueta de caída (``"after-tool:3"``, en ``harness.contract.CRASH_VAR``:
  el agente sale solo con 137) o una llamada al sistema (``AtSyscall("rename")``: SIGKILL al entrar);
- ``output_cap``: los bytes que se guardan de cada flujo; pasarse detiene la corrida;
- ``new_session``: su propia sesión y grupo de procesos (una señal de la terminal no la alcanza);
- ``orphans``: «kill», al volver no queda vivo ningún proceso suyo aunque se haya separado
  (``harness.runs.containment``); «keep», lo que deja corriendo sigue (el servidor que arranca pg_ctl).

Una corrida de agente (``agent_run``; ``run_agent_process`` siempre) puede además traer sus dos salidas en
el orden en que las escribió, como las muestra una terminal: ``ordered`` (``harness.runs.write_order``).
"""

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from subprocess import PIPE
from typing import NamedTuple

from harness.contract import CRASH_VAR, EXIT_KILLED, VARIANT_VAR, WORKDIR_VAR, reconcile_branch
from harness.errors import HarnessError
from harness.runs import write_order
from harness.runs.strace_log import STRACE

# Lo que strace calla si quien llama no dice otra cosa: sus propios avisos y la traza (va a /dev/null).
QUIET_STRACE = ("-qq", "-o", os.devnull)
ORPHANS = ("kill", "keep")


class AtSyscall(NamedTuple):
    """Morir con SIGKILL al entrar a la ``when``-ésima llamada ``name`` (antes de que ocurra): con
    strace, que muere de la misma señal, así que el código es el de un SIGKILL (-9), no 137. Con
    ``paths`` (``strace -P``), solo cuentan las que tocan una de esas rutas, tal como las escribe el
    programa o, las de un descriptor, resueltas: las demás llamadas de un runtime con hilos no corren
    la cuenta."""

    name: str
    when: int = 1
    paths: tuple = ()


class RunTimeoutError(HarnessError):
    """Una corrida que no terminó en su plazo: se la detuvo. Guarda lo que alcanzó a imprimir."""

    def __init__(self, timeout, stdout, stderr):
        super().__init__(f"la corrida no terminó en {timeout} s y se la detuvo")
        self.stdout, self.stderr = stdout, stderr


def full_command(args, env=None, *, sandbox=(), strace=None, kill_at=None):
    """(argumentos, entorno) de ``args`` con las opciones puestas: ``sandbox`` por fuera, strace
    adentro, ``args`` al final; ``env`` (por omisión, el de este proceso) no se cambia."""
    env = dict(os.environ if env is None else env)
    options = None if strace is None else list(strace)
    if isinstance(kill_at, AtSyscall):
        options = options or list(QUIET_STRACE)
        options += [arg for path in kill_at.paths for arg in ("-P", path)]
        options += ["-e", f"inject={kill_at.name}:signal=KILL:when={kill_at.when}"]
    elif kill_at:
        env[CRASH_VAR] = kill_at
    if options is not None:
        if not STRACE:
            raise HarnessError("Esto necesita strace (Linux): instálalo, por ejemplo con apt install strace.")
        args = [STRACE, *options, *args]
    return [*sandbox, *args], env


def launch(
    args,
    *,
    cwd=None,
    env=None,
    sandbox=(),
    strace=None,
    kill_at=None,
    output_cap=None,
    new_session=True,
    orphans="kill",
    timeout=60,
    servers=None,
):
    """Corre ``args`` hasta que termina (o vence ``timeout`` segundos; None: sin plazo) y devuelve su
    ``Outcome`` (de ``harness.runs.containment``). Sin entrada estándar. Con ``servers`` (``Servers``), una
    corrida de este mismo intérprete nace de un servidor de corridas en vez de arrancar el suyo."""
    # Aquí y no arriba: quien solo carga un agente (``load_agent``: el agente de lotes, el driver de la
    # suite) no paga en cada proceso el import de la contención (unos 10 ms).
    from harness.runs import containment  # noqa: PLC0415

    if orphans not in ORPHANS:
        raise ValueError(f"orphans: {orphans!r} (se espera uno de {ORPHANS})")
    argv, full_env = full_command(args, env, sandbox=sandbox, strace=strace, kill_at=kill_at)
    return containment.run_contained(
        argv,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
        cap=output_cap,
        servers=servers,
        new_session=new_session,
        kill_orphans=orphans == "kill",
    )


def start(
    args,
    *,
    cwd=None,
    env=None,
    sandbox=(),
    strace=None,
    kill_at=None,
    new_session=True,
    default_signals=False,
    stdin=None,
    stdout=PIPE,
    stderr=PIPE,
    text=True,
    pass_fds=(),
):
    """Arranca ``args`` sin esperarlo y devuelve su ``Popen`` (quien llama lo espera y lo mata).
    ``stdin``/``stdout``/``stderr`` como en ``Popen`` (None: los de este proceso; ``PIPE``, o un
    archivo); con ``text``, en UTF-8. ``default_signals``: ver ``_default_signals``."""
    argv, full_env = full_command(args, env, sandbox=sandbox, strace=strace, kill_at=kill_at)
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=full_env,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        text=text,
        encoding="utf-8" if text else None,
        pass_fds=pass_fds,
        start_new_session=new_session,
        preexec_fn=_default_signals if default_signals and os.name == "posix" else None,
    )


def _default_signals():
    """En el hijo, antes del exec: Ctrl-C, SIGTERM y SIGHUP con su efecto de siempre. Un proceso lanzado
    en segundo plano por una shell hereda SIGINT ignorado, y un agente que lo hereda no se detendría
    con la señal que se le manda a propósito."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)


# —— Agentes ——


def load_agent(path, name="agente"):
    """Un ``agent.py`` como módulo (sin correr su ``main``): quien necesita sus cargadores o su
    registro usa las funciones del agente mismo en vez de copiarlas."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class AgentRun(NamedTuple):
    """Lo que dejó una corrida: código de salida y lo que imprimió. ``written``: stdout y stderr juntos,
    en el orden en que se escribieron (None si la corrida no lo anotó: ``agent_run(..., ordered=True)``)."""

    returncode: int
    stdout: str
    stderr: str
    written: str | None = None

    @property
    def killed(self):
        return self.returncode == EXIT_KILLED

    @property
    def branch(self):
        """La rama de reconcile que tomó esta reanudación: hit, rerun, is_error, «none» si no había
        llamada colgante, o None si no fue una reanudación que leyó un punto de control."""
        return reconcile_branch(self.stdout)

    @property
    def output(self):
        """Las dos salidas como las mezcla una terminal; sin orden anotado, stdout y después stderr."""
        return self.stdout + self.stderr if self.written is None else self.written

    def as_terminal(self):
        """Lo que se ve en la terminal: las dos salidas en su orden y, si no terminó bien, el
        ``echo EXIT=$?`` de la lección."""
        return self.output + (f"EXIT={self.returncode}\n" if self.returncode else "")


def agent_command(
    workdir, *, agent=None, resume=False, crash_after=None, variant=None, env=None, live=False, command=None
):
    """(argumentos, entorno) de ``python agent.py [--resume] [--live]`` para ``workdir``; con ``command``
    (una lista, como ``["node", "agent.js"]``), ese comando en lugar de ``python agent.py``, con el
    mismo contrato: las variables de ``harness.contract`` (carpeta, caída, variante) y los mismos
    argumentos.

    Las rutas se vuelven absolutas: el proceso arranca dentro de ``workdir``, y una ruta relativa
    al directorio de quien llama (el del notebook, por ejemplo) ya no apuntaría al mismo lugar."""
    workdir = os.path.abspath(workdir)
    full_env = {k: v for k, v in os.environ.items() if k not in (CRASH_VAR, VARIANT_VAR)}
    full_env.update(env or {})
    full_env.update({WORKDIR_VAR: os.fspath(workdir), "PYTHONIOENCODING": "utf-8"})
    if variant:
        full_env[VARIANT_VAR] = variant
    flags = (["--resume"] if resume else []) + (["--live"] if live else [])
    program = list(command) if command else [sys.executable, os.path.abspath(agent)]
    return full_command([*program, *flags], full_env, kill_at=crash_after)


def agent_run(args, *, cwd, env, timeout=60, ordered=False, **options):
    """La corrida de ``args`` (un agente, de ``agent_command``) hasta que termina, como ``AgentRun``;
    ``options``, las de ``launch``. Si no termina en ``timeout`` segundos, ``RunTimeoutError``. Con
    ``ordered`` (un agente de Python, sin servidor de corridas), el agente anota en qué orden escribió
    en stdout y stderr (``harness.runs.write_order``) y la corrida trae ``written``."""
    if not ordered:
        outcome = launch(args, cwd=cwd, env=env, timeout=timeout, **options)
        written = None
    else:
        with tempfile.TemporaryDirectory(prefix="orden-") as folder:
            outcome = launch(args, cwd=cwd, env=_ordered_env(env, folder), timeout=timeout, **options)
            written = write_order.interleave(outcome.stdout, outcome.stderr, _read_log(folder))
    if outcome.ended == "timeout":
        raise RunTimeoutError(timeout, outcome.stdout, outcome.stderr)
    return AgentRun(outcome.returncode, outcome.stdout, outcome.stderr, written)


def _ordered_env(env, folder):
    """``env`` con el sitecustomize de ``write_order`` en ``folder``, primero en ``PYTHONPATH``."""
    shutil.copyfile(write_order.__file__, os.path.join(folder, "sitecustomize.py"))
    env = dict(os.environ if env is None else env)
    paths = [folder, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, write_order.ORDER_VAR: folder, "PYTHONPATH": os.pathsep.join(paths)}


def _read_log(folder):
    """El registro del orden ('' si el agente no llegó a anotar nada)."""
    try:
        with open(os.path.join(folder, write_order.LOG_NAME), encoding="utf-8") as log:
            return log.read()
    except FileNotFoundError:
        return ""


def run_agent_process(
    workdir,
    *,
    agent,
    resume=False,
    crash_after=None,
    variant=None,
    env=None,
    timeout=60,
    live=False,
    ordered=True,
):
    """Corre ``python agent.py [--resume] [--live]`` en ``workdir`` y espera a que termine (o muera),
    como en la terminal: con ``ordered``, la corrida sabe en qué orden escribió sus dos salidas."""
    args, full_env = agent_command(
        workdir, resume=resume, crash_after=crash_after, variant=variant, agent=agent, env=env, live=live
    )
    return agent_run(args, cwd=workdir, env=full_env, timeout=timeout, ordered=ordered)


def start_agent_process(workdir, *, agent, resume=False, env=None, prefix=(), live=False):
    """Arranca el agente sin esperarlo (para matarlo con una señal real); ``prefix`` antepone un
    comando como ``setpriv …``. Sin búfer en stdout: lo impreso antes de un SIGKILL no se pierde."""
    args, full_env = agent_command(
        workdir, agent=agent, resume=resume, env={**(env or {}), "PYTHONUNBUFFERED": "1"}, live=live
    )
    return start(args, cwd=workdir, env=full_env, sandbox=prefix, new_session=False, default_signals=True)

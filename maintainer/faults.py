"""Fallas del sistema, no solo SIGKILL: lo que comparten el barrido de fallas y el modelo de corte de luz.

Las dos mediciones parten de los mismos escenarios (una corrida nueva en un directorio vacío, una nueva
sobre una corrida terminada o caída, y ``--resume`` tras cada una de las 12 etiquetas de caída), graban
con strace las llamadas al sistema de una corrida y, después de cada falla, exigen lo mismo: ninguna
traza de Python ni mensaje del sistema en inglés, ``checkpoint.json`` y ``effects.json`` que falten o
carguen con los cargadores del agente, y una reanudación que termina con el reporte exactamente una vez,
byte a byte.

Lo usan ``benchmarks/fault_sweep.py``, ``benchmarks/power_cut.py`` y sus pruebas en
``tests/conformance/``. Grabar y leer las llamadas es de ``harness.runs.strace_log``; el modelo de corte de
luz, de ``harness.runs.power_cut``.
"""

import os
import shutil
import subprocess
import tempfile
from typing import NamedTuple

from harness.contract import CHECKPOINT_FILE, EXIT_DONE, EXIT_KILLED, FINISHED, MODEL_LOG_VAR, done_text
from harness.defenses.session import stderr_problems
from harness.runs.launcher import AgentRun, agent_command
from harness.runs.strace_log import TRACED, parse_log, strace_prefix
from harness.scenario import FINAL_TEXT, LABELS, SCRIPT, TOOL, VERIFIED_TEXT, label
from harness.tools import REPORT_PATH
from maintainer.torture import load_files, log_problems

# Lo que imprimiría Python o el sistema si un error se escapara sin traducir.
LEAKS = (
    "Traceback",
    "Exception ignored",
    "[Errno",
    "No space left",
    "Input/output error",
    "Permission denied",
)
MAX_RECOVERY_RUNS = 8
# La caída sobre la que arranca la corrida nueva de un escenario: write_report ejecutada, sin anotación.
TORN = label(TOOL, len(SCRIPT))
# Sin hash al azar y sin .pyc (un caché vacío que no se llena: cada import lee su .py, haya escrito
# quien sea los __pycache__ del árbol): dos corridas iguales hacen las mismas llamadas al sistema, y la
# enésima llamada grabada es la misma enésima llamada de la corrida con la falla.
STABLE_ENV = {
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "fallas-sin-pyc"),
    "PYTHONUNBUFFERED": "1",
}


class Scenario(NamedTuple):
    """Desde dónde arranca la corrida que se estudia: ``setup`` es None (directorio vacío), «done»
    (una corrida terminada) o una etiqueta de caída; ``resume`` dice si la corrida estudiada es
    ``--resume`` o una nueva."""

    name: str
    setup: str | None
    resume: bool


def scenarios():
    """Los 15 escenarios: nueva, nueva sobre terminada, nueva sobre caída y --resume tras cada etiqueta."""
    return [
        Scenario("nueva", None, False),
        Scenario("nueva sobre una terminada", "done", False),
        Scenario(f"nueva sobre una caída en {TORN}", TORN, False),
        *(Scenario(f"--resume tras {crash}", crash, True) for crash in LABELS),
    ]


def run(workdir, agent, *, resume=False, crash_after=None, prefix=(), env=None):
    """Una corrida del agente en ``workdir`` (con ``prefix`` delante, p. ej. strace)."""
    args, full_env = agent_command(workdir, agent=agent, resume=resume, crash_after=crash_after)
    full_env.update(STABLE_ENV, **(env or {}))
    done = subprocess.run(
        [*prefix, *args], cwd=workdir, env=full_env, capture_output=True, text=True, timeout=120
    )
    return AgentRun(done.returncode, done.stdout, done.stderr)


def prepare(scenario, workdir, agent, env=None):
    """Deja ``workdir`` como lo encuentra la corrida estudiada del escenario."""
    if scenario.setup == "done":
        first = run(workdir, agent, env=env)
    elif scenario.setup:
        first = run(workdir, agent, crash_after=scenario.setup, env=env)
    else:
        return
    if first.returncode not in (EXIT_DONE, EXIT_KILLED):
        raise RuntimeError(f"no se pudo preparar «{scenario.name}»: {first.stderr.strip()}")


def expected_report(agent):
    """Los bytes de una sola copia del reporte, de una corrida sin fallas."""
    with tempfile.TemporaryDirectory(prefix="fallas-") as workdir:
        done = run(workdir, agent)
        if done.returncode != 0:
            raise RuntimeError(f"la corrida sin fallas falló: {done.stderr.strip()}")
        with open(os.path.join(workdir, REPORT_PATH), "rb") as f:
            return f.read()


def output_problems(result):
    """Lo que no debería verse en la salida de una corrida, falle o no: un texto que se escapó sin
    traducir, o un stderr fuera de su contrato (avisos cuando ocurren, y a lo sumo una línea final)."""
    leaked = [leak for leak in LEAKS if leak in result.stderr]
    problems = [f"se escapó «{leak}»: {result.stderr.strip()[-200:]}" for leak in leaked]
    return problems + [f"stderr: {p}: {result.stderr.strip()[-200:]}" for p in stderr_problems(result.stderr)]


def recover(workdir, agent, env=None):
    """Como una persona tras la falla: --resume si hay punto de control, si no una corrida nueva,
    hasta ``[done]``. Devuelve (texto final o None, problemas)."""
    problems = []
    for _ in range(MAX_RECOVERY_RUNS):
        cp, _, _ = load_files(workdir, agent)
        if cp and FINISHED in cp:  # terminada antes de la falla (o justo al guardarla): nada que retomar
            return cp[FINISHED], problems
        resume = os.path.lexists(os.path.join(workdir, CHECKPOINT_FILE))
        result = run(workdir, agent, resume=resume, env=env)
        problems += output_problems(result)
        final = done_text(result.stdout)
        if result.returncode == 0 and final is not None:
            return final, problems
        problems.append(f"la reanudación salió con {result.returncode}: {result.stderr.strip()[:200]}")
    return None, problems


def check_outcome(workdir, agent, expected, log, faulted=None):
    """Los problemas tras una falla (``faulted``: la corrida que la sufrió, si la hubo): archivos que
    no cargan, una reanudación que no termina, un reporte que no es exactamente una copia."""
    problems = output_problems(faulted) if faulted else []
    _, _, unloadable = load_files(workdir, agent)
    if unloadable:
        problems.append(f"archivos que no cargan: {unloadable}")
    final = done_text(faulted.stdout) if faulted and faulted.returncode == 0 else None
    if final is None:
        final, found = recover(workdir, agent, {MODEL_LOG_VAR: log})
        problems += found
    if final not in (FINAL_TEXT, VERIFIED_TEXT):
        problems.append(f"la tarea no terminó bien: {final!r}")
    path = os.path.join(workdir, REPORT_PATH)
    report = open(path, "rb").read() if os.path.isfile(path) else None
    if report != expected:
        copies = report.count(b"# Reporte de ventas") if report else 0
        problems.append(f"report.txt no es una copia exacta del reporte ({copies} títulos)")
    if os.path.exists(log):
        problems += log_problems(log)[0]
    return problems


# —— strace: grabar una corrida ——


def record(scenario, agent, workdir, log, trace=TRACED):
    """Graba con strace la corrida estudiada del escenario en ``workdir`` (ya preparado):
    (corrida, llamadas)."""
    prefix = strace_prefix(log, ["-e", f"trace={trace}"])
    result = run(workdir, agent, resume=scenario.resume, prefix=prefix)
    return result, parse_log(log)


def call_path(call, workdir):
    """La ruta (absoluta) que toca una llamada, o None: la del descriptor, o la del primer texto."""
    for arg in call.args:
        if isinstance(arg, tuple) and arg[0] != "AT_FDCWD":
            return arg[1]
        if isinstance(arg, bytes):
            return os.path.join(workdir, arg.decode("utf-8", "replace"))
    return None


def copy_dir(src, dst):
    """Copia el contenido de ``src`` en ``dst`` (que ya existe), enlaces incluidos, tal cual."""
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if os.path.islink(path):
            os.symlink(os.readlink(path), os.path.join(dst, name))
        else:
            shutil.copy2(path, os.path.join(dst, name))


# —— el barrido: una falla en la enésima llamada, para cada llamada que toca el directorio ——

INJECTED = ("openat", "write", "rename", "fsync", "unlink")
FAULTS = {"SIGKILL": "signal=KILL", "ENOSPC": "error=ENOSPC", "EIO": "error=EIO", "EACCES": "error=EACCES"}


class Trial(NamedTuple):
    """Una falla: en la ``when``-ésima llamada ``syscall`` del proceso, que tocaba ``target``."""

    scenario: Scenario
    syscall: str
    when: int
    target: str
    fault: str


def targets(calls, workdir):
    """(llamada, n, archivo) de cada llamada de INJECTED que toca el directorio de trabajo o la salida
    estándar; n cuenta esa llamada desde el arranque del proceso, como el ``when=`` de strace."""
    root, counts, found = os.path.realpath(workdir), {}, []
    for call in calls:
        counts[call.name] = counts.get(call.name, 0) + 1
        if call.name not in INJECTED:
            continue
        if call.name == "write" and call.args[0][0] == "1":
            found.append((call.name, counts[call.name], "stdout"))
            continue
        path = call_path(call, root)
        if path and (path == root or os.path.dirname(path) == root):
            found.append((call.name, counts[call.name], os.path.relpath(path, root)))
    return found


def plan(scenario, template, agent, faults=tuple(FAULTS)):
    """Las fallas de un escenario: una por cada llamada que toca el directorio y cada tipo de falla."""
    with tempfile.TemporaryDirectory(prefix="fallas-") as base:
        workdir = os.path.join(base, "trabajo")
        os.mkdir(workdir)
        copy_dir(template, workdir)
        _, calls = record(scenario, agent, workdir, os.path.join(base, "grabado.strace"))
        found = targets(calls, workdir)
    return [Trial(scenario, name, n, target, f) for name, n, target in found for f in faults]


def run_trial(trial, template, agent, expected):
    """Aplica una falla y revisa lo que deja: la lista de problemas (vacía si todo bien)."""
    with tempfile.TemporaryDirectory(prefix="falla-") as base:
        workdir = os.path.join(base, "trabajo")
        os.mkdir(workdir)
        copy_dir(template, workdir)
        log = os.path.join(base, "falla.strace")
        inject = f"inject={trial.syscall}:{FAULTS[trial.fault]}:when={trial.when}"
        prefix = strace_prefix(log, ["-e", f"trace={trial.syscall}", "-e", inject])
        faulted = run(workdir, agent, resume=trial.scenario.resume, prefix=prefix)
        landed = trial.target if trial.fault == "SIGKILL" else injected_target(log, workdir)
        problems = [] if landed == trial.target else [f"la falla cayó en {landed}, no en {trial.target}"]
        return problems + check_outcome(workdir, agent, expected, os.path.join(base, "modelo.jsonl"), faulted)


def injected_target(log, workdir):
    """El archivo de la llamada que strace falló (un SIGKILL mata antes de que strace la anote)."""
    hit = [c for c in parse_log(log) if c.injected]
    if not hit:
        return None
    if hit[0].name == "write" and hit[0].args[0][0] == "1":
        return "stdout"
    root = os.path.realpath(workdir)
    return os.path.relpath(call_path(hit[0], root) or "?", root)


def templates(base, agent, chosen=None):
    """{escenario: directorio preparado} dentro de ``base``."""
    found = {}
    for i, scenario in enumerate(chosen or scenarios()):
        path = os.path.join(base, f"escenario-{i:02d}")
        os.mkdir(path)
        prepare(scenario, path, agent)
        found[scenario] = path
    return found

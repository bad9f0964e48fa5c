"""Una señal antes de cada llamada al sistema de una corrida: ninguna corrida muere en silencio.

strace graba todas las llamadas de una corrida del agente; después, para cada llamada desde que la
sesión instala sus manejadores (el primer ``rt_sigaction`` de la señal con un manejador de Python)
hasta la salida del proceso, una corrida nueva recibe la señal justo antes de esa llamada
(``inject=LLAMADA:signal=TERM:when=N``: un punto elegido por un evento, no por el reloj). Cada corrida
señalada tiene que terminar con su código y una línea (``Interrumpido con SIGTERM…``, 143), o con su
propia última línea si ya había terminado (``[done] …``); nunca una traza ni una muerte sin línea.

Antes de ese ``rt_sigaction`` corre el arranque de Python y los imports del agente: ahí la señal tiene
el efecto de siempre del sistema (el proceso muere con 128 + n y nada de Python corre todavía); el
barrido cuenta esas llamadas y las informa aparte.

Lo usan ``benchmarks/signal_sweep.py`` (el barrido completo) y ``tests/test_signal_sweep.py`` (una
muestra).
"""

import os
import re
import subprocess
import tempfile
from typing import NamedTuple

from harness.contract import EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_TERMINATED, done_text, parse_line
from harness.runs.launcher import agent_command
from harness.runs.strace_log import STRACE
from maintainer.faults import LEAKS, STABLE_ENV, copy_dir, prepare, scenarios

# La señal, cómo la nombra strace, su código de salida y cómo la nombra la línea del agente.
SIGNALS = {
    "SIGTERM": ("TERM", EXIT_TERMINATED, "con SIGTERM"),
    "SIGHUP": ("HUP", EXIT_HANGUP, "con SIGHUP"),
    "SIGINT": ("INT", EXIT_INTERRUPTED, "con Ctrl-C"),
}
CALL = re.compile(r"^(\w+)\((.*)$")
# El rt_sigaction que instala un manejador (no SIG_DFL ni SIG_IGN) para la señal; el de SIGTERM marca
# el comienzo de la sesión (Python pone el suyo de SIGINT al arrancar; el de SIGTERM, solo la sesión).
HANDLER = re.compile(r"^rt_sigaction\((SIG\w+), \{sa_handler=0x")
MARK = "SIGTERM"


class Point(NamedTuple):
    """Dónde cae la señal: antes de la ``when``-ésima llamada ``syscall`` (la ``index``-ésima en total)."""

    index: int
    syscall: str
    when: int


def _run(workdir, agent, resume, prefix):
    args, env = agent_command(workdir, agent=agent, resume=resume)
    env.update(STABLE_ENV)
    done = subprocess.run(
        [*prefix, *args], cwd=workdir, env=env, capture_output=True, text=True, encoding="utf-8", timeout=120
    )
    return done.returncode, done.stdout, done.stderr


def kill_points(template, agent, resume):
    """(llamadas antes del manejador, puntos desde él hasta la salida) de una corrida grabada."""
    with tempfile.TemporaryDirectory(prefix="senales-") as base:
        workdir = os.path.join(base, "trabajo")
        os.mkdir(workdir)
        copy_dir(template, workdir)
        log = os.path.join(base, "grabado.strace")
        _run(workdir, agent, resume, [STRACE, "-qq", "-o", log])
        with open(log, encoding="ascii", errors="replace") as f:
            lines = [line.strip() for line in f]
    counts, points, before = {}, [], None
    for line in lines:
        m = CALL.match(line)
        if not m:
            continue
        name = m.group(1)
        counts[name] = counts.get(name, 0) + 1
        if before is None:
            handler = HANDLER.match(line)
            if handler and handler.group(1) == MARK:
                before = sum(counts.values())  # desde la llamada siguiente, la sesión atiende la señal
            continue
        points.append(Point(before + len(points) + 1, name, counts[name]))
    if before is None:
        raise RuntimeError(f"la corrida nunca instaló un manejador de {MARK}")
    return before, points


def signalled(template, agent, resume, point, signame="SIGTERM", path=None):
    """La corrida que recibe ``signame`` antes de ``point``: (código, stdout, stderr). Con ``path``, solo
    cuentan las llamadas sobre ese archivo (``strace -P``), relativo al directorio de trabajo."""
    with tempfile.TemporaryDirectory(prefix="senal-") as base:
        workdir = os.path.join(base, "trabajo")
        os.mkdir(workdir)
        copy_dir(template, workdir)
        inject = f"inject={point.syscall}:signal={SIGNALS[signame][0]}:when={point.when}"
        prefix = [STRACE, "-qq", "-o", os.devnull, "-e", f"trace={point.syscall}", "-e", inject]
        prefix += ["-P", os.path.join(workdir, path)] if path else []
        return _run(workdir, agent, resume, prefix)


def problems(result, signame="SIGTERM"):
    """Lo que no cumple: la corrida termina con su código y una línea, o con su propia última línea."""
    code, out, err = result
    _, exit_code, how = SIGNALS[signame]
    found = [f"se escapó «{leak}»" for leak in LEAKS if leak in err]
    last = parse_line(out.splitlines()[-1]) if out.strip() else None
    finished = done_text(out) is not None or (last is not None and last.kind == "kill")
    if code == exit_code:
        lines = err.splitlines()
        if not lines or not lines[-1].startswith(f"Interrumpido {how}"):
            found.append(f"salió con {code} sin su línea: {err.strip()[-200:]!r}")
    elif code == 0:
        if done_text(out) is None:
            found.append("salió con 0 sin [done]")
    elif code < 0:  # muerto por la señal, sin que Python la atendiera
        if not finished:
            found.append(f"murió por la señal ({code}) sin ninguna línea")
    else:
        found.append(f"salió con {code}: {err.strip()[-200:]!r}")
    return found


def scenario_named(name):
    return next(s for s in scenarios() if s.name == name)


def template_for(base, scenario, agent):
    """Un directorio preparado como lo encuentra la corrida estudiada."""
    path = os.path.join(base, "plantilla")
    os.mkdir(path)
    prepare(scenario, path, agent)
    return path

"""Correr el agente que se juzga, siempre en un proceso nuevo: entero (``run``, como en la terminal) o
una de sus funciones (``call``, con ``harness.conformidad.driver``). Ninguna corrida se importa aquí."""

import json
import os
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from typing import NamedTuple

from harness.contract import NOT_WRITTEN
from harness.runner import AgentRun, agent_command, run_agent_process

TIMEOUT = 60  # una red de seguridad, no una medida: una corrida sana tarda décimas de segundo
_MISSING = re.compile(re.escape(NOT_WRITTEN) + r" (\S+)")


class Context(NamedTuple):
    """El agente que se juzga, su entorno extra y si pide varias llamadas por turno."""

    agent: str
    env: dict
    several_calls: bool = False


@contextmanager
def scratch():
    """Una carpeta de trabajo nueva, que se borra al terminar."""
    with tempfile.TemporaryDirectory(prefix="conformidad-") as path:
        yield path


def run(ctx, workdir, **options):
    """El agente en ``workdir`` (``resume``, ``crash_after``, ``variant``); si no termina, código -1."""
    try:
        return run_agent_process(workdir, agent=ctx.agent, env=ctx.env, timeout=TIMEOUT, **options)
    except subprocess.TimeoutExpired:
        return AgentRun(-1, "", f"no terminó en {TIMEOUT} s (¿un bucle, o espera algo?)")


def _finished(command, workdir, env):
    """La corrida de ``command`` en ``workdir`` hasta que termina; si no termina, código -1."""
    try:
        done = subprocess.run(
            command, cwd=workdir, env=env, capture_output=True, text=True, encoding="utf-8", timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired:
        return AgentRun(-1, "", f"no terminó en {TIMEOUT} s")
    return AgentRun(done.returncode, done.stdout, done.stderr)


def run_prefixed(ctx, workdir, prefix, **options):
    """El agente (como ``run``) detrás de un comando como ``strace …``: para provocar una falla de E/S."""
    command, env = agent_command(workdir, agent=ctx.agent, env=ctx.env, **options)
    return _finished([*prefix, *command], workdir, env)


def run_args(ctx, workdir, *args):
    """El agente con estos argumentos tal cual (para probar los que no valen)."""
    command, env = agent_command(workdir, agent=ctx.agent, env=ctx.env)
    return _finished([*command, *args], workdir, env)


def missing(text):
    """La pieza que el agente dice que todavía no está escrita, o None."""
    found = _MISSING.search(text or "")
    return found and found[1].rstrip(".:,;")


def call(ctx, workdir, function, *args):
    """``function(*args)`` del agente, en un proceso nuevo dentro de ``workdir``: {"value": …} o
    {"error": tipo, "message": texto}; un proceso que muere o no contesta es un error también."""
    spec = json.dumps({"agent": os.path.abspath(ctx.agent), "function": function, "args": list(args)})
    env = {**os.environ, **ctx.env, "PYTHONIOENCODING": "utf-8"}
    done = _finished([sys.executable, "-m", "harness.conformidad.driver", spec], workdir, env)
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        last = (done.stderr.strip().splitlines() or ["sin salida"])[-1]
        return {"error": "Proceso", "message": f"el proceso terminó con código {done.returncode}: {last}"}

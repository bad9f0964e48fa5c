"""Lanzar un agente en un proceso aparte, como lo haría una persona en la terminal.

Lo usan el laboratorio de caídas, las pruebas ocultas de los ejercicios y las pruebas del curso:
cada corrida es un proceso nuevo que solo tiene el disco, y una caída termina ese proceso de verdad.
"""

import importlib.util
import os
import signal
import subprocess
import sys
from typing import NamedTuple

from harness.contract import EXIT_KILLED, reconcile_branch


def load_agent(path, name="agente"):
    """Un ``agent.py`` como módulo (sin correr su ``main``): quien necesita sus cargadores o su
    registro usa las funciones del agente mismo en vez de copiarlas."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class AgentRun(NamedTuple):
    """Lo que dejó una corrida: código de salida y lo que imprimió."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def killed(self):
        return self.returncode == EXIT_KILLED

    @property
    def branch(self):
        """La rama de reconcile que tomó esta reanudación: hit, rerun, is_error, «none» si no había
        llamada colgante, o None si no fue una reanudación que leyó un punto de control."""
        return reconcile_branch(self.stdout)


def agent_command(
    workdir, *, agent=None, resume=False, crash_after=None, variant=None, env=None, live=False, command=None
):
    """(argumentos, entorno) de ``python agent.py [--resume] [--live]`` para ``workdir``; con ``command``
    (una lista, como ``["node", "agent.js"]``), ese comando en lugar de ``python agent.py``, con el
    mismo contrato: AGENT_WORKDIR, CRASH_AFTER, AGENT_VARIANT y los mismos argumentos.

    Las rutas se vuelven absolutas: el proceso arranca dentro de ``workdir``, y una ruta relativa
    al directorio de quien llama (el del notebook, por ejemplo) ya no apuntaría al mismo lugar."""
    workdir = os.path.abspath(workdir)
    full_env = {k: v for k, v in os.environ.items() if k not in ("CRASH_AFTER", "AGENT_VARIANT")}
    full_env.update(env or {}, AGENT_WORKDIR=os.fspath(workdir), PYTHONIOENCODING="utf-8")
    if crash_after:
        full_env["CRASH_AFTER"] = crash_after
    if variant:
        full_env["AGENT_VARIANT"] = variant
    flags = (["--resume"] if resume else []) + (["--live"] if live else [])
    program = list(command) if command else [sys.executable, os.path.abspath(agent)]
    return [*program, *flags], full_env


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
):
    """Corre ``python agent.py [--resume] [--live]`` en ``workdir`` y espera a que termine (o muera)."""
    args, full_env = agent_command(
        workdir, resume=resume, crash_after=crash_after, variant=variant, agent=agent, env=env, live=live
    )
    done = subprocess.run(
        args, cwd=workdir, env=full_env, capture_output=True, text=True, encoding="utf-8", timeout=timeout
    )
    return AgentRun(done.returncode, done.stdout, done.stderr)


def start_agent_process(workdir, *, agent, resume=False, env=None, prefix=(), live=False):
    """Arranca el agente sin esperarlo (para matarlo con una señal real); ``prefix`` antepone un
    comando como ``setpriv …``. Sin búfer en stdout: lo impreso antes de un SIGKILL no se pierde."""
    args, full_env = agent_command(
        workdir, agent=agent, resume=resume, env={**(env or {}), "PYTHONUNBUFFERED": "1"}, live=live
    )
    return subprocess.Popen(
        [*prefix, *args],
        cwd=workdir,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        preexec_fn=default_signals if os.name == "posix" else None,
    )


def default_signals():
    """En el hijo, antes del exec: Ctrl-C, SIGTERM y SIGHUP con su efecto de siempre. Un proceso lanzado
    en segundo plano por una shell hereda SIGINT ignorado, y un agente que lo hereda no se detendría
    con la señal que se le manda a propósito."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)

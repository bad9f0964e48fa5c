"""Procesos de verdad que mueren con SIGKILL en un momento exacto de un guardado o del registro: cada uno
avisa que llegó y recién entonces se lo mata (un evento, no un tiempo)."""

import json
import subprocess
import sys

from harness.errors import HarnessError

SAVE_PAUSED = "temporal escrito; el rename todavía no"
_KILL_DURING_SAVE = f"""
import json, os, signal, sys
from harness.runs.launcher import load_agent
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
    las dos. Devuelve la corrida de ``harness.runs.kill_at_moment``."""
    from harness.notebook.exercise_feedback import BETWEEN, cell_source
    from harness.runs.kill_at_moment import run_and_kill

    return run_and_kill(
        workdir, agent=agent, stop_at=BETWEEN, function=fn.__name__, source=cell_source(fn), content=[call]
    )

"""Procesos de verdad que mueren con SIGKILL en un momento exacto de un guardado o del registro: cada uno
avisa que llegó y recién entonces se lo mata (un evento, no un tiempo).

    python -m harness.runs.kill_scripts AGENTE CHECKPOINT_JSON   # el proceso de ``kill_during_save``
"""

import json
import os
import signal
import sys

from harness.errors import HarnessError
from harness.runs.launcher import load_agent, start

SAVE_PAUSED = "temporal escrito; el rename todavía no"


def kill_during_save(workdir, agent, cp):
    """Un proceso nuevo guarda ``cp`` con el ``save_checkpoint`` de ``agent`` y muere con SIGKILL a mitad
    del guardado: el temporal escrito, el rename sin hacer. Se lo mata cuando avisa que llegó ahí (un
    evento, no un tiempo). Devuelve su código de salida (-9: SIGKILL)."""
    args = [sys.executable, "-m", "harness.runs.kill_scripts", str(agent), json.dumps(cp)]
    proc = start(args, cwd=workdir, new_session=False, stderr=None)
    try:
        arrived = proc.stdout.readline().strip() == SAVE_PAUSED
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
    if not arrived:
        raise HarnessError("el proceso terminó antes de llegar al rename: ¿save_checkpoint usa os.replace?")
    return proc.returncode


def pause_before_rename(agent_path, cp):
    """En el proceso de ``kill_during_save``: guarda ``cp`` con el agente de ``agent_path`` y, con el
    temporal ya entero, avisa ``SAVE_PAUSED`` y se queda quieto justo antes del rename (hasta el SIGKILL)."""
    agent = load_agent(agent_path)

    def replace(src, dst):
        print(SAVE_PAUSED, flush=True)
        signal.pause()

    os.replace = replace
    agent.save_checkpoint(cp)


def kill_between_record_and_tool(workdir, agent, fn, call):
    """``fn(content)`` (una función de una celda que solo la define) en un proceso nuevo, con el registro
    del agente, muerto con SIGKILL entre la anotación y la herramienta: en cuanto ocurre la primera de
    las dos. Devuelve la corrida de ``harness.runs.kill_at_moment``."""
    from harness.notebook.exercise_feedback import BETWEEN, cell_source
    from harness.runs.kill_at_moment import run_and_kill

    return run_and_kill(
        workdir, agent=agent, stop_at=BETWEEN, function=fn.__name__, source=cell_source(fn), content=[call]
    )


if __name__ == "__main__":
    pause_before_rename(sys.argv[1], json.loads(sys.argv[2]))

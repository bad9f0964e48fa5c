"""Un momento de la familia, corrido de verdad: muere en su etiqueta, se lee el disco, ``--resume``.

Lo usan la Práctica (con tu agente de la lección) y quien califica el Nivel 1 (que mide así la verdad
de cada momento): las siete claves de una predicción salen siempre de esta misma lectura.
"""

import functools
import os
from typing import NamedTuple

from harness.contract import BRANCH_WORDS, reconcile_branch
from harness.defenses.durable import read_present
from harness.errors import HarnessError
from harness.notebook.disk_state import last_tool_results, read_disk_state
from harness.notebook.exercise_feedback import NOT_RESUMED
from harness.notebook.moments import NOTICE_TEXT, NOTICES_PATH
from harness.runs.launcher import run_agent_process
from harness.tools import REPORT_PATH, report_copies


class Observation(NamedTuple):
    """Lo que dejó el momento: las siete claves medidas, el disco justo tras la caída y la reanudación."""

    keys: dict
    crashed_state: object
    resumed: object


def branch(stdout):
    """La rama de --resume en las palabras de su línea de log; «no reanudó» si no leyó el estado guardado."""
    found = reconcile_branch(stdout)
    return BRANCH_WORDS[found] if found else NOT_RESUMED


def notices(workdir):
    """Cuántos avisos hay en ``avisos.txt`` (0 si no existe)."""
    data = read_present(os.path.join(workdir, NOTICES_PATH))
    return 0 if data is None else data.decode("utf-8").count(NOTICE_TEXT)


def observe(workdir, agent, moment, env=None):
    """Corre ``agent`` en ``workdir`` (vacía) hasta la etiqueta de ``moment``, lee el disco y reanuda."""
    run = functools.partial(run_agent_process, workdir, agent=agent, env=env)
    crashed = run(crash_after=moment.label)
    if not crashed.killed:
        said = (crashed.stderr.strip().splitlines() or ["sin mensaje"])[-1]
        raise HarnessError(f"el agente de {moment.id} no murió en {moment.label}: {said}")
    state = read_disk_state(workdir)
    resumed = run(resume=True)
    messages = state.checkpoint["messages"] if isinstance(state.checkpoint, dict) else []
    keys = {
        "pending_tool_use": state.pending["name"] if state.pending else None,
        "tool_result_in_messages": moment.tool_use_id in last_tool_results(messages),
        "ledger_has_entry": moment.tool_use_id in state.entries,
        "reconcile_branch": branch(resumed.stdout),
        "resume_finishes": resumed.returncode == 0,
        "report_copies_after_resume": report_copies(os.path.join(workdir, REPORT_PATH)),
        "notices_after_resume": notices(workdir),
    }
    return Observation(keys, state, resumed)

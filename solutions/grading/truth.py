"""Nivel 1, medido: lo que de verdad queda en disco en cada momento de los escenarios del nivel.

La verdad no se escribe a mano: se mide matando al agente del escenario (``escenarios``: el de la
lección con el cambio que el ejercicio describe en prosa), en un proceso nuevo con ``CRASH_AFTER``,
leyendo el disco y reanudando. Se mide una vez por proceso de calificación y se guarda en memoria.
"""

import functools
import json
import os
import tempfile

from harness.contract import BRANCH_WORDS, reconcile_branch
from harness.notebook.disk_state import last_tool_results, read_disk_state
from harness.notebook.exercise_feedback import FIELDS, NOT_RESUMED
from harness.runs.launcher import run_agent_process
from harness.tools import REPORT_PATH, report_copies
from solutions.grading import escenarios
from solutions.grading.paths import ROOT

# momento: (el cambio del escenario al agente, CRASH_AFTER, el tool_use_id de la llamada de ese turno).
# Los tres con la tarea de dos efectos (``notify_team`` en el turno 4), que el curso no corre.
MOMENTS = {
    1: (escenarios.LATE_A, "after-tool:3", "toolu_03"),
    2: (None, "after-tool:4", "toolu_04"),
    3: (escenarios.ONLY_B, "after-effect-write:4", "toolu_04"),
}
# Lo que se predice de cada momento: las claves que el ejercicio nombra.
OBSERVED_FIELDS = tuple(FIELDS)
# Una clase en paralelo mide una vez: grade_class guarda la medición en este archivo para cada proceso.
TRUTH_FILE_ENV = "LESSON6_TRUTH"
# El agente del escenario importa este paquete: se corre con el repositorio a la vista.
SCENARIO_ENV = {"PYTHONPATH": ROOT}


def branch(stdout):
    """La rama de --resume en las palabras de su línea de log; «no reanudó» si no leyó la escena."""
    found = reconcile_branch(stdout)
    return BRANCH_WORDS[found] if found else NOT_RESUMED


def observe(root, n):
    change, label, tool_use_id = MOMENTS[n]
    workdir = os.path.join(root, "trabajo")
    os.makedirs(workdir)
    agent = escenarios.build(root, change)
    run = functools.partial(run_agent_process, workdir, agent=agent, env=SCENARIO_ENV)
    crashed = run(crash_after=label)
    if not crashed.killed:
        raise RuntimeError(f"el agente del escenario no murió en {label}: {crashed.stderr.strip()}")
    state = read_disk_state(workdir)
    resumed = run(resume=True)
    return {
        "pending_tool_use": state.pending["name"] if state.pending else None,
        "tool_result_in_messages": tool_use_id in last_tool_results(state.checkpoint["messages"]),
        "ledger_has_entry": tool_use_id in state.entries,
        "reconcile_branch": branch(resumed.stdout),
        "resume_finishes": resumed.returncode == 0,
        "report_copies_after_resume": report_copies(os.path.join(workdir, REPORT_PATH)),
        "notices_after_resume": escenarios.notices(workdir),
    }


@functools.lru_cache(maxsize=1)
def measured():
    """{«momento_n»: lo observado tras la caída y la reanudación del momento n}."""
    if os.environ.get(TRUTH_FILE_ENV):
        with open(os.environ[TRUTH_FILE_ENV], encoding="utf-8") as f:
            return json.load(f)
    with tempfile.TemporaryDirectory() as root:
        return {f"momento_{n}": observe(_fresh(root, f"m{n}"), n) for n in MOMENTS}


def _fresh(root, name):
    path = os.path.join(root, name)
    os.makedirs(path)
    return path

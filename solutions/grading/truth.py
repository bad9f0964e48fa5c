"""Nivel 1, medido: lo que de verdad queda en disco en cada momento, con el agente de referencia.

La verdad no se escribe a mano: se mide matando al agente (un proceso nuevo, ``CRASH_AFTER``),
leyendo el disco y reanudando. Se mide una vez por proceso de calificación y se guarda en memoria.
"""

import functools
import json
import os
import tempfile

from harness.contract import BRANCH_WORDS, NO_PENDING, reconcile_branch
from harness.disk_state import last_tool_results, read_disk_state
from harness.runner import run_agent_process
from harness.tools import report_copies
from solutions.grading.paths import REFERENCE_AGENT

# momento: (AGENT_VARIANT, CRASH_AFTER, el tool_use_id de la llamada de ese turno). La lección no los
# tabula: un turno de solo lectura (2) y la variante sin punto A.
MOMENTS = {
    1: ("dos-puntos", "after-tool:2", "toolu_02"),
    2: ("solo-b", "after-tool:3", "toolu_03"),
    3: ("dos-puntos", "after-effect-write:2", "toolu_02"),
}
# ① y ② de la lección: el turno 3, el de write_report.
LESSON_1_AND_2 = ("after-save-a:3", "after-tool:3")
# Lo que se predice de cada momento, y los archivos de «① y ②, archivo por archivo».
OBSERVED_FIELDS = (
    "pending_tool_use",
    "tool_result_in_messages",
    "ledger_has_entry",
    "reconcile_branch",
    "report_exists_after_crash",
    "report_copies_after_resume",
)
COMPARED_FILES = ("checkpoint.json", "effects.json", "report.txt")
# Una clase en paralelo mide una vez: grade_class guarda la medición en este archivo para cada proceso.
TRUTH_FILE_ENV = "LECCION6_VERDAD"


def crash(workdir, label, variant="dos-puntos"):
    run = run_agent_process(workdir, agent=REFERENCE_AGENT, crash_after=label, variant=variant)
    if not run.killed:
        raise RuntimeError(f"el agente de referencia no murió en {label}: {run.stderr.strip()}")
    return read_disk_state(workdir)


def branch(stdout):
    """La rama de --resume en las palabras de su línea de log."""
    return BRANCH_WORDS[reconcile_branch(stdout) or NO_PENDING]


def observe(workdir, n):
    variant, label, tool_use_id = MOMENTS[n]
    state = crash(workdir, label, variant)
    resumed = run_agent_process(workdir, agent=REFERENCE_AGENT, resume=True, variant=variant)
    return {
        "pending_tool_use": state.pending["name"] if state.pending else None,
        "tool_result_in_messages": tool_use_id in last_tool_results(state.checkpoint["messages"]),
        "ledger_has_entry": tool_use_id in state.entries,
        "reconcile_branch": branch(resumed.stdout),
        "report_exists_after_crash": state.report_copies > 0,
        "report_copies_after_resume": report_copies(os.path.join(workdir, "report.txt")),
    }


def files_after(workdir, label):
    """Los tres archivos tras morir en ``label``, sin la marca de tiempo ``at`` del registro."""
    state = crash(workdir, label)
    ledger = {tid: {k: v for k, v in e.items() if k != "at"} for tid, e in state.entries.items()}
    with open(os.path.join(workdir, "report.txt"), "a+", encoding="utf-8") as f:
        f.seek(0)
        report = f.read()
    return {"checkpoint.json": state.checkpoint, "effects.json": ledger, "report.txt": report}


@functools.lru_cache(maxsize=1)
def measured():
    """{«momento_n»: lo observado, «same_after_1_and_2»: {archivo: ¿igual tras ① y ②?}}."""
    if os.environ.get(TRUTH_FILE_ENV):
        with open(os.environ[TRUTH_FILE_ENV], encoding="utf-8") as f:
            return json.load(f)
    with tempfile.TemporaryDirectory() as root:
        truth = {f"momento_{n}": observe(_fresh(root, f"m{n}"), n) for n in MOMENTS}
        first, second = (
            files_after(_fresh(root, label.replace(":", "_")), label) for label in LESSON_1_AND_2
        )
    truth["same_after_1_and_2"] = {name: first[name] == second[name] for name in first}
    return truth


def _fresh(root, name):
    path = os.path.join(root, name)
    os.makedirs(path)
    return path

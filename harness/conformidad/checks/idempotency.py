"""clave: con AGENT_VARIANT=idempotente, write_report escribe con el tool_use_id como clave, y
reconcile la puede volver a ejecutar sin duplicar el reporte (si le pasa la clave)."""

from harness.contract import (
    BRANCH_WORDS,
    EXIT_DONE,
    KEYED_REASON,
    RERUN,
    VARIANT_VAR,
    done_text,
    parse_log,
    reconcile_line,
)
from harness.notebook.disk_state import read_disk_state
from harness.scenario import FINAL_TEXT, TOOL, TURNS, label

from ..processes import run, scratch
from ..rows import judged
from .common import crash_first
from .diagnosis import ended

PIECE, TITLE = "clave", "la clave de idempotencia en reconcile"
KEYED = f"{VARIANT_VAR}=idempotente"
TORN = label(TOOL, len(TURNS))  # write_report ejecutada, sin anotación
SECTION = "La clave de idempotencia, una opción"
CHECKS = (
    f"{KEYED}, caída en {TORN} (el reporte ya escrito, sin anotación) y --resume: rama «{BRANCH_WORDS[RERUN]}» por «{KEYED_REASON}»",
    "una sola copia del reporte: la re-ejecución usa la misma clave (el tool_use_id)",
)


def keyed_rerun(ctx):
    scenario = f"{KEYED}, caída en {TORN} y --resume"
    expected = f"rama «{BRANCH_WORDS[RERUN]}» (con clave), [done], 1 copia del reporte"
    with scratch() as w:
        crashed, failed = crash_first(ctx, w, TORN, scenario, expected, SECTION, variant="idempotente")
        if failed:
            return failed
        resumed = run(ctx, w, resume=True, variant="idempotente")
        state = read_disk_state(w)
    reasons = [p.reason for p in parse_log(resumed.stdout) if p.kind == "reconcile"]
    problem = None
    if resumed.returncode != EXIT_DONE or done_text(resumed.stdout) != FINAL_TEXT:
        problem = (
            f"--resume: {ended(resumed)}",
            "con la clave, reconcile vuelve a ejecutar write_report y la tarea termina como siempre",
        )
    elif resumed.branch != RERUN or reasons != [KEYED_REASON]:
        problem = (
            f"rama {resumed.branch}, motivo {reasons}",
            f"con escritura idempotente, una llamada sin anotación se vuelve a ejecutar: «{reconcile_line(TURNS[3].id, TURNS[3].name, RERUN, KEYED_REASON)}»",
        )
    elif state.report_copies != 1:
        problem = (
            f"{state.report_copies} copias del reporte",
            "reconcile volvió a ejecutar write_report sin la clave: pásale el tool_use_id de la llamada colgante como clave, como en run_tool_uses",
        )
    got, hint = problem or ("rama con clave, [done], 1 copia", "")
    return judged(scenario, expected, got, problem is None, hint, resumed.stderr, SECTION)


ROWS = (keyed_rerun,)

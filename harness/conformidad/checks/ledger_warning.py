"""aviso: si la escritura del registro falla, la herramienta ya corrió: el agente lo avisa en stderr
enseguida («[falló la escritura del registro] …»), sigue sin mentirle al modelo con is_error, y el aviso
está aunque el proceso muera después."""

from harness.contract import EFFECTS_FILE, TMP_SUFFIX
from harness.notebook.disk_state import read_disk_state
from harness.protocol import blocks_of
from harness.scenario import SAVE_B, TURNS

from ..processes import run_prefixed, scratch
from ..rows import judged, unchecked
from .common import checkpoint_of, died_at
from .diagnosis import crash_hint, ended
from .faults import failing, strace_missing, without_strace

PIECE, TITLE = "aviso", "run_tool_uses: el aviso cuando no se puede escribir el registro"
CHECKS = (
    f"con cada escritura de {EFFECTS_FILE} fallando (disco lleno), una línea «[falló la escritura del registro] tool_use_id=…» por llamada, en stderr, aunque el proceso muera después (caída en after-save-b:3)",
    "las herramientas siguen: sus tool_result sin is_error, el reporte escrito una vez",
)


def warning_line(tool_use_id):
    return (
        f"[falló la escritura del registro] tool_use_id={tool_use_id}: el efecto secundario ya ocurrió, "
        "riesgo de ejecución duplicada al reanudar, por favor revisa a mano"
    )


def failed_ledger_writes(ctx):
    scenario = f"cada escritura de {EFFECTS_FILE} falla (disco lleno), y el agente muere en after-save-b:3"
    expected = "137; en stderr, un aviso «[falló la escritura del registro] …» por cada llamada; sin is_error"
    why = strace_missing()
    if why:
        return unchecked(scenario, expected, why)
    label = f"{SAVE_B}:{len(TURNS)}"
    with scratch() as w:
        done = without_strace(
            run_prefixed(ctx, w, failing(EFFECTS_FILE + TMP_SUFFIX, "ENOSPC"), crash_after=label)
        )
        state = read_disk_state(w)
    lines = done.stderr.splitlines()
    missing_warnings = [
        c.id for c in TURNS.values() if not any(line.endswith(warning_line(c.id)) for line in lines)
    ]
    errors = [
        r for r in blocks_of(checkpoint_of(state).get("messages") or [], "tool_result") if r.get("is_error")
    ]
    problem = None
    if not died_at(done, label):
        problem = (f"no murió en {label}: {ended(done)}", _stopped_hint(done, label))
    elif missing_warnings:
        problem = (
            f"sin aviso de {', '.join(missing_warnings)} en stderr",
            "cuando save_effect falla, imprime en stderr, en ese momento, «[falló la escritura del registro] tool_use_id=…: …» (la línea de la lección): si el proceso muere después, el aviso ya salió",
        )
    elif errors:
        problem = (
            "un tool_result con is_error",
            "la herramienta sí corrió: su resultado va al modelo sin is_error (si no, la reintentaría y duplicaría el efecto)",
        )
    elif state.report_copies != 1:
        problem = (f"{state.report_copies} copias del reporte", "el reporte se escribe una vez")
    got, hint = problem or ("137, un aviso por llamada, ningún is_error", "")
    return judged(scenario, expected, got, problem is None, hint, done.stderr)


def _stopped_hint(done, label):
    """Por qué la corrida se detuvo con el registro fallando: el error del disco sin atrapar, otra traza,
    o una salida propia."""
    if "Traceback" not in done.stderr:
        return "un registro que no se puede escribir no detiene la tarea: se avisa y se sigue"
    if "No space left on device" in done.stderr:
        return (
            "el error de disco de save_effect (OSError) llegó hasta arriba y detuvo la tarea: atrápalo alrededor "
            "de save_effect en run_tool_uses, avisa en stderr y sigue con el resultado real"
        )
    return crash_hint(done, label)


ROWS = (failed_ledger_writes,)

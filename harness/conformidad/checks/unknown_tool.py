"""herramienta-desconocida: un punto de control cuya llamada colgante nombra una herramienta que no
existe se rechaza al reanudar con una línea, sin ejecutar nada ni tocar el disco; y una llamada así a
mitad de una corrida no queda colgante: se responde con is_error y la tarea sigue."""

import json
from dataclasses import replace

from harness.contract import (
    CHECKPOINT_FILE,
    DETOUR_UNKNOWN_TOOL,
    DETOUR_VAR,
    EFFECTS_FILE,
    EXIT_DONE,
    EXIT_FAILED,
    UNKNOWN_TOOL,
    done_text,
)
from harness.notebook.disk_state import read_disk_state
from harness.protocol import blocks_of
from harness.scenario import FINAL_TEXT, SAVE_A, call_id

from ..processes import run, scratch
from ..rows import judged
from .common import checkpoint_of, checkpoint_path, crash_first, write
from .diagnosis import ended

PIECE, TITLE = "herramienta-desconocida", "una herramienta que no existe"
SECTION = "Dos tool_use en un turno"  # la sección de checked_turn, que también cuida esto
CHECKS = (
    "pendingToolUse con name=borrar_todo: --resume termina con código 1 y una línea, y el punto de control queda como estaba",
    "el modelo pide borrar_todo a mitad de una corrida: no queda colgante en el punto A, recibe is_error, no se anota, y la tarea termina (también tras una caída y un --resume)",
)


def unknown_pending(ctx):
    label = f"{SAVE_A}:1"
    scenario = f"--resume con pendingToolUse de una herramienta que no existe ({UNKNOWN_TOOL})"
    expected = f"código 1, una línea en stderr, {CHECKPOINT_FILE} sin cambios"
    with scratch() as w:
        crashed, failed = crash_first(ctx, w, label, scenario, expected, SECTION)
        if failed:
            return failed
        cp = checkpoint_of(read_disk_state(w))
        cp["pendingToolUse"]["name"] = UNKNOWN_TOOL
        text = json.dumps(cp, ensure_ascii=False)
        write(checkpoint_path(w), text)
        resumed = run(ctx, w, resume=True)
        with open(checkpoint_path(w), encoding="utf-8") as f:
            same = f.read() == text
    lines = [line for line in resumed.stderr.splitlines() if line.strip()]
    ok = resumed.returncode == EXIT_FAILED and len(lines) == 1 and "Traceback" not in resumed.stderr and same
    hint = (
        "una llamada colgante a una herramienta que no existe no se puede conciliar: rechaza el punto de control al cargarlo, con una línea, antes de escribir nada"
        if not same or resumed.returncode == 0
        else "el rechazo es una salida esperada: una línea en español, código 1, sin traza"
    )
    return judged(scenario, expected, ended(resumed), ok, hint, resumed.stderr, SECTION)


def _during_run_problem(after_crash, resumed, final):
    """(lo que pasó, la pista) si la llamada imposible del primer turno no se trató como la lección de
    producción pide, o None: sin punto A colgante, respondida con is_error, sin anotación, y la tarea
    sigue (también tras una caída y un --resume)."""
    pending = after_crash.pending if isinstance(after_crash.pending, dict) else {}
    if pending.get("name") == UNKNOWN_TOOL:
        return (
            f"pendingToolUse = {UNKNOWN_TOOL} tras la caída",
            "una herramienta que no existe no se guarda como llamada colgante en el punto A: no hay nada "
            "que conciliar, y un --resume tendría que rechazar ese punto de control; run_tool_uses la "
            "responde con is_error y la corrida sigue",
        )
    if resumed.returncode != EXIT_DONE or done_text(resumed.stdout) != FINAL_TEXT:
        return (
            f"--resume: {ended(resumed)}",
            "tras reanudar, la tarea sigue hasta el final: [done] y código 0",
        )
    results = {
        b.get("tool_use_id"): b for b in blocks_of(checkpoint_of(final).get("messages") or [], "tool_result")
    }
    if results.get(call_id(1), {}).get("is_error") is not True:
        return (
            f"tool_result de {call_id(1)} ({UNKNOWN_TOOL}) sin is_error",
            "una llamada a una herramienta que no existe se responde con is_error: el modelo elige otra",
        )
    if call_id(1) in final.entries or final.report_copies != 1:
        return (
            f"{EFFECTS_FILE}: {', '.join(final.entries)}; {final.report_copies} copias del reporte",
            "solo se anota lo que corrió, y el reporte se escribe una vez",
        )
    return None


def unknown_during_run(ctx):
    label = f"{SAVE_A}:1"
    scenario = f"el modelo pide {UNKNOWN_TOOL} en el turno 1; caída en el primer punto A y --resume"
    expected = f"sin {UNKNOWN_TOOL} colgante; su tool_result con is_error; --resume: [done], 1 copia"
    asked = replace(ctx, env={**ctx.env, DETOUR_VAR: DETOUR_UNKNOWN_TOOL})
    with scratch() as w:
        crashed, failed = crash_first(asked, w, label, scenario, expected, SECTION)
        if failed:
            return failed
        after_crash = read_disk_state(w)
        resumed = run(asked, w, resume=True)
        final = read_disk_state(w)
    problem = _during_run_problem(after_crash, resumed, final)
    got, hint = problem or ("como pide la lección de producción", "")
    return judged(scenario, expected, got, not problem, hint, crashed.stderr + resumed.stderr, SECTION)


ROWS = (unknown_pending, unknown_during_run)

"""caidas: cada una de las 12 etiquetas, de punta a punta: la caída (137 y su [kill]), el disco, la
rama, un --resume que muere en el punto B rellenado, un segundo --resume que termina, y el final. Un
agente de varias llamadas por turno (otro guion) corre las etiquetas que salen de su corrida limpia."""

import os

from harness.contract import CHECKPOINT_FILE, EXIT_DONE, done_text, parse_log
from harness.notebook.disk_state import read_disk_state
from harness.protocol import pairing_error
from harness.scenario import EFFECT, LABELS, SAVE_A, SAVE_B, TOOL, moment
from harness.tools import NOTES_PATH, report_copies

from ..processes import run, scratch
from ..rows import judged
from .common import crash_first, read_json
from .diagnosis import ended
from .labels import label_row, scenario_of

PIECE, TITLE = "caidas", "cada punto de caída y su --resume"
CHECKS = (
    "la caída: código 137 y «[kill] caída simulada en <etiqueta>»",
    "el disco tras la caída, la rama de reconcile, el punto B rellenado y el final (los de puntos, registro y reconcile)",
    "con --varias-llamadas: una corrida limpia que escribe el reporte y anota al menos una llamada, y cada etiqueta que sale de ella",
)
EXPECTED_TEXT = (
    "137 y [kill]; el disco de la lección; --resume: la rama esperada, [done], registro exacto, 1 copia"
)


def lesson_rows():
    return tuple(
        label_row(
            label,
            ("crash", "tokens", "branch", "refill", "final", "turns"),
            scenario_of(label),
            EXPECTED_TEXT,
            "todo como en la lección",
        )
        for label in LABELS
    )


ROWS = lesson_rows()


# —— un agente de varias llamadas por turno: las etiquetas salen de su propia corrida limpia ——


def clean_run_labels(ctx):
    """(fila de la corrida limpia, etiquetas, copias esperadas de cada .txt)."""
    scenario, expected = (
        "la corrida sin caída",
        "[done], código 0, el reporte escrito y al menos una anotación",
    )
    with scratch() as w:
        clean = run(ctx, w)
        state = read_disk_state(w)
        copies = {n: report_copies(os.path.join(w, n)) for n in sorted(os.listdir(w)) if n.endswith(".txt")}
    copies = {n: c for n, c in copies.items() if c and n != NOTES_PATH}
    turns = sum(1 for line in parse_log(clean.stdout) if line.kind == "save" and line.point == "A")
    calls = len(state.entries)
    problem = None
    if clean.returncode != EXIT_DONE or done_text(clean.stdout) is None:
        problem = (ended(clean), "sin una corrida completa no se pueden sacar sus puntos de caída")
    elif not copies:
        problem = (
            "no quedó ningún reporte escrito",
            "la tarea escribe un reporte: una corrida que no escribe nada no prueba nada",
        )
    elif not calls or not turns:
        problem = (
            f"{calls} anotaciones, {turns} puntos A",
            "cada llamada que corre se anota en el registro, y cada turno guarda su punto A",
        )
    got, hint = problem or (f"{turns} turnos, {calls} anotaciones, {', '.join(copies)}", "")
    row = judged(scenario, expected, got, problem is None, hint, clean.stderr)
    if problem:
        return row, [], copies
    labels = [f"{k}:{n}" for k in (SAVE_A, SAVE_B) for n in range(1, turns + 1)]
    labels += [f"{k}:{n}" for k in (TOOL, EFFECT) for n in range(1, calls + 1)]
    return row, labels, copies


def matrix_row(ctx, label, copies):
    expected = "137 y [kill]; --resume: [done], " + ", ".join(f"{n} {c}×" for n, c in copies.items())
    with scratch() as w:
        crashed, failed = crash_first(ctx, w, label, f"caída en {moment(label)}", expected)
        resumed = None if failed else run(ctx, w, resume=True)
        got_copies = {name: report_copies(os.path.join(w, name)) for name in copies}
        cp = read_json(os.path.join(w, CHECKPOINT_FILE)) or {}
    scenario = f"caída en {moment(label)}"
    if failed:
        return failed
    clean = not pairing_error(cp.get("messages") or []) and cp.get("pendingToolUse") in (None, [])
    ok = (
        resumed.returncode == EXIT_DONE
        and done_text(resumed.stdout) is not None
        and got_copies == copies
        and clean
    )
    got = f"código {resumed.returncode}, " + ", ".join(f"{n} {c}×" for n, c in got_copies.items())
    if got_copies != copies:
        hint = "un reporte quedó escrito más (o menos) veces que en la corrida limpia: revisa qué hizo reconcile con la llamada colgante"
    elif not clean:
        hint = "el punto de control final no está limpio: cada tool_use con su tool_result, sin llamadas colgantes"
    else:
        hint = "tras reanudar, la tarea sigue hasta el final: [done] y código 0"
    return judged(scenario, expected, got, ok, hint, resumed.stderr)


def several_calls_rows(ctx):
    """Las filas de un agente de varias llamadas: la corrida limpia y una por etiqueta que sale de ella."""
    row, labels, copies = clean_run_labels(ctx)
    return [row] + [matrix_row(ctx, label, copies) for label in labels]

"""apertura: una corrida nueva empieza limpia (``fresh_scene``), también por la terminal: sin
heredar punto de control, registro ni reporte de la corrida anterior."""

import json
import os

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE, EXIT_DONE, LOCK_FILE, TMP_SUFFIX, done_text
from harness.notebook.disk_state import read_disk_state
from harness.scenario import FINAL_TEXT, SAVE_A, TURNS, call_id
from harness.tools import NOTES_PATH, REPORT_PATH

from ..processes import call, run, scratch
from ..rows import judged
from .common import PYTHON_DRIVER, crash_first, needs, row_or_not_yet, said, sample_checkpoint, write
from .diagnosis import ended, ledger_problems

PIECE, TITLE = "apertura", "fresh_scene: una corrida nueva empieza limpia"
CHECKS = (
    f"fresh_scene borra {CHECKPOINT_FILE}, {EFFECTS_FILE} y el reporte, y devuelve (0, 0, [la tarea])",
    "una corrida nueva sobre los archivos de otra termina con el registro exacto de la corrida nueva y una copia del reporte",
    f"una corrida nueva con un {EFFECTS_FILE} viejo y sin {CHECKPOINT_FILE}: en su primer punto A el registro ya está vacío",
)
STALE = call_id(9)  # una anotación de la corrida anterior: una corrida nueva no la hereda
OLD_REPORT = {"name": "write_report", "result": "viejo", "at": 1}
OLD_REPORT_TEXT = "viejo\n"  # el reporte de la corrida anterior


def _leftovers(w):
    write(os.path.join(w, CHECKPOINT_FILE), json.dumps(sample_checkpoint()))
    write(
        os.path.join(w, EFFECTS_FILE),
        json.dumps({STALE: OLD_REPORT}),
    )
    write(os.path.join(w, REPORT_PATH), OLD_REPORT_TEXT)
    write(os.path.join(w, CHECKPOINT_FILE + TMP_SUFFIX), "{")


@needs(PYTHON_DRIVER)
def fresh_scene(ctx):
    with scratch() as w:
        _leftovers(w)
        result = call(ctx, w, "fresh_scene", "la tarea")
        # Un temporal que quedó no estorba: nadie lo lee, y el guardado siguiente lo pisa.
        left = sorted(
            n for n in os.listdir(w) if n not in (NOTES_PATH, LOCK_FILE) and not n.endswith(TMP_SUFFIX)
        )
    ok = result.get("value") == [0, 0, [{"role": "user", "content": "la tarea"}]] and not left
    return row_or_not_yet(
        result,
        "fresh_scene con los archivos de una corrida anterior",
        f"borra {CHECKPOINT_FILE}, {EFFECTS_FILE} y el reporte; devuelve (0, 0, [la tarea])",
        ok,
        said(result) if "error" in result else f"quedaron: {', '.join(left) or 'nada'}",
        _fresh_hint(left),
    )


def _fresh_hint(left):
    """La causa: lo que quedó de la corrida anterior (el reporte lo quita prepare_task_files), o lo que
    devolvió."""
    if REPORT_PATH in left:
        return "el reporte de la corrida anterior sigue ahí: fresh_scene lo quita (prepare_task_files) antes de empezar, o la corrida nueva lo escribe dos veces"
    if left:
        return f"fresh_scene dejó {', '.join(left)}: una corrida sin --resume no hereda ni punto de control ni registro de la anterior"
    return "fresh_scene devuelve el estado de una corrida nueva: (0, 0, [la tarea]), turns y tokensUsed en 0"


def _kept_old_report(path):
    """¿El reporte de la corrida nueva empieza con el de la anterior? (write_report agrega al final)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().startswith(OLD_REPORT_TEXT)
    except FileNotFoundError:
        return False


def clean_run(ctx):
    with scratch() as w:
        _leftovers(w)
        done = run(ctx, w)
        state = read_disk_state(w)
        kept_report = _kept_old_report(os.path.join(w, REPORT_PATH))
    scenario, expected = (
        "una corrida nueva sobre los archivos de otra",
        "[done], el registro de esta corrida (toolu_01…03), 1 copia",
    )
    if done.returncode != EXIT_DONE or done_text(done.stdout) != FINAL_TEXT:
        hint = (
            "una corrida nueva borra el reporte viejo antes de empezar: el nuevo se agregó a continuación del de la corrida anterior"
            if kept_report
            else "una corrida nueva hace la tarea entera, sin mirar lo que dejó otra"
        )
        return judged(scenario, expected, ended(done), False, hint, done.stderr)
    problems = ledger_problems(
        state.entries, tuple(TURNS.values()), (state.checkpoint or {}).get("messages"), "al terminar"
    )
    if STALE in state.entries:
        problems = [
            (
                f"{EFFECTS_FILE} conserva {STALE}, de la corrida anterior",
                f"una corrida sin --resume borra {EFFECTS_FILE} antes de empezar: un registro heredado haría reutilizar resultados de otra tarea",
            )
        ]
    if state.report_copies != 1:
        problems.append(
            (
                f"{state.report_copies} copias del reporte",
                "una corrida nueva borra el reporte viejo antes de empezar",
            )
        )
    got, hint = problems[0] if problems else ("[done], registro de esta corrida, 1 copia", "")
    return judged(scenario, expected, got, not problems, hint, done.stderr)


def stale_ledger(ctx):
    """El registro viejo se borra aunque no haya punto de control (quien borra un punto de control dañado,
    como le pide el error, deja el registro): si no, el toolu_03 viejo contestaría el de esta corrida."""
    scenario = f"una corrida nueva con un {EFFECTS_FILE} viejo y sin {CHECKPOINT_FILE}"
    expected = f"en su primer punto A, {EFFECTS_FILE} vacío o ausente"
    label = f"{SAVE_A}:1"
    with scratch() as w:
        write(os.path.join(w, EFFECTS_FILE), json.dumps({TURNS[3].id: OLD_REPORT}))
        crashed, failed = crash_first(ctx, w, label, scenario, expected)
        state = read_disk_state(w)
    if failed:
        return failed
    return judged(
        scenario,
        expected,
        f"{EFFECTS_FILE}: {', '.join(state.entries) or 'vacío'}",
        not state.entries,
        f"una corrida sin --resume borra {EFFECTS_FILE} aunque no exista {CHECKPOINT_FILE}: si no, tras una caída "
        f"el {TURNS[3].id} viejo contesta el de esta corrida desde el registro y el reporte nunca se escribe",
        crashed.stderr,
    )


ROWS = (fresh_scene, clean_run, stale_ledger)

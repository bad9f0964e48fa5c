"""herramienta-desconocida: un punto de control cuya llamada colgante nombra una herramienta que no
existe se rechaza al reanudar con una línea, sin ejecutar nada ni tocar el disco."""

import json

from harness.contract import CHECKPOINT_FILE, EXIT_FAILED
from harness.notebook.disk_state import read_disk_state
from harness.scenario import SAVE_A

from ..processes import run, scratch
from ..rows import judged
from .common import checkpoint_of, checkpoint_path, crash_first, write
from .diagnosis import ended

PIECE, TITLE = "herramienta-desconocida", "una herramienta que no existe"
SECTION = "Dos tool_use en un turno"  # la sección de checked_turn, que también cuida esto
CHECKS = (
    "pendingToolUse con name=borrar_todo: --resume termina con código 1 y una línea, y el punto de control queda como estaba",
)


def unknown_pending(ctx):
    label = f"{SAVE_A}:1"
    scenario = "--resume con pendingToolUse de una herramienta que no existe (borrar_todo)"
    expected = f"código 1, una línea en stderr, {CHECKPOINT_FILE} sin cambios"
    with scratch() as w:
        crashed, failed = crash_first(ctx, w, label, scenario, expected, SECTION)
        if failed:
            return failed
        cp = checkpoint_of(read_disk_state(w))
        cp["pendingToolUse"]["name"] = "borrar_todo"
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


ROWS = (unknown_pending,)

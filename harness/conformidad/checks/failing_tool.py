"""falla: una herramienta que falla no se anota: el modelo recibe un tool_result con is_error y el
texto «Error de ejecución de la herramienta: …», y effects.json no gana ninguna anotación."""

import os

from harness.contract import EFFECTS_FILE, EXIT_DONE, EXIT_KILLED
from harness.notebook.disk_state import read_disk_state
from harness.protocol import blocks_of
from harness.scenario import SAVE_B, TURNS
from harness.tools import NOTES_PATH

from ..processes import run, scratch
from ..rows import judged
from .common import checkpoint_of, crash_first
from .diagnosis import ended

PIECE, TITLE = "falla", "run_tool_uses: una herramienta que falla"
CHECKS = (
    "count_words sin sales-notes.txt (borrado antes del --resume): cada intento vuelve con is_error y «Error de ejecución de la herramienta: …»",
    f"ninguna anotación de una llamada que falló: {EFFECTS_FILE} sigue con solo read_notes",
)
ERROR_PREFIX = "Error de ejecución de la herramienta: "


def failing_count_words(ctx):
    scenario = "count_words falla (sales-notes.txt borrado antes del --resume)"
    expected = f"is_error con «{ERROR_PREFIX}…»; {EFFECTS_FILE} solo con {TURNS[1].id}"
    label = f"{SAVE_B}:1"
    with scratch() as w:
        crashed, failed = crash_first(ctx, w, label, scenario, expected)
        if failed:
            return failed
        os.remove(os.path.join(w, NOTES_PATH))
        resumed = run(ctx, w, resume=True)
        state = read_disk_state(w)
    messages = checkpoint_of(state).get("messages") or []
    failed_ids = {u["id"] for u in blocks_of(messages, "tool_use") if u.get("name") == TURNS[2].name}
    results = [r for r in blocks_of(messages, "tool_result") if r.get("tool_use_id") in failed_ids]
    recorded = sorted(set(state.entries) & failed_ids)
    problem = None
    if resumed.returncode not in (EXIT_DONE, EXIT_KILLED) and not results:
        problem = (
            f"--resume: {ended(resumed)}",
            "una herramienta que falla no detiene al agente: el modelo recibe el error como tool_result y decide",
        )
    elif not results:
        problem = (
            "ningún tool_result de count_words en messages",
            "una herramienta que falla igual devuelve un tool_result, con is_error",
        )
    elif not all(r.get("is_error") is True for r in results):
        also = f", y no se anota en {EFFECTS_FILE} (no ocurrió)" if recorded else ""
        problem = (
            "un tool_result de count_words sin is_error" + (", y anotado" if recorded else ""),
            f"el error de una herramienta llega al modelo con is_error: true, nunca como un resultado normal{also}",
        )
    elif not all(str(r.get("content", "")).startswith(ERROR_PREFIX) for r in results):
        problem = (
            "el texto del error no es el de la lección",
            f"el contenido es «{ERROR_PREFIX}…» con el mensaje del error",
        )
    elif recorded:
        problem = (
            f"{EFFECTS_FILE} anota {', '.join(recorded)}, que falló",
            "solo se anota lo que corrió con éxito: una llamada que falló no tiene efecto que recordar, y anotarla haría reutilizar un error como si fuera un resultado",
        )
    got, hint = problem or (f"{len(results)} intentos con is_error, ninguno anotado", "")
    return judged(scenario, expected, got, problem is None, hint, resumed.stderr)


ROWS = (failing_count_words,)

"""turno-del-asistente: si el punto A guardó el turno del asistente entero (pendingAssistantContent:
un texto antes del tool_use), el --resume lo rellena tal cual, sin perder el texto."""

import json

from harness.contract import EXIT_DONE, PENDING_CONTENT, done_text
from harness.notebook.disk_state import read_disk_state
from harness.scenario import SAVE_A

from ..processes import run, scratch
from ..rows import judged
from .common import checkpoint_of, checkpoint_path, crash_first, write
from .diagnosis import ended

PIECE, TITLE = "turno-del-asistente", "pendingAssistantContent: el turno entero del asistente"
SECTION = "Texto antes del tool_use"
CHECKS = (
    "un punto A con pendingAssistantContent (texto + tool_use): el --resume rellena ese turno tal cual",
)
TEXT = {"type": "text", "text": "Primero leo las notas de ventas."}


def text_before_tool_use(ctx):
    label = f"{SAVE_A}:1"
    scenario = "punto A con un texto antes del tool_use y --resume"
    expected = "el turno del asistente rellenado con el texto y el tool_use; [done]"
    with scratch() as w:
        crashed, failed = crash_first(ctx, w, label, scenario, expected, SECTION)
        if failed:
            return failed
        cp = checkpoint_of(read_disk_state(w))
        turn = [TEXT, {"type": "tool_use", **cp["pendingToolUse"]}]
        write(checkpoint_path(w), json.dumps({**cp, PENDING_CONTENT: turn}, ensure_ascii=False))
        resumed = run(ctx, w, resume=True)
        messages = checkpoint_of(read_disk_state(w)).get("messages") or []
    refilled = messages[1].get("content") if len(messages) > 1 else None
    problem = None
    if resumed.returncode != EXIT_DONE or done_text(resumed.stdout) is None:
        problem = (
            f"--resume: {ended(resumed)}",
            f"un punto de control con {PENDING_CONTENT} válido se reanuda como cualquier otro",
        )
    elif refilled != turn:
        problem = (
            "el turno rellenado no trae el texto",
            f"al rellenar el turno del asistente, usa {PENDING_CONTENT} si el punto A lo guardó: rehacerlo desde pendingToolUse pierde el texto",
        )
    got, hint = problem or ("el turno entero, [done]", "")
    return judged(scenario, expected, got, problem is None, hint, resumed.stderr, SECTION)


ROWS = (text_before_tool_use,)

"""Un modelo guionado que pide varias herramientas en un mismo turno, como hace un modelo real.

Misma forma que ``harness.scripted_model.ScriptedModel`` (``client.messages.create``) y misma regla:
la respuesta se elige leyendo la conversación, así que un proceso nuevo que reanuda recibe la que
corresponde. El guion:

1. ``read_notes`` y ``count_words`` juntas (solo leen);
2. ``write_report`` dos veces juntas: ``report.txt`` y ``resumen.txt`` (dos efectos secundarios);
3. el texto final.

Si alguna escritura vuelve con ``is_error``, verifica esas con ``check_report`` (juntas) y vuelve a
escribir solo las que faltan, como pide la lección.
"""

from harness.protocol import pairing_error
from harness.scenario import call_id
from harness.scripted_model import (
    MAX_CALLS,
    VERIFIED_TEXT,
    Message,
    ScriptError,
    TextBlock,
    ToolUseBlock,
    Usage,
    _results,
    _text,
    _tool_uses,
    _write_input,
)
from harness.tools import NOTES_PATH, REPORT_MISSING, REPORT_PATH, REPORT_TITLE

SUMMARY_PATH = "resumen.txt"
# La tarea de este guion (la de la lección, con un resumen además del reporte).
TASK = (
    f"Convierte {NOTES_PATH} en un reporte breve y un resumen; escríbelos en {REPORT_PATH} y {SUMMARY_PATH}."
)
FINAL_PARALLEL = "Reporte y resumen escritos, tarea completa."


def _write(path, messages):
    if path == REPORT_PATH:
        return _write_input(messages)
    report = _write_input(messages)["content"].splitlines()
    return {"path": SUMMARY_PATH, "content": f"{REPORT_TITLE} · resumen\n\n{report[2]}\n"}


def _last_batch(messages):
    """[(llamada, resultado)] del último turno respondido."""
    uses, results = _tool_uses(messages), _results(messages)
    answered = [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]
    if not answered:
        raise ScriptError("el último mensaje no trae ningún tool_result")
    return [(uses[r["tool_use_id"]], results[r["tool_use_id"]]) for r in answered]


def _next_calls(messages):
    """[(nombre, entrada)] del próximo turno, o texto final."""
    if len(messages) == 1:
        return [("read_notes", {"path": NOTES_PATH}), ("count_words", {"path": NOTES_PATH})]
    batch = _last_batch(messages)
    names = {use["name"] for use, _ in batch}
    if names <= {"read_notes", "count_words"} and not any(r.get("is_error") for _, r in batch):
        return [("write_report", _write(p, messages)) for p in (REPORT_PATH, SUMMARY_PATH)]
    if names == {"write_report"}:
        failed = [use["input"]["path"] for use, r in batch if r.get("is_error")]
        return [("check_report", {"path": p}) for p in failed] or FINAL_PARALLEL
    if names == {"check_report"}:
        missing = [use["input"]["path"] for use, r in batch if REPORT_MISSING in _text(r["content"])]
        return [("write_report", _write(p, messages)) for p in missing] or VERIFIED_TEXT
    raise ScriptError(f"no hay respuesta guionada para un turno de {', '.join(sorted(names))}")


class _ParallelMessages:
    def create(self, *, model, max_tokens, messages, tools=(), **_):
        error = pairing_error(messages)
        if error:
            raise ScriptError(f"la API rechazaría esta conversación (400): {error}")
        done = len(_tool_uses(messages))
        if done >= MAX_CALLS:
            raise ScriptError(f"el guion se terminó: ya hubo {done} llamadas a herramientas")
        try:
            step = _next_calls(messages)
        except (KeyError, StopIteration, TypeError, AttributeError, IndexError) as err:
            raise ScriptError(f"la conversación recibida no sigue el guion ({err!r})") from None
        usage = Usage(input_tokens=120 + 60 * len(messages), output_tokens=40 if step else 20)
        if isinstance(step, str):
            return Message(done + 1, [TextBlock(step)], "end_turn", usage)
        blocks = [ToolUseBlock(call_id(done + i), n, v) for i, (n, v) in enumerate(step, 1)]
        return Message(done + 1, blocks, "tool_use", usage)


class ParallelScriptedModel:
    """Un cliente con la forma de ``anthropic.Anthropic()`` que pide herramientas de a varias."""

    def __init__(self):
        self.messages = _ParallelMessages()

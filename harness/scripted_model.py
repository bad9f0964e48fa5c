"""El modelo guionado: reemplaza a ``anthropic.Anthropic()`` con respuestas fijas.

``ScriptedModel().messages.create(model=…, max_tokens=…, tools=…, messages=…)`` devuelve objetos
con los mismos atributos que el SDK (``stop_reason``, bloques ``content`` con ``type``/``id``/
``name``/``input``/``text``, ``usage``). La respuesta se elige leyendo la conversación recibida,
no una cola en memoria: un proceso nuevo que reanuda en cualquier punto recibe la que corresponde.

El guion, una herramienta por turno: toolu_01 read_notes → toolu_02 count_words → toolu_03
write_report → texto final. Si write_report vuelve con ``is_error``, el modelo hace lo que la
lección pide: verifica con check_report (solo lectura) y termina, o escribe el reporte una vez más.
Si una herramienta de solo lectura vuelve con ``is_error`` (un error de lectura pasajero), la llama
otra vez, como haría un modelo real; tras ``READ_ATTEMPTS`` fallas seguidas se rinde con un texto
final que dice qué falló, en vez de inventar.

Con ``SCRIPTED_MODEL_DETOUR=herramienta-desconocida`` (``harness.contract``) el primer turno pide una
herramienta que no existe; tras su ``is_error``, el modelo empieza el guion: la suite prueba así qué hace
el agente con una llamada imposible a mitad de una corrida. Sin esa variable, el guion de siempre.
"""

import json
import os

from harness.contract import DETOUR_UNKNOWN_TOOL, DETOUR_VAR, MODEL_LOG_VAR, UNKNOWN_TOOL
from harness.errors import HarnessError
from harness.jitter import jitter
from harness.protocol import blocks_of, pairing_error
from harness.scenario import FINAL_TEXT, SCRIPT, TURNS, VERIFIED_TEXT, VERIFY, call_id
from harness.tools import NOTES_PATH, READ_ONLY, REPORT_DAMAGED, REPORT_MISSING, REPORT_PATH, REPORT_TITLE

MODEL_NAME = "modelo-guionado"
READ, COUNT, WRITE = SCRIPT  # el guion de la tarea (harness.scenario)
DAMAGED_TEXT = (
    "report.txt existe pero está dañado; no escribo encima para no esconder el daño. Revísalo a mano "
    "(o bórralo) antes de volver a pedírmelo."
)
# Intentos de una herramienta de solo lectura que vuelve con is_error, antes de rendirse.
READ_ATTEMPTS = 3
# Más llamadas a herramientas que esto ya no está en ningún guion: mejor fallar que inventar. Cada
# muerte en la ventana de write_report agrega un ciclo «is_error → check_report → write_report» (dos
# llamadas más); el tope queda por encima del MAX_TURNS del agente (20), para que sea su límite, el
# de la lección, el que corte primero.
MAX_CALLS = 24


class ScriptError(HarnessError):
    """La conversación recibida se sale del guion, o la API la rechazaría."""


class _Block:
    """Un bloque de contenido con la forma del SDK (``TextBlock`` o ``ToolUseBlock``)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def model_dump(self, mode="python", exclude_none=False, warnings=True):
        return {k: v for k, v in self.__dict__.items() if not (exclude_none and v is None)}

    def __repr__(self):
        return f"{type(self).__name__}({self.__dict__})"


class TextBlock(_Block):
    def __init__(self, text):
        super().__init__(type="text", text=text, citations=None)


class ToolUseBlock(_Block):
    def __init__(self, id, name, input):  # noqa: A002 (nombres del SDK)
        super().__init__(type="tool_use", id=id, name=name, input=input)


class Usage(_Block):
    def __init__(self, input_tokens, output_tokens):
        super().__init__(input_tokens=input_tokens, output_tokens=output_tokens)


class Message(_Block):
    """La respuesta completa, con los atributos de ``anthropic.types.Message``."""

    def __init__(self, number, content, stop_reason, usage):
        super().__init__(
            id=f"msg_guion_{number:02d}",
            type="message",
            role="assistant",
            model=MODEL_NAME,
            content=content,
            stop_reason=stop_reason,
            stop_sequence=None,
            usage=usage,
        )

    def model_dump(self, mode="python", exclude_none=False, warnings=True):
        data = super().model_dump(mode, exclude_none)
        data["content"] = [b.model_dump(mode, exclude_none) for b in self.content]
        data["usage"] = self.usage.model_dump(mode, exclude_none)
        return data


def _text(content):
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


def _tool_uses(messages):
    """Las llamadas pedidas por id; solo cuentan las del asistente, que es quien las pide."""
    assistant = [m for m in messages if m.get("role") == "assistant"]
    return {b["id"]: b for b in blocks_of(assistant, "tool_use")}


def _results(messages):
    return {b.get("tool_use_id"): b for b in blocks_of(messages, "tool_result")}


def _write_input(messages):
    """La entrada de write_report: el reporte breve, hecho con lo que el modelo leyó y contó."""
    uses = _tool_uses(messages)
    # Lo que devolvió cada herramienta la última vez que anduvo (un intento con is_error no cuenta).
    ok = {
        uses[i]["name"]: _text(r["content"]) for i, r in _results(messages).items() if not r.get("is_error")
    }
    notes, words = ok[READ], ok[COUNT]
    clients = [line[2:].split(":")[0] for line in notes.splitlines() if line.startswith("- ")]
    lines = [REPORT_TITLE, "", f"Fuente: {words}.", f"Clientes con novedades: {len(clients)}."]
    return {"path": REPORT_PATH, "content": "\n".join(lines + [f"- {c}" for c in clients]) + "\n"}


def _next_step(messages):
    """(nombre, entrada) de la próxima herramienta, o (None, texto final)."""
    if any(m.get("role") == "assistant" and not _tool_uses([m]) for m in messages):
        raise ScriptError(
            "el guion se terminó: la conversación ya tiene la respuesta final y no hay otra después de ella"
        )
    content = messages[-1]["content"]
    if isinstance(content, str):
        if len(messages) == 1:
            detour = os.environ.get(DETOUR_VAR) == DETOUR_UNKNOWN_TOOL
            return (UNKNOWN_TOOL, {}) if detour else (READ, {"path": NOTES_PATH})
        content = []
    result = next((b for b in reversed(content) if b.get("type") == "tool_result"), None)
    if result is None:
        raise ScriptError("el último mensaje no trae ningún tool_result")
    uses = _tool_uses(messages)
    name, ok = uses[result["tool_use_id"]]["name"], not result.get("is_error")
    if not ok and name in READ_ONLY:
        return _read_again(messages, uses, result)
    if name == UNKNOWN_TOOL and not ok:  # la herramienta no existe: hace la tarea con las que hay
        return READ, {"path": NOTES_PATH}
    if name == READ and ok:
        return COUNT, {"path": NOTES_PATH}
    if name == COUNT and ok:
        return WRITE, _write_input(messages)
    if name == WRITE:
        return (None, FINAL_TEXT) if ok else (VERIFY, {"path": REPORT_PATH})
    if name == VERIFY and ok:
        if REPORT_DAMAGED in _text(result["content"]):
            return None, DAMAGED_TEXT
        if REPORT_MISSING in _text(result["content"]):
            return WRITE, _write_input(messages)
        return None, VERIFIED_TEXT
    raise ScriptError(f"no hay respuesta guionada para un tool_result de {name}")


def _read_again(messages, uses, result):
    """Tras un ``is_error`` de una herramienta de solo lectura: la misma llamada otra vez, o, tras
    ``READ_ATTEMPTS`` fallas seguidas de esa herramienta, un texto final que lo dice."""
    call = uses[result["tool_use_id"]]
    failures = 0
    for message in reversed([m for m in messages if m.get("role") == "user"]):
        last = next(reversed(_results([message]).values()), None)
        if last is None or not last.get("is_error") or uses[last["tool_use_id"]]["name"] != call["name"]:
            break
        failures += 1
    if failures < READ_ATTEMPTS:
        return call["name"], call["input"]
    reason = _text(result.get("content") or "")
    return None, (
        f"No pude completar la tarea: {call['name']} falló {failures} veces seguidas ({reason}). No escribí "
        "nada más; cuando se resuelva, vuelve a empezar la tarea."
    )


class _ScriptedMessages:
    def create(self, *, model, max_tokens, messages, tools=(), **_):
        """Como ``client.messages.create`` del SDK: valida la conversación y responde el guion."""
        _log_request(messages)  # antes de validar: las pruebas revisan también lo que se rechazaría
        error = pairing_error(messages)
        if error:
            raise ScriptError(f"la API rechazaría esta conversación (400): {error}")
        jitter()  # solo con AGENT_JITTER_MS: un modelo real también tarda
        calls = len(_tool_uses(messages))
        if calls >= MAX_CALLS:
            raise ScriptError(f"el guion se terminó: ya hubo {calls} llamadas a herramientas")
        try:
            name, value = _next_step(messages)
        except (KeyError, StopIteration, TypeError, AttributeError) as err:
            raise ScriptError(f"la conversación recibida no sigue el guion ({err!r})") from None
        usage = Usage(input_tokens=120 + 60 * len(messages), output_tokens=40 if name else 20)
        if name is None:
            return Message(calls + 1, [TextBlock(value)], "end_turn", usage)
        block = ToolUseBlock(call_id(calls + 1), name, value)
        return Message(calls + 1, [block], "tool_use", usage)


def _log_request(messages):
    """Si ``SCRIPTED_MODEL_LOG`` nombra un archivo, anota cada conversación recibida (JSONL),
    para que las pruebas revisen todo lo que el agente envió, desde cualquier proceso."""
    path = os.environ.get(MODEL_LOG_VAR)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(messages, ensure_ascii=False) + "\n")


class ScriptedModel:
    """Un cliente con la misma forma que ``anthropic.Anthropic()``: ``client.messages.create``."""

    def __init__(self):
        self.messages = _ScriptedMessages()


class _TwoCallsMessages:
    def create(self, *, model, max_tokens, messages, tools=(), **_):
        error = pairing_error(messages)
        if error:
            raise ScriptError(f"la API rechazaría esta conversación (400): {error}")
        usage = Usage(input_tokens=120 + 60 * len(messages), output_tokens=40)
        if len(messages) == 1:
            calls = [ToolUseBlock(call.id, call.name, {"path": NOTES_PATH}) for call in TWO_CALLS]
            return Message(1, calls, "tool_use", usage)
        return Message(2, [TextBlock(TWO_CALLS_TEXT)], "end_turn", usage)


# La frontera de la lección: un turno con dos llamadas a la vez, para ver qué anota el punto A.
TWO_CALLS = (TURNS[1], TURNS[2])
TWO_CALLS_TEXT = "Leí las notas y conté sus palabras en el mismo turno."


class TwoCallsModel:
    """Un cliente que en su primer turno pide dos herramientas a la vez (``read_notes`` y ``count_words``)
    y después termina: la frontera «una llamada colgante por turno» de la lección, de verdad."""

    def __init__(self):
        self.messages = _TwoCallsMessages()

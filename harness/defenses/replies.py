"""Qué hacer con cada respuesta del modelo antes de que toque el disco.

Un modelo real puede devolver lo que el guion nunca devuelve: un ``stop_reason`` que no es ni
``tool_use`` ni un final (``pause_turn``, ``refusal``, ``max_tokens``…), un ``tool_use`` con un id
repetido o mal formado, o para una herramienta que no existe. Aquí se decide, antes del punto A, si la
respuesta se usa, y cada rechazo es un ``HarnessError`` de una línea que dice cómo seguir: así el
agente nunca guarda un punto de control que su propio cargador rechazaría, ni una conversación que la
API rechazaría con un 400 en cada reanudación.
"""

import json
import os
import re
import stat
from types import SimpleNamespace

from harness.contract import CHECKPOINT_FILE, FINISHED, turn_limit_text
from harness.defenses.bounded import MAX_DEPTH, value_problem
from harness.errors import HarnessError
from harness.protocol import block_to_dict, blocks_of
from harness.text import shorten
from harness.tools import REPORT_PATH, TOOL_IMPLS

# El formato de id que la API acepta en un tool_use (otro id se rechaza con un 400 al reenviarlo).
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
# Finales de verdad: el modelo terminó su turno (stop_sequence solo aparece si se piden secuencias).
FINAL_STOPS = ("end_turn", "stop_sequence")
# Un turno en pausa (herramientas del servidor) se continúa a lo sumo estas veces seguidas.
MAX_PAUSES = 10
# Un turno del modelo queda en el punto de control dentro de cp → messages → mensaje: tres niveles que se
# descuentan del máximo, para que el punto de control entero siga siendo legible.
CONTENT_DEPTH = MAX_DEPTH - 3
# Bytes de una respuesta (su «content» en JSON): con max_tokens=1024 una real trae unos pocos KB; esto
# solo corta lo absurdo, muy por debajo de lo que el cargador acepta de un archivo.
MAX_REPLY_BYTES = 1024 * 1024
# Tokens de una respuesta: mil veces la ventana de contexto más grande. Sumados turno a turno nunca
# llegan al entero más grande que el cargador acepta en «tokensUsed».
MAX_REPLY_TOKENS = 10**9


class TurnLimitReached(HarnessError):  # noqa: N818 (se lee como una condición)
    """El tope de turnos de una corrida: no es un final del modelo (salida 1), y ``--resume`` sigue desde
    el último punto guardado con otros tantos turnos."""

    def __init__(self, max_turns):
        super().__init__(
            f"{turn_limit_text(max_turns)}: no es un final del modelo. {CHECKPOINT_FILE} quedó en el último punto guardado; revisa "
            "por qué el modelo no termina, y retoma con --resume (cada corrida tiene su propio tope)."
        )


class ReplyError(HarnessError):
    """Una respuesta del modelo que el agente no puede usar: no se ejecutó ni se guardó nada."""


# Si la corrida en curso usa el modelo real: sus mensajes nombran --live solo entonces. Lo anota
# ``harness.defenses.clients.make_client``, y cada sesión (``agent_session``) empieza sin él.
_run = {"live": False}


def note_live(live):
    """Anota si la corrida en curso usa ``--live`` (el modelo real)."""
    _run["live"] = bool(live)


def _live():
    return _run["live"]


def resume_hint():
    """Cómo seguir tras un error al pedirle al modelo, según lo que haya en el disco."""
    if os.path.exists(CHECKPOINT_FILE):
        return (
            f"{CHECKPOINT_FILE} quedó en el último punto guardado: retoma con {'--live ' * _live()}--resume."
        )
    return f"Todavía no había nada guardado: vuelve a correr{' con --live,' * _live()} sin --resume."


def _shown(value):
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "…"


# —— stop_reason: qué quiso decir la API ——

_STOP_ERRORS = {
    "max_tokens": "La respuesta del modelo se cortó al llegar a max_tokens={max_tokens}: el turno quedó "
    "incompleto y no se usa.",
    "refusal": "El modelo se negó a continuar la tarea (stop_reason=refusal) y no se usó su respuesta; "
    "al retomar se le vuelve a pedir el mismo turno, y puede negarse otra vez.",
    "model_context_window_exceeded": "La conversación llenó la ventana de contexto del modelo "
    "(stop_reason=model_context_window_exceeded): la respuesta quedó incompleta y no se usa. Retomar "
    "manda la misma conversación: elige un modelo con más contexto (ANTHROPIC_MODEL) o empieza de nuevo "
    "sin --resume.",
    "pause_turn": "El modelo pausó su turno {n} veces seguidas (stop_reason=pause_turn) sin terminarlo.",
}


def continue_paused(create, messages):
    """``create(messages)``; si el turno vuelve en pausa (``pause_turn``), se reenvía tal cual como
    turno del asistente para que el modelo lo continúe, y se devuelve el turno entero (con el uso de
    tokens de todos los pedidos). ``messages`` no cambia: el turno entra una sola vez, completo."""
    response, paused, tokens = checked_reply(create(messages)), [], [0, 0]
    for _ in range(MAX_PAUSES):
        if response.stop_reason != "pause_turn":
            break
        paused += [block_to_dict(b) for b in response.content]
        tokens = [tokens[0] + response.usage.input_tokens, tokens[1] + response.usage.output_tokens]
        response = checked_reply(create([*messages, {"role": "assistant", "content": paused}]))
    if not paused or response.stop_reason == "pause_turn":
        return response
    usage = SimpleNamespace(
        input_tokens=tokens[0] + response.usage.input_tokens,
        output_tokens=tokens[1] + response.usage.output_tokens,
    )
    content = paused + [block_to_dict(b) for b in response.content]
    return SimpleNamespace(stop_reason=response.stop_reason, content=content, usage=usage)


def checked_reply(response):
    """``response`` tal cual, si lo que trae se puede usar y guardar: tokens que son contadores, un
    «content» que pasa a JSON, acotado en profundidad y tamaño, con textos en Unicode válido y números
    finitos. Si no, un error de una línea antes de usarla: no se ejecutó ni se guardó nada, y retomar
    vuelve a pedir ese turno (de cualquier cliente: el guionado, el SDK, el de una prueba)."""
    problem = reply_problem(response)
    if problem:
        raise ReplyError(
            f"La respuesta del modelo no se puede usar ({shorten(problem, 240)}): no se ejecutó ni se guardó "
            f"nada. {resume_hint()}"
        )
    return response


def reply_problem(response):
    """Lo que tiene ``response`` que el agente no podría usar o volver a cargar, en una frase (o None)."""
    usage = getattr(response, "usage", None)
    for name in ("input_tokens", "output_tokens"):
        problem = tokens_problem(getattr(usage, name, None))
        if problem:
            return f"usage.{name} {problem}"
    if not isinstance(getattr(response, "content", None), list):
        return "su «content» no es una lista de bloques"
    try:
        blocks = [b if isinstance(b, dict) else _plain(b) for b in response.content]
    except (ValueError, RecursionError):  # pydantic: una clave que no es Unicode válido
        return "un bloque de su «content» no se puede convertir (una clave que no es Unicode válido)"
    if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
        return "un bloque de su «content» no es un objeto con «type»"
    problem = value_problem(blocks, CONTENT_DEPTH)  # antes de pasarlo a JSON, que no tiene estos topes
    if problem:
        return f"su «content» no se podría volver a cargar: {problem}"
    size = len(json.dumps([block_to_dict(b) for b in response.content], ensure_ascii=False).encode("utf-8"))
    if size > MAX_REPLY_BYTES:
        return f"su «content» pesa {size} bytes, más de los {MAX_REPLY_BYTES} que acepta este agente"
    return None


def _plain(block):
    """Un bloque del SDK como dict de Python, sin pasar por JSON: pydantic lo haría con un tope de unos
    250 niveles y una traza, antes de que ``value_problem`` pudiera decir qué tiene."""
    dump = getattr(block, "model_dump", None)
    return dump(mode="python", exclude_none=True, warnings=False) if dump else block


def tokens_problem(tokens):
    """Un número de tokens de «usage» que no se puede sumar ni guardar: no es un entero, es negativo o
    es absurdo (más de ``MAX_REPLY_TOKENS``)."""
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        shown = repr(tokens) if isinstance(tokens, float) or tokens is None else type(tokens).__name__
        return f"no es un entero ({shown})"
    if not 0 <= tokens <= MAX_REPLY_TOKENS:
        return (
            f"está fuera de 0…{MAX_REPLY_TOKENS} ({tokens if abs(tokens) < 10**15 else 'un entero enorme'})"
        )
    return None


def check_stop_reason(response, max_tokens):
    """``response`` si su ``stop_reason`` es ``tool_use`` o un final; si no, un error de una línea."""
    stop = response.stop_reason
    if stop == "tool_use" or stop in FINAL_STOPS:
        return response
    if stop in _STOP_ERRORS:
        what = _STOP_ERRORS[stop].format(max_tokens=max_tokens, n=MAX_PAUSES)
    else:  # null o uno que esta versión no conoce: nunca se toma por un final
        what = (
            f"El modelo terminó con un stop_reason que este agente no conoce ({_shown(stop)}): no se toma "
            "por un final y no se usa."
        )
    raise ReplyError(f"{what} {resume_hint()}")


def check_final(response, text):
    """Un final de verdad trae texto y ninguna llamada a herramienta sin atender."""
    if tool_use_blocks(response.content):
        raise ReplyError(
            f"El modelo pidió una herramienta pero terminó con stop_reason={response.stop_reason}: una "
            f"respuesta incoherente, que no se ejecuta ni se toma por un final. {resume_hint()}"
        )
    if not text.strip():
        raise ReplyError(
            f"El modelo terminó su turno sin texto ni herramienta (stop_reason={response.stop_reason}): "
            f"eso no es un final de la tarea. {resume_hint()}"
        )


def tool_use_blocks(content):
    return blocks_of([{"content": [block_to_dict(b) for b in content]}], "tool_use")


# —— El tool_use del turno, antes del punto A ——


def checked_turn(response, messages):
    """(contenido, llamada colgante) del turno del modelo: el contenido como JSON simple, y su llamada,
    ya revisada con ``checked_call``, con las claves de ``pendingToolUse`` (id, name, input); None si
    nombra una herramienta que no existe. Una respuesta que no se puede aceptar es un error antes del
    punto A: no toca el disco."""
    content = [block_to_dict(b) for b in response.content]
    call = checked_call(content, messages)
    return content, call and {"id": call["id"], "name": call["name"], "input": call["input"]}


def checked_call(content, messages):
    """La única llamada del turno, revisada antes del punto A: id con el formato de la API y nuevo
    en la conversación, ``input`` un objeto. Devuelve None si nombra una herramienta que no existe:
    no hay nada que anotar como colgante, y ``run_tool_uses`` la responde con is_error."""
    calls = blocks_of([{"content": content}], "tool_use")
    if len(calls) != 1:
        names = ", ".join(_shown(c.get("name")) for c in calls) or "ninguna"
        _refuse(
            f"El modelo pidió {len(calls)} llamadas a herramientas en un mismo turno ({names}); este agente "
            "guarda una sola llamada colgante por turno y no descarta ninguna en silencio"
        )
    call = calls[0]
    problem = call_problem(call, {b.get("id") for b in blocks_of(messages, "tool_use")})
    if problem:
        _refuse(f"El modelo pidió una llamada que no se puede usar: {problem}")
    return call if call["name"] in TOOL_IMPLS else None


def call_problem(call, earlier_ids):
    """Lo que la API rechazaría de ``call`` al reenviarla (o None)."""
    tool_use_id = call.get("id")
    if not isinstance(tool_use_id, str) or not TOOL_USE_ID.fullmatch(tool_use_id):
        return f"su id {_shown(tool_use_id)} no tiene el formato de la API (letras, dígitos, _ y -)"
    if tool_use_id in earlier_ids:
        return f"su id {tool_use_id} repite el de una llamada anterior de la conversación"
    if not isinstance(call.get("name"), str) or not call["name"]:
        return f"la llamada {tool_use_id} no nombra una herramienta ({_shown(call.get('name'))})"
    if not isinstance(call.get("input"), dict):
        return f"el «input» de {tool_use_id} no es un objeto ({_shown(call.get('input'))})"
    return None


def _refuse(what):
    raise ReplyError(f"{what}, así que no se ejecutó nada. {resume_hint()}")


# —— Al reanudar ——


def finished(cp, text):
    """El punto de control de una tarea terminada: el último punto B más el texto final. Sin el reporte
    de la tarea no hay tal cosa: un ``TaskNotDone`` (salida 1) y el punto de control no cambia."""
    check_done(cp["messages"], text, then=_then_checkpoint())
    return {**cp, FINISHED: text}


class TaskNotDone(ReplyError):  # noqa: N818 (se lee como una condición)
    """El modelo cerró su turno, pero lo que la tarea pide no está en disco: no es un ``[done]``."""


def check_done(messages, text, outputs=(REPORT_PATH,), then=None):
    """Un final del modelo es el final de la tarea solo si sus archivos (``outputs``) están: cada uno un
    archivo común y no vacío. Si no, un ``TaskNotDone`` de una línea: qué falta, qué pasó antes (la
    última herramienta que falló, o que ninguna falló) y qué hacer (``then``)."""
    missing = [problem for path in outputs if (problem := _output_problem(path))]
    if missing:
        raise TaskNotDone(
            f"El modelo cerró la tarea ({_shown(text)}), pero {' y '.join(missing)}: no está hecha, y no se "
            f"marca terminada. Antes: {last_failure(messages)}. {then or _then_checkpoint()}"
        )


def _output_problem(path):
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return f"{path} no existe"
    if not stat.S_ISREG(found.st_mode):
        return f"{path} no es un archivo común (un enlace simbólico, un directorio…)"
    return f"{path} está vacío" if found.st_size == 0 else None


def last_failure(messages):
    """La última herramienta que falló en la conversación, con su error (corto), o que ninguna falló."""
    names = {b.get("id"): b.get("name") for b in blocks_of(messages, "tool_use")}
    failed = [b for b in blocks_of(messages, "tool_result") if b.get("is_error")]
    if not failed:
        return "ninguna herramienta falló; el modelo terminó sin escribir lo que falta"
    last = failed[-1]
    content = last.get("content")
    shown = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    shown = " ".join(shown.split())
    shown = shown if len(shown) <= 160 else shown[:159] + "…"
    return f"{names.get(last.get('tool_use_id'), 'una herramienta')} falló con «{shown}»"


def _then_checkpoint():
    if os.path.exists(CHECKPOINT_FILE):
        return (
            f"Corrige la causa y retoma con --resume ({CHECKPOINT_FILE} quedó en el último punto guardado, "
            "y el modelo vuelve a decidir desde ahí), o empieza de nuevo sin --resume."
        )
    return "Corrige la causa y vuelve a correr sin --resume (todavía no había nada guardado)."


def check_resumable(cp):
    """Antes de reanudar: ni una tarea ya terminada (otra llamada al modelo cuesta, y un modelo real
    puede actuar), ni una conversación que la API rechazaría con un 400 en cada intento."""
    if FINISHED in cp:
        raise HarnessError(
            f"La tarea de {CHECKPOINT_FILE} ya terminó ({_shown(cp[FINISHED])}): no queda nada que retomar "
            "y no se vuelve a llamar al modelo. Para hacerla otra vez, corre sin --resume."
        )
    problem = conversation_problem(cp)
    if problem:
        raise HarnessError(
            f"{CHECKPOINT_FILE} guarda una conversación que la API rechazaría: {problem}. Retomar repetiría "
            "ese rechazo en cada intento: bórralo y empieza de nuevo sin --resume."
        )


def conversation_problem(cp):
    """El primer tool_use de la conversación guardada (con el turno colgante) que la API rechazaría."""
    pending = cp.get("pendingAssistantContent") or (
        [{"type": "tool_use", **cp["pendingToolUse"]}] if cp.get("pendingToolUse") else []
    )
    seen = set()
    for call in blocks_of([*cp["messages"], {"content": pending}], "tool_use"):
        problem = call_problem(call, seen)
        if problem:
            return problem
        seen.add(call["id"])
    return None


def interrupted(how="con Ctrl-C"):
    """La línea de un Ctrl-C (o de SIGTERM, SIGHUP: ``how``): dónde quedó el disco y cómo seguir."""
    if os.path.exists(CHECKPOINT_FILE):
        return (
            f"Interrumpido {how}. {CHECKPOINT_FILE} quedó en el último punto guardado: retoma con "
            f"{'--live ' * _live()}--resume."
        )
    return f"Interrumpido {how} antes del primer punto guardado: vuelve a correr sin --resume."

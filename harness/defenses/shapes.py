"""¿Tiene un punto de control (o un registro de efectos) ya parseado la forma que el agente espera?

Un JSON válido no basta: un archivo editado a mano, o de otro programa, puede parsear y aun así faltarle
una clave o nombrar una herramienta que no existe. Cada función devuelve el primer problema en una
frase en español, o None si la forma es la esperada; quien llama decide el mensaje de error.
"""

import json

from harness.contract import BATCH_VERSION, CHECKPOINT_KEYS, PENDING_CONTENT
from harness.defenses.bounded import MAX_COUNT
from harness.protocol import blocks_of, pairing_error
from harness.tools import TOOL_IMPLS

ROLES = ("user", "assistant")


def _shown(value):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "…"


def _known_tool(name):
    return isinstance(name, str) and name in TOOL_IMPLS


# Qué campo de texto identifica a cada tipo de bloque que se empareja.
ID_FIELDS = {"tool_use": "id", "tool_result": "tool_use_id"}


def _named(text):
    """Un id o una clave en un mensaje, tal cual, pero sin hacer enorme la línea."""
    return text if len(text) <= 40 else text[:37] + "…"


def _count(value):
    """Un entero entre 0 y ``MAX_COUNT`` de verdad (en Python ``True`` también es un entero; más allá de
    2^53 − 1, otro lector de JSON ya no lee el mismo número)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def _message_problem(i, message):
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        return f"messages[{i}] no es un mensaje con role «user» o «assistant»"
    content = message.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list) or not all(
        isinstance(b, dict) and isinstance(b.get("type"), str) for b in content
    ):
        return f"messages[{i}].content no es un texto ni una lista de bloques con «type»"
    for b in content:
        field = ID_FIELDS.get(b["type"])
        if field and not isinstance(b.get(field), str):
            return f"un bloque {b['type']} de messages[{i}] no tiene «{field}» de texto"
    return None


def messages_problem(messages):
    if not isinstance(messages, list) or not messages:
        return "«messages» debe ser una lista no vacía de mensajes"
    problem = next(filter(None, (_message_problem(i, m) for i, m in enumerate(messages))), None)
    if problem:
        return problem
    error = pairing_error(messages)
    if error:
        return f"«messages» no respeta el emparejamiento tool_use/tool_result ({error})"
    if messages[-1]["role"] != "user":
        return "«messages» debe terminar en un mensaje de usuario"
    return None


def pending_problem(pending, messages):
    if pending is None:
        return None
    if not isinstance(pending, dict) or not isinstance(pending.get("id"), str) or not pending["id"]:
        return "«pendingToolUse» debe ser null o un objeto con «id», «name» e «input»"
    if not _known_tool(pending.get("name")):
        return f"«pendingToolUse» nombra una herramienta desconocida: {_shown(pending.get('name'))}"
    if not isinstance(pending.get("input"), dict):
        return "«pendingToolUse.input» debe ser un objeto"
    if pending["id"] in {b.get("id") for b in blocks_of(messages, "tool_use")}:
        return f"«pendingToolUse» repite el id {_named(pending['id'])}, que ya está respondido en «messages»"
    return None


def pending_content_problem(cp):
    """La clave opcional ``pendingAssistantContent`` (el turno completo de un modelo real): si está,
    tiene que traer exactamente el tool_use colgante. Se revisa al cargar, antes de que reconcile
    vuelva a ejecutar nada."""
    content = cp.get(PENDING_CONTENT)
    if content is None:
        return None
    pending = cp["pendingToolUse"]
    blocks = content if isinstance(content, list) else []
    ids = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    if not pending or not blocks or not all(isinstance(b, dict) for b in blocks) or ids != [pending["id"]]:
        return f"«{PENDING_CONTENT}» no trae exactamente el tool_use de «pendingToolUse»"
    return None


def _scene_problem(cp):
    """Lo que comparten las dos versiones: las claves, la tarea, los contadores y los mensajes."""
    missing = [key for key in CHECKPOINT_KEYS if key not in cp]
    if missing:
        return f"falta la clave «{missing[0]}»"
    if not isinstance(cp["task"], str):
        return f"«task» debe ser un texto y es {_shown(cp['task'])}"
    for key in ("turns", "tokensUsed"):
        if not _count(cp[key]):
            return f"«{key}» debe ser un entero entre 0 y 2^53 − 1 y es {_shown(cp[key])}"
    return messages_problem(cp["messages"])


def checkpoint_problem(cp):
    """El primer problema de forma del punto de control ``cp`` (con su versión ya comprobada)."""
    return (
        _scene_problem(cp)
        or pending_problem(cp["pendingToolUse"], cp["messages"])
        or pending_content_problem(cp)
    )


def batch_checkpoint_problem(cp):
    """El primer problema del punto de control del agente de lotes (``version: 2``, una lista de
    llamadas colgantes), versión incluida."""
    if not isinstance(cp, dict):
        return f"no es un objeto JSON sino {_shown(cp)}"
    version = cp.get("version")
    if version != BATCH_VERSION or isinstance(version, bool):
        return f"tiene version={_shown(version)} y este agente solo acepta version={BATCH_VERSION}"
    problem = _scene_problem(cp)
    pending = cp.get("pendingToolUse")
    if problem or not isinstance(pending, list):
        return problem or "«pendingToolUse» debe ser una lista de llamadas"
    problems = (
        pending_problem(p, cp["messages"]) if p is not None else "hay un null en «pendingToolUse»"
        for p in pending
    )
    problem = next(filter(None, problems), None)
    if problem:
        return problem
    ids = [p["id"] for p in pending]
    return "«pendingToolUse» repite un id" if len(set(ids)) != len(ids) else None


def ledger_problem(effects):
    """El primer problema de forma del registro ``effects`` ya parseado, o None."""
    if not isinstance(effects, dict):
        return f"debe ser un objeto {{tool_use_id: anotación}} y es {_shown(effects)}"
    for tool_use_id, entry in effects.items():
        where = f"la anotación de {_named(tool_use_id)}"
        if not isinstance(entry, dict) or not _known_tool(entry.get("name")):
            return f"{where} no es un objeto con el «name» de una herramienta conocida"
        if not isinstance(entry.get("result"), str):
            return f"{where} no tiene un «result» de texto"
        if not _count(entry.get("at")):
            return f"{where} no tiene un «at» entero entre 0 y 2^53 − 1 (milisegundos)"
    return None


def pending_entry_problem(pending, effects):
    """La anotación del registro para la llamada colgante tiene que ser de su misma herramienta: con
    otro «name» no es un acierto sino un registro que no corresponde a este punto de control (reusar su
    resultado le mentiría al modelo). Devuelve el problema en una frase, o None."""
    entry = effects.get(pending["id"]) if pending else None
    if entry and entry["name"] != pending["name"]:
        return f"la anotación de {pending['id']} es de {entry['name']}, pero la llamada colgante es de {pending['name']}"
    return None

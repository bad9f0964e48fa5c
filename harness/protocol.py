"""Las reglas de la API de mensajes que el arnés tiene que respetar.

La regla dura: cada bloque ``tool_use`` de un turno del asistente se responde con un
``tool_result`` de su mismo id en el mensaje de usuario siguiente, y los roles se alternan.
Los textos de error son los de la API real (en inglés), para reconocerlos cuando aparezcan.
"""


def block_to_dict(block):
    """Un bloque de contenido del SDK (o del modelo guionado) como JSON simple, para guardarlo
    en ``messages`` y en el punto de control y poder reenviarlo tal cual."""
    if isinstance(block, dict):
        return block
    # warnings=False: un «input» que no es un objeto lo rechaza checked_call en una línea en español;
    # el aviso de pydantic (en inglés, cuatro líneas) no le sirve a nadie.
    return block.model_dump(mode="json", exclude_none=True, warnings=False)


def _blocks(message):
    content = message.get("content")
    return content if isinstance(content, list) else []


def all_blocks(messages):
    """Cada bloque (dict) de cada mensaje; un contenido de texto no tiene bloques."""
    for message in messages:
        yield from (b for b in _blocks(message) if isinstance(b, dict))


def blocks_of(messages, block_type):
    """Los bloques ``block_type`` («tool_use», «tool_result») de ``messages``, en orden: la única
    manera de buscarlos, para que el arnés, el modelo guionado y las revisiones lean lo mismo."""
    return [b for b in all_blocks(messages) if b.get("type") == block_type]


def _ids(message, block_type, key):
    return [b.get(key) for b in blocks_of([message], block_type)]


def pairing_error(messages):
    """El error que la API devolvería (400) para esta conversación, o None si la acepta."""
    for i, message in enumerate(messages):
        expected = "user" if i % 2 == 0 else "assistant"
        if message.get("role") != expected:
            return (
                'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{message.get("role")}" roles in a row'
            )
        previous_uses = _ids(messages[i - 1], "tool_use", "id") if i else []
        stray = [tid for tid in _ids(message, "tool_result", "tool_use_id") if tid not in previous_uses]
        if stray:
            return (
                f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{', '.join(map(str, stray))}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
        uses = _ids(message, "tool_use", "id")
        answered = _ids(messages[i + 1], "tool_result", "tool_use_id") if i + 1 < len(messages) else []
        missing = [tid for tid in uses if tid not in answered]
        if missing:
            return (
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message."
            )
    return None

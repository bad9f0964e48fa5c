"""El bucle del Curso 7, «Fundamentos del arnés de agente»: sin puntos de control.

Llamar al modelo con ``messages`` y, mientras ``stop_reason == "tool_use"``, ejecutar la herramienta
y volver a llamar. Es el punto de partida de la lección: si el proceso muere, todo se pierde.
Las piezas pequeñas (``ask_model``, ``final_text``…) las reutiliza el agente con puntos de control.
"""

import os

from harness.contract import MAX_TURNS_VAR
from harness.defenses.replies import check_final, check_stop_reason, continue_paused
from harness.protocol import block_to_dict
from harness.tools import run_tool

# El modelo por omisión de --live (ANTHROPIC_MODEL lo cambia); el guionado lo ignora.
# No claude-sonnet-4-5: el SDK lo marca obsoleto (fin de vida: 30 de noviembre de 2026).
MODEL = "claude-sonnet-5-5"
MAX_TOKENS = 1024
# Un tope de seguridad: la tarea guionada usa 3 turnos, y cada muerte en la ventana de write_report
# agrega 2 (is_error → check_report → write_report); 20 cubre las 6 muertes por tarea de la tortura.
# AGENT_MAX_TURNS (un entero positivo) lo baja para probar el tope sin un modelo que no termina.
_ASKED = os.environ.get(MAX_TURNS_VAR, "")
# Solo cifras ASCII y pocas: «²» es un dígito para isdigit, y int() no lo lee (ni miles de cifras).
_READABLE = _ASKED.isascii() and _ASKED.isdigit() and len(_ASKED) < 10
MAX_TURNS = int(_ASKED) if _READABLE and int(_ASKED) > 0 else 20


def ask_model(client, tools, messages):
    """Una llamada a ``client.messages.create``, con los mismos argumentos que el SDK real. Un turno en
    pausa (``pause_turn``) se continúa aquí mismo; un ``stop_reason`` que no es ``tool_use`` ni un final
    (cortado, rechazo, desconocido) es un error de una línea, nunca un final (``harness.defenses.replies``)."""

    def create(sent):
        return client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, tools=tools, messages=sent)

    return check_stop_reason(continue_paused(create, messages), MAX_TOKENS)


def usage_tokens(response):
    return response.usage.input_tokens + response.usage.output_tokens


def final_text(response):
    """El texto con el que el modelo cierra la tarea (un cierre vacío es un error, no un final)."""
    blocks = [block_to_dict(b) for b in response.content]
    text = "".join(b.get("text") or "" for b in blocks if b["type"] == "text")
    check_final(response, text)
    return text


def tool_result(tool_use_id, content, is_error=False):
    """Un bloque ``tool_result`` emparejado con su ``tool_use`` por id."""
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    return {**block, "is_error": True} if is_error else block


def tool_uses(content):
    """Los bloques ``tool_use`` de un turno del asistente (ya como JSON simple)."""
    return [b for b in content if b["type"] == "tool_use"]


def run_tool_uses(content):
    """Ejecuta cada herramienta pedida y devuelve sus ``tool_result``; un error no detiene el bucle."""
    results = []
    for block in tool_uses(content):
        try:
            output = run_tool(block["name"], block["input"])
        except Exception as err:  # el modelo recibe el error y decide, como en el Curso 7
            results.append(tool_result(block["id"], f"Error de ejecución de la herramienta: {err}", True))
            continue
        results.append(tool_result(block["id"], output))
    return results


def run_agent(client, task, tools):
    """El bucle básico: devuelve el texto final del modelo."""
    messages = [{"role": "user", "content": task}]
    response = ask_model(client, tools, messages)
    turns = 0
    while response.stop_reason == "tool_use":
        if turns >= MAX_TURNS:
            return f"Se alcanzó el máximo de {MAX_TURNS} turnos, deteniéndonos por nuestra cuenta"
        turns += 1
        content = [block_to_dict(b) for b in response.content]
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": run_tool_uses(content)})
        response = ask_model(client, tools, messages)
    return final_text(response)

"""El modelo guionado: la forma del SDK, el guion leído de la conversación y sus errores."""

import anthropic
import pytest

from harness.base_loop import MAX_TURNS, ask_model
from harness.contract import DETOUR_UNKNOWN_TOOL, DETOUR_VAR, UNKNOWN_TOOL
from harness.protocol import block_to_dict
from harness.scripted_model import DAMAGED_TEXT, FINAL_TEXT, READ_ATTEMPTS, ScriptedModel, ScriptError
from harness.tools import TOOLS

TASK = [
    {"role": "user", "content": "Convierte sales-notes.txt en un reporte breve y escríbelo en report.txt."}
]


def reply(messages):
    return ask_model(ScriptedModel(), TOOLS, messages)


def answer(messages, response, content, is_error=False):
    """La conversación siguiente: el turno del asistente y el resultado de su herramienta."""
    call = block_to_dict(response.content[0])
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": content}
    if is_error:
        result["is_error"] = True
    return messages + [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]


def test_reply_has_the_sdks_shape():
    response = reply(TASK)
    message = anthropic.types.Message.model_validate(response.model_dump())
    assert message.stop_reason == "tool_use" and message.content[0].type == "tool_use"
    assert (response.content[0].id, response.content[0].name) == ("toolu_01", "read_notes")
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


def test_the_reply_depends_only_on_the_conversation():
    """Dos clientes nuevos (dos procesos, en la práctica) responden lo mismo a lo mismo."""
    first = reply(TASK)
    conversation = answer(TASK, first, "notas")
    assert reply(conversation).model_dump() == ask_model(ScriptedModel(), TOOLS, conversation).model_dump()
    assert reply(conversation).content[0].name == "count_words"


def test_after_is_error_on_write_report_the_model_verifies():
    messages = answer(TASK, reply(TASK), "- Cliente A: algo\n- Cliente B: otra")
    messages = answer(messages, reply(messages), "sales-notes.txt tiene 8 palabras")
    write = reply(messages)
    assert write.content[0].name == "write_report"
    assert write.content[0].input["content"].count("- Cliente") == 2

    failed = answer(messages, write, "estado desconocido", is_error=True)
    check = reply(failed)
    assert check.content[0].name == "check_report"
    missing = answer(failed, check, "report.txt no existe: el reporte no se escribió")
    assert reply(missing).content[0].name == "write_report"
    done = reply(answer(failed, check, "report.txt existe y contiene el reporte 1 vez"))
    assert done.stop_reason == "end_turn" and "Verifiqué" in done.content[0].text

    assert reply(answer(messages, write, "Reporte escrito")).content[0].text == FINAL_TEXT


def test_a_conversation_the_api_would_reject_is_refused():
    first = reply(TASK)
    unanswered = TASK + [{"role": "assistant", "content": [block_to_dict(first.content[0])]}]
    with pytest.raises(ScriptError, match="`tool_use` ids were found without `tool_result`"):
        reply(unanswered + [{"role": "user", "content": "sigue"}])


def test_past_its_script_it_raises_a_spanish_error():
    with pytest.raises(ScriptError, match="el guion se terminó: la conversación ya tiene la respuesta final"):
        reply(answer(TASK, reply(TASK), "notas") + [{"role": "assistant", "content": "ok"}, TASK[0]])
    unknown = {"type": "tool_use", "id": "toolu_01", "name": "borrar_todo", "input": {}}
    stray = TASK + [
        {"role": "assistant", "content": [unknown]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "ok"}]},
    ]
    with pytest.raises(ScriptError, match="no hay respuesta guionada para un tool_result de borrar_todo"):
        reply(stray)


@pytest.mark.parametrize("tool", ["read_notes", "count_words", "check_report"])
def test_a_read_only_is_error_is_retried_then_given_up_in_words(tool):
    """V1: un error de lectura pasajero (EIO, EACCES una vez) no atasca la tarea: el modelo vuelve a
    llamar a la misma herramienta con la misma entrada; tras READ_ATTEMPTS fallas seguidas, se rinde
    con un texto que nombra la herramienta y el error, sin inventar un resultado."""
    messages = answer(TASK, reply(TASK), "- Cliente A: algo")
    steps = {"read_notes": TASK, "count_words": messages}
    if tool == "check_report":
        messages = answer(messages, reply(messages), "sales-notes.txt tiene 4 palabras")
        messages = answer(messages, reply(messages), "estado desconocido", is_error=True)
        steps[tool] = messages
    messages = steps[tool]
    call = reply(messages)
    assert call.content[0].name == tool
    for attempt in range(1, READ_ATTEMPTS + 1):
        messages = answer(
            messages, call, "Error de ejecución de la herramienta: no se pudo leer x: sin permiso", True
        )
        call = reply(messages)
        if attempt < READ_ATTEMPTS:
            assert (call.content[0].name, call.content[0].input) == (
                tool,
                reply(steps[tool]).content[0].input,
            )
    assert call.stop_reason == "end_turn"
    assert call.content[0].text.startswith(f"No pude completar la tarea: {tool} falló {READ_ATTEMPTS} veces")
    assert "sin permiso" in call.content[0].text
    # Una lectura que vuelve bien después de fallar sigue el guion como si nada.
    recovered = answer(steps[tool], reply(steps[tool]), "falla", True)
    recovered = answer(recovered, reply(recovered), "report.txt no existe: el reporte no se escribió")
    assert reply(recovered).stop_reason == "tool_use"


def test_a_damaged_report_is_not_written_over():
    messages = answer(TASK, reply(TASK), "- Cliente A: algo")
    messages = answer(messages, reply(messages), "sales-notes.txt tiene 4 palabras")
    messages = answer(messages, reply(messages), "estado desconocido", is_error=True)
    damaged = answer(
        messages, reply(messages), "report.txt existe pero una copia está cortada: el reporte está dañado"
    )
    assert reply(damaged).content[0].text == DAMAGED_TEXT


def test_repeated_deaths_in_the_write_window_keep_the_script_going_until_the_agent_limit():
    """Cada muerte en ① o ② de write_report agrega un ciclo is_error → check_report → write_report;
    el guion sigue mientras el bucle del agente (MAX_TURNS) no haya cortado."""
    messages = answer(TASK, reply(TASK), "- Cliente A: algo")
    messages = answer(messages, reply(messages), "sales-notes.txt tiene 4 palabras")
    write = reply(messages)
    for _ in range(MAX_TURNS // 2):  # 3 + 2 × ciclos > MAX_TURNS llamadas
        messages = answer(messages, write, "estado desconocido", is_error=True)
        check = reply(messages)
        messages = answer(messages, check, "report.txt no existe: el reporte no se escribió")
        write = reply(messages)
        assert write.content[0].name == "write_report"
    assert int(write.content[0].id.removeprefix("toolu_")) > MAX_TURNS


def test_the_unknown_tool_detour_asks_for_it_first_then_follows_the_script(monkeypatch):
    """Con SCRIPTED_MODEL_DETOUR=herramienta-desconocida, el primer turno pide una herramienta que no
    existe; tras su is_error, el guion de siempre (read_notes, con el id siguiente). Sin la variable, el
    primer turno es el de la lección."""
    monkeypatch.setenv(DETOUR_VAR, DETOUR_UNKNOWN_TOOL)
    first = reply(TASK)
    assert (first.content[0].id, first.content[0].name) == ("toolu_01", UNKNOWN_TOOL)
    after = reply(answer(TASK, first, f"no existe la herramienta {UNKNOWN_TOOL}", is_error=True))
    assert (after.content[0].id, after.content[0].name) == ("toolu_02", "read_notes")
    monkeypatch.delenv(DETOUR_VAR)
    assert reply(TASK).content[0].name == "read_notes"

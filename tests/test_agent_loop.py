"""El bucle del agente de referencia en el mismo proceso: el tope de turnos de la lección."""

import pytest
from seed_text import fill, template

from harness.base_loop import MAX_TURNS
from harness.contract import FINISHED
from harness.defenses.replies import TurnLimitReached
from harness.scripted_model import Message, ToolUseBlock, Usage
from harness.tools import TOOLS, prepare_task_files
from solutions import agent as reference


class AlwaysReadNotes:
    """Un modelo que nunca termina: siempre pide leer las notas otra vez."""

    def __init__(self):
        self.messages = self
        self.calls = 0

    def create(self, **_):
        self.calls += 1
        block = ToolUseBlock(f"toolu_{self.calls:02d}", "read_notes", {"path": "sales-notes.txt"})
        return Message(self.calls, [block], "tool_use", Usage(10, 5))


def test_the_loop_stops_itself_at_max_turns(tmp_path, monkeypatch, capsys):
    """El tope no es un final del modelo: un error (salida 1 en main) con la línea de la lección, y el
    punto de control queda sin marca de terminado, para que --resume siga."""
    monkeypatch.chdir(tmp_path)
    prepare_task_files()
    model = AlwaysReadNotes()
    with pytest.raises(TurnLimitReached) as stop:
        reference.run_agent(model, reference.TASK, TOOLS)
    assert str(stop.value).startswith(fill(template("Se alcanzó el máximo de ${MAX_TURNS}"), n=MAX_TURNS))
    assert "--resume" in str(stop.value) and FINISHED not in reference.load_checkpoint()
    assert model.calls == MAX_TURNS + 1  # la respuesta que ya no se ejecuta también se pidió
    assert capsys.readouterr().out.count("[save B]") == MAX_TURNS
    assert reference.load_checkpoint()["turns"] == MAX_TURNS


@pytest.mark.parametrize("variant", [True, False], ids=["dos-puntos", "solo-b"])
def test_point_a_is_the_only_difference_of_the_solo_b_variant(tmp_path, monkeypatch, capsys, variant):
    monkeypatch.chdir(tmp_path)
    prepare_task_files()
    with pytest.raises(TurnLimitReached):
        reference.run_agent(AlwaysReadNotes(), reference.TASK, TOOLS, point_a=variant)
    out = capsys.readouterr().out
    assert out.count("[save A]") == (MAX_TURNS if variant else 0)
    assert out.count("[save B]") == MAX_TURNS

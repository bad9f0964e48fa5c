"""Claim 20 de la lección («Proporción»): lo que cuestan las escrituras de un turno frente a un turno del
modelo real (``harness.notebook.turn_cost``). Con credencial, el turno se mide con el SDK de verdad (aquí,
contra la API local de ``tests/fake_messages_api.py``); sin ella, no se mide, y la salida lo dice y cita
de dónde sale la cifra. El modelo guionado nunca cuenta como turno del modelo."""

import io
import json
import os
from contextlib import redirect_stdout

import pytest

from harness.notebook import turn_cost
from harness.notebook.turn_cost import durable_turn, show_turn_cost, time_turns, times_text
from tests.fake_messages_api import TEST_KEY, FakeMessagesAPI

CHECKPOINT = {"version": 1, "task": "t", "turns": 1, "tokensUsed": 0, "messages": [], "pendingToolUse": None}
MESSAGES = [{"role": "user", "content": "Convierte sales-notes.txt en un reporte breve."}]


@pytest.fixture
def no_credentials(monkeypatch):
    for name in [n for n in os.environ if n.startswith("ANTHROPIC_")]:
        monkeypatch.delenv(name)


def printed(writes, durable, messages=MESSAGES):
    with redirect_stdout(io.StringIO()) as out:
        show_turn_cost(writes, durable, messages)
    return out.getvalue()


def test_a_turns_bytes_are_the_files_it_wrote_after_the_turn(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def grow(turn):
        (tmp_path / "a").write_text("x" * turn)

    measured = time_turns(grow, files=["a", "a"], turns=3)
    assert measured.written == [2, 4, 6] and measured.bytes_in_turn(3) == 6
    assert measured.ms > 0


def test_the_durable_turn_writes_a_checkpoint_and_a_growing_ledger(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    measured = time_turns(durable_turn(CHECKPOINT), files=["checkpoint.json", "effects.json"], turns=3)
    assert json.loads((tmp_path / "checkpoint.json").read_text()) == CHECKPOINT
    assert sorted(json.loads((tmp_path / "effects.json").read_text())) == ["toolu_01", "toolu_02", "toolu_03"]
    assert measured.written[0] < measured.written[1] < measured.written[2]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint.json", "effects.json"]  # sin temporales


def test_without_a_key_the_model_turn_is_not_measured_and_the_figure_is_cited(no_credentials, monkeypatch):
    def must_not_run(messages):
        raise AssertionError("sin credencial no se llama a ningún modelo")

    monkeypatch.setattr(turn_cost, "model_turn_ms", must_not_run)
    out = printed(turn_cost.Turns(0.5, [1]), turn_cost.Turns(2.0, [1]))
    assert "tres escrituras atómicas por turno:    0,50 ms" in out
    assert "un turno del modelo real: no se mide aquí (no hay ANTHROPIC_API_KEY" in out
    assert (
        "no es una medición: la lección («Proporción») habla de «una tarea chica que termina en unos segundos»"
        in out
    )
    assert "dura unas 500 veces lo que las tres escrituras con fsync" in out  # 1.000 ms / 2 ms
    assert "guionado" not in out


def test_with_a_key_one_real_call_is_timed(no_credentials, monkeypatch):
    with FakeMessagesAPI() as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        out = printed(turn_cost.Turns(0.5, [1]), turn_cost.Turns(2.0, [1]))
    assert api.statuses == [200]  # una llamada de verdad, con las herramientas de la tarea
    sent = api.requests[0][1]
    assert sent["messages"] == MESSAGES and {t["name"] for t in sent["tools"]} >= {
        "read_notes",
        "write_report",
    }
    assert "un turno del modelo real (--live), medido ahora con una llamada:" in out
    assert "no se mide aquí" not in out and TEST_KEY not in out


def test_a_failed_live_call_says_so_and_falls_back_to_the_cited_figure(no_credentials, monkeypatch):
    with FakeMessagesAPI() as api:
        api.fail(401, times=5)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        out = printed(turn_cost.Turns(0.5, [1]), turn_cost.Turns(2.0, [1]))
    assert "no se mide aquí (la llamada de --live falló:" in out
    assert "no es una medición" in out and "medido ahora" not in out


@pytest.mark.parametrize(
    ("ratio", "text"),
    [(648.2, "unas 650 veces"), (1234.0, "unas 1200 veces"), (23456, "unas 23\u00a0000 veces")],
)
def test_a_ratio_reads_as_an_order_of_magnitude(ratio, text):
    assert times_text(ratio) == text

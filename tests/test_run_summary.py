"""Una corrida en una fila de tabla (``harness.notebook.run_summary``): lo que muestran las tablas de
fallas de «De la lección a producción»."""

import pytest

from harness.notebook.run_summary import outcome, said, summary_row
from harness.runs.launcher import AgentRun


def test_the_last_line_comes_from_stderr_first_and_hides_the_folder(tmp_path):
    run = AgentRun(1, "[turn 1][save A]\n", f"aviso\nNo se pudo leer {tmp_path}/checkpoint.json\n")
    assert said(run, tmp_path) == "No se pudo leer …/checkpoint.json"
    assert said(AgentRun(0, "[done] listo\n", "")) == "[done] listo"
    assert said(AgentRun(0, "", "")) == "(nada)"


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (AgentRun(1, "", "Traceback (most recent call last):\n  ...\nKeyError: 'x'\n"), "una traza"),
        (AgentRun(0, "[done] listo\n", ""), "[done]"),
        (AgentRun(1, "", "No se pudo parsear effects.json\n"), "un error de una línea"),
    ],
)
def test_each_ending_has_its_words(run, expected):
    assert outcome(run) == expected


def test_a_row_holds_the_case_the_code_the_traceback_and_the_last_line():
    run = AgentRun(1, "", "Traceback (most recent call last):\nKeyError: 'messages'\n")
    assert summary_row("sin messages", run) == ["sin messages", 1, "sí", "KeyError: 'messages'"]

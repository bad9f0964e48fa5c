"""Las herramientas rechazan entradas malas con un error claro, y write_report deja huella."""

import re

import pytest

from harness.base_loop import run_tool_uses
from harness.tools import READ_ONLY, TOOL_IMPLS, TOOLS, ToolError, prepare_task_files, report_copies, run_tool


@pytest.fixture
def task_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prepare_task_files()
    return tmp_path


def test_definitions_match_implementations_and_read_only_set():
    assert [t["name"] for t in TOOLS] == list(TOOL_IMPLS)
    assert READ_ONLY == set(TOOL_IMPLS) - {"write_report"}
    for tool in TOOLS:
        assert set(tool["input_schema"]["required"]) == set(tool["input_schema"]["properties"])


@pytest.mark.usefixtures("task_dir")
def test_read_and_count_the_bundled_notes():
    notes = run_tool("read_notes", {"path": "sales-notes.txt"})
    assert "Notas de ventas" in notes
    assert (
        run_tool("count_words", {"path": "sales-notes.txt"})
        == f"sales-notes.txt tiene {len(notes.split())} palabras"
    )


@pytest.mark.usefixtures("task_dir")
def test_write_report_appends_so_a_second_run_shows():
    for _ in range(2):
        run_tool("write_report", {"path": "report.txt", "content": "# Reporte de ventas\n- x\n"})
    assert report_copies() == 2
    # Lo que importa para el modelo que verifica: check_report dice cuántas copias hay.
    assert re.search(r"\b2\b", run_tool("check_report", {"path": "report.txt"}))


@pytest.mark.parametrize(
    ("name", "tool_input", "message"),
    [
        ("read_notes", {}, "falta el argumento «path»"),
        ("read_notes", {"path": "../fuera.txt"}, "queda fuera del directorio de trabajo"),
        ("read_notes", {"path": "/etc/hostname"}, "queda fuera del directorio de trabajo"),
        ("write_report", {"path": "report.txt"}, "falta el argumento «content»"),
        ("count_words", {"path": "no-existe.txt"}, "no existe el archivo no-existe.txt"),
        ("borrar_todo", {}, "no existe la herramienta borrar_todo"),
    ],
)
@pytest.mark.usefixtures("task_dir")
def test_bad_input_is_refused(name, tool_input, message):
    with pytest.raises(ToolError, match=message):
        run_tool(name, tool_input)


@pytest.mark.usefixtures("task_dir")
def test_a_refused_call_reaches_the_model_as_is_error():
    [result] = run_tool_uses([{"type": "tool_use", "id": "toolu_x", "name": "read_notes", "input": {}}])
    assert set(result) == {"type", "tool_use_id", "content", "is_error"}
    assert (result["type"], result["tool_use_id"], result["is_error"]) == ("tool_result", "toolu_x", True)
    # El prefijo es de la lección; el resto solo tiene que decir qué argumento falta.
    assert result["content"].startswith("Error de ejecución de la herramienta: ")
    assert "«path»" in result["content"]


def test_a_fresh_task_keeps_existing_notes_and_drops_the_old_report(task_dir):
    (task_dir / "sales-notes.txt").write_text("mis notas", encoding="utf-8")
    (task_dir / "report.txt").write_text("viejo", encoding="utf-8")
    prepare_task_files()
    assert (task_dir / "sales-notes.txt").read_text(encoding="utf-8") == "mis notas"
    assert not (task_dir / "report.txt").exists()

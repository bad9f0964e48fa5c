"""Las herramientas rechazan entradas malas con un error claro, y write_report deja huella."""

import errno
import os
import re

import pytest

from harness.base_loop import run_tool_uses
from harness.defenses.durable import read_bytes, remove_durably, write_durable
from harness.errors import DiskError, disk_failure, os_reason
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


# —— Archivos hostiles y errores del disco (issue 13) ——


@pytest.mark.parametrize(
    "path",
    ["checkpoint.json", "effects.json", "checkpoint.json.tmp", "report.txt.tmp", "./sub/../effects.json"],
)
@pytest.mark.parametrize("name", ["read_notes", "write_report", "check_report"])
@pytest.mark.usefixtures("task_dir")
def test_tools_refuse_the_agents_own_files(name, path):
    with pytest.raises(ToolError, match="es un archivo propio del agente"):
        run_tool(name, {"path": path, "content": "# Reporte de ventas\n"})


def test_a_symlink_to_the_agents_files_is_refused_too(task_dir):
    (task_dir / "checkpoint.json").write_text("{}", encoding="utf-8")
    (task_dir / "notas.txt").symlink_to("checkpoint.json")
    with pytest.raises(ToolError, match=r"notas\.txt es un archivo propio del agente \(checkpoint\.json\)"):
        run_tool("read_notes", {"path": "notas.txt"})


def test_a_read_error_reaches_the_model_in_spanish_without_paths(task_dir):
    (task_dir / "carpeta").mkdir()
    [result] = run_tool_uses(
        [{"type": "tool_use", "id": "t", "name": "read_notes", "input": {"path": "carpeta"}}]
    )
    assert (
        result["content"] == "Error de ejecución de la herramienta: no se pudo leer carpeta: es un directorio"
    )


def test_write_report_is_atomic_and_never_writes_through_a_leftover_temp(task_dir, tmp_path_factory):
    victim = tmp_path_factory.mktemp("fuera") / "victima"
    victim.write_bytes(b"intacto")
    (task_dir / "report.txt.tmp").symlink_to(victim)
    run_tool("write_report", {"path": "report.txt", "content": "# Reporte de ventas\n"})
    run_tool("write_report", {"path": "report.txt", "content": "# Reporte de ventas\n"})
    assert victim.read_bytes() == b"intacto" and not os.path.lexists(task_dir / "report.txt.tmp")
    assert (task_dir / "report.txt").read_text(encoding="utf-8") == "# Reporte de ventas\n" * 2


@pytest.mark.usefixtures("task_dir")
def test_a_leftover_temp_that_is_a_directory_fails_before_touching_the_file():
    os.mkdir("x.tmp")
    with pytest.raises(DiskError) as err:
        write_durable("x", b"nuevo")
    assert disk_failure(err.value).startswith("No se pudo escribir en x.tmp: es un directorio. Se detuvo ahí")
    assert "x quedó como estaba" in disk_failure(err.value) and not os.path.exists("x")


@pytest.mark.usefixtures("task_dir")
def test_read_bytes_does_not_follow_symlinks_nor_block_on_a_fifo():
    os.symlink("sales-notes.txt", "enlace")
    os.mkfifo("tuberia")
    for path, reason in (
        ("enlace", "es un enlace simbólico"),
        ("tuberia", "no es un archivo común"),
        (".", "es un directorio"),
    ):
        with pytest.raises(OSError) as err:
            read_bytes(path)
        assert os_reason(err.value).startswith(reason)


@pytest.mark.usefixtures("task_dir")
def test_remove_durably_removes_a_symlink_not_its_target():
    os.symlink("sales-notes.txt", "checkpoint.json")
    remove_durably("checkpoint.json", "no-existe")
    assert not os.path.lexists("checkpoint.json") and os.path.exists("sales-notes.txt")


@pytest.mark.parametrize(
    ("err", "line"),
    [
        (
            DiskError(OSError(errno.EIO, "x", "a.json"), "borrar", "nada cambió"),
            "No se pudo borrar a.json: error de",
        ),
        (
            DiskError(OSError(errno.EACCES, "x"), "leer", "nada cambió", "b.json"),
            "No se pudo leer b.json: sin permiso.",
        ),
        (
            OSError(errno.EPIPE, "Broken pipe"),
            "No se pudo escribir en la salida estándar: la salida está cerrada.",
        ),
        (
            OSError(errno.ENOSPC, "No space left", "c.json"),
            "Falló una operación de disco con c.json: el disco está lleno.",
        ),
        (OSError(999, "Weird"), "No se pudo escribir en la salida estándar: un error del sistema."),
    ],
)
def test_disk_failure_says_the_action_in_spanish_and_promises_nothing_it_does_not_know(err, line):
    text = disk_failure(err)
    assert text.startswith(line) and "sigue intacto" not in text
    assert not any(english in text for english in ("Broken", "No space", "Weird", "Errno", "999"))

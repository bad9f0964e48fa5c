"""El taller sabe qué celda ejecutaste y si tu última edición corrió: reconoce cada celda por su id (la
que mandan JupyterLab y Notebook 7), y una edición que falla (un IndentationError, un NameError) se dice
con su error y su línea, nombrando la versión que se comprueba en su lugar."""

import shutil

import pytest
from IPython.core.interactiveshell import InteractiveShell

from harness.notebook.workbook import Taller
from maintainer import taller as workbook

LOAD_ID = "taller-code-22"  # la celda «tu turno» de load_checkpoint


@pytest.fixture
def shell_and_taller(tmp_path, monkeypatch):
    shutil.copy(workbook.WORKBOOK, tmp_path / "taller_tu_agente.ipynb")
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    yield shell, Taller("taller_tu_agente.ipynb")
    InteractiveShell.clear_instance()


def lesson_code(cell_id):
    return workbook.lesson_cells()[cell_id.removeprefix("taller-")]


def test_an_edit_that_does_not_compile_is_named_with_its_line(shell_and_taller):
    shell, taller = shell_and_taller
    shell.run_cell(lesson_code(LOAD_ID), cell_id=LOAD_ID)
    broken = lesson_code(LOAD_ID).replace("    try:", "      try:", 1)  # una sangría de más
    shell.run_cell(broken, cell_id=LOAD_ID)
    (line,) = taller.edits_that_did_not_run()
    assert "load_checkpoint" in line and "IndentationError en la línea" in line
    assert "la versión anterior, la que sí corrió" in line
    # Lo que se comprueba es la versión que corrió, no la rota ni la celda en blanco.
    code = dict(taller.cells())[LOAD_ID]
    assert code == lesson_code(LOAD_ID).partition("\n")[2].strip("\n")


def test_a_name_error_gives_its_line_and_the_saved_cell_is_checked(shell_and_taller):
    shell, taller = shell_and_taller
    shell.run_cell(
        "#| export\ndef fresh_scene(task):\n    return tarea_que_no_existe\n\n\nfresh_scene(1)",
        cell_id="taller-code-28a",
    )
    (line,) = taller.edits_that_did_not_run()
    assert "NameError en la línea 3" in line and "la celda guardada" in line


def test_a_renamed_function_is_still_its_cell(shell_and_taller):
    shell, taller = shell_and_taller
    renamed = lesson_code(LOAD_ID).replace("def load_checkpoint", "def cargar_punto_de_control")
    shell.run_cell(renamed, cell_id=LOAD_ID)
    assert "cargar_punto_de_control" in dict(taller.cells())[LOAD_ID]
    assert taller.edits_that_did_not_run() == []

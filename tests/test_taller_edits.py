"""El taller sabe qué celda ejecutaste y si tu última edición corrió: reconoce cada celda por su id (la
que mandan JupyterLab y Notebook 7), y una edición que falla (un IndentationError, un NameError) se dice
con su error y su línea, nombrando la versión que se comprueba en su lugar. Un taller ya repartido, con
los nombres de antes (``Taller``, ``comprobar``, ``todavia_no``), sigue andando."""

import shutil

import pytest
from IPython.core.interactiveshell import InteractiveShell

from harness.errors import NotWrittenYetError, not_yet, todavia_no
from harness.notebook.workbook import Taller, Workbook
from maintainer import taller as workbook

LOAD_ID = "taller-code-22"  # la celda «tu turno» de load_checkpoint


@pytest.fixture
def shell_and_taller(tmp_path, monkeypatch):
    shutil.copy(workbook.WORKBOOK, tmp_path / "taller_tu_agente.ipynb")
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    yield shell, Workbook("taller_tu_agente.ipynb")
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


def test_a_released_workbook_with_the_old_names_still_says_what_is_missing(tmp_path, monkeypatch, capsys):
    """Un taller repartido antes del cambio de nombres: ``Taller(...)``, ``taller.comprobar(...)`` y sus
    celdas en blanco con ``raise todavia_no(...)``. Sin correr procesos, dice qué falta escribir."""
    current = open(workbook.WORKBOOK, encoding="utf-8").read()
    (tmp_path / "taller_tu_agente.ipynb").write_text(
        current.replace("not_yet", "todavia_no"), encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    InteractiveShell.instance()
    try:
        taller = Taller("taller_tu_agente.ipynb")
        taller.comprobar("escritura")
        assert "falta escribir write_json_atomic" in capsys.readouterr().out
        taller.produccion()
        assert "todavía no escribiste write_json_atomic" in capsys.readouterr().out
        taller.desafio()
        assert "Todavía no escribiste el desafío" in capsys.readouterr().out
        assert Taller.conformidad is Workbook.conformance  # correrla es la suite entera: test_taller.py
    finally:
        InteractiveShell.clear_instance()
    err = todavia_no("reconcile")
    assert isinstance(err, NotWrittenYetError) and str(err) == str(not_yet("reconcile"))

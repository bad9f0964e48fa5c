"""El taller sabe qué celda ejecutaste y si tu última edición corrió: reconoce cada celda por su id (la
que mandan JupyterLab y Notebook 7) o por lo que define, y una edición que no corrió (un
IndentationError, un NameError, una celda sin ``#| export``, una celda guardada sin ejecutar) se dice
con la celda y su línea, y ninguna comprobación corre una versión anterior. Una pieza se comprueba
apenas está escrita. Un taller ya repartido, con los nombres de antes (``Taller``, ``comprobar``,
``todavia_no``), sigue andando."""

import json
import shutil

import pytest
from IPython.core.interactiveshell import InteractiveShell

from harness.errors import NotWrittenYetError, not_yet, todavia_no
from harness.notebook.workbook import Taller, Workbook
from maintainer import paths
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


def checked(taller, capsys, piece="lectura"):
    """Lo que muestra ``check(piece)``."""
    capsys.readouterr()
    taller.check(piece)
    return capsys.readouterr().out


@pytest.mark.parametrize("with_ids", [True, False], ids=["con ids", "sin ids"])
def test_an_edit_that_does_not_compile_is_named_and_no_older_version_is_checked(
    shell_and_taller, capsys, with_ids
):
    shell, taller = shell_and_taller
    cell_id = LOAD_ID if with_ids else None  # un editor que no manda el id de la celda
    shell.run_cell(lesson_code(LOAD_ID), cell_id=cell_id)
    broken = lesson_code(LOAD_ID).replace("    try:", "      try:", 1)  # una sangría de más
    shell.run_cell(broken, cell_id=cell_id)
    (line,) = taller.edits_that_did_not_run()
    assert "load_checkpoint" in line and LOAD_ID in line and "IndentationError en la línea" in line
    shown = checked(taller, capsys)
    assert line in shown and "✓" not in shown and "escenario" not in shown  # ninguna tabla
    shell.run_cell(lesson_code(LOAD_ID), cell_id=cell_id)  # corregida y ejecutada: ya no se dice
    assert taller.edits_that_did_not_run() == []


def test_a_name_error_gives_its_line_and_nothing_is_checked(shell_and_taller, capsys):
    shell, taller = shell_and_taller
    shell.run_cell(
        "#| export\ndef fresh_scene(task):\n    return tarea_que_no_existe\n\n\nfresh_scene(1)",
        cell_id="taller-code-28a",
    )
    (line,) = taller.edits_that_did_not_run()
    assert "NameError en la línea 3" in line and "fresh_scene" in line
    assert "✓" not in checked(taller, capsys, "apertura")


@pytest.mark.parametrize("with_ids", [True, False], ids=["con ids", "sin ids"])
def test_a_cell_run_without_its_export_line_is_named(shell_and_taller, capsys, with_ids):
    shell, taller = shell_and_taller
    cell_id = LOAD_ID if with_ids else None
    shell.run_cell(lesson_code(LOAD_ID), cell_id=cell_id)
    shell.run_cell(lesson_code(LOAD_ID).partition("\n")[2], cell_id=cell_id)  # sin «#| export»
    (line,) = taller.edits_that_did_not_run()
    assert "load_checkpoint" in line and "línea 1" in line and "#| export" in line
    assert "✓" not in checked(taller, capsys)


def save_cell(cell_id, source):
    """Guarda en el taller copiado ``source`` como la celda ``cell_id`` (lo que hace el autoguardado)."""
    path = "taller_tu_agente.ipynb"
    notebook = json.load(open(path, encoding="utf-8"))
    next(c for c in notebook["cells"] if c.get("id") == cell_id)["source"] = source
    json.dump(notebook, open(path, "w", encoding="utf-8"))


def test_a_cell_edited_and_saved_but_not_run_is_named_with_its_line(shell_and_taller, capsys):
    shell, taller = shell_and_taller
    shell.run_cell(lesson_code(LOAD_ID), cell_id=LOAD_ID)
    assert taller.edits_that_did_not_run() == []  # lo guardado es aún lo de antes de ejecutarla
    save_cell(LOAD_ID, lesson_code(LOAD_ID))  # el autoguardado alcanza lo que corrió
    assert taller.edits_that_did_not_run() == []
    edited = lesson_code(LOAD_ID).splitlines()
    edited[3] += "  # cambiada"
    save_cell(LOAD_ID, "\n".join(edited))  # editada y guardada, sin ejecutarla
    (line,) = taller.edits_that_did_not_run()
    assert "load_checkpoint" in line and "desde la línea 4" in line
    assert "✓" not in checked(taller, capsys)
    save_cell(LOAD_ID, "\n".join(edited[:1] + ["def load_checkpoint(:"]))  # una celda guardada rota
    assert len(taller.edits_that_did_not_run()) == 1


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


def test_a_piece_is_checked_as_soon_as_it_is_written(shell_and_taller, capsys):
    """Con las piezas 1 a 4 escritas y run_tool_uses y reconcile en blanco, las filas de los puntos A y B
    corren (con la versión de la lección de lo que falta, y lo dicen), en cada etiqueta: ninguna espera."""
    shell, taller = shell_and_taller
    shutil.copy(paths.LESSON, ".")  # el taller enlaza la lección, como en notebooks/
    for cell_id in ("taller-code-20", LOAD_ID, "taller-code-28a", "taller-code-28"):
        shell.run_cell(lesson_code(cell_id), cell_id=cell_id)
    shown = checked(taller, capsys, "puntos")
    assert "todavía no" not in shown and "✗" not in shown and "✓" in shown, shown[-3000:]
    assert "Mientras no escribas run_tool_uses, reconcile" in shown
    assert (
        'raise not_yet("reconcile")' in open(taller.export(), encoding="utf-8").read()
    )  # el tuyo, sin la lección
    shell.run_cell(lesson_code("taller-code-38"), cell_id="taller-code-38")
    capsys.readouterr()
    taller.check("registro", "falla", "aviso", "puntos")
    shown = capsys.readouterr().out
    assert "todavía no" not in shown and "✗" not in shown and "Mientras no escribas reconcile," in shown

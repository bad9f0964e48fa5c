"""Las predicciones de la lección se anotan: antes de cada experimento una celda guarda la tuya, y la
corrida que sigue la muestra al lado de lo que pasó (``harness.notebook.prediction.compare``)."""

import ast
import re
import shutil
import unicodedata

import nbformat
import pytest
from course_files import LESSON_NOTEBOOK, output_text

from harness.notebook.prediction import ASK, UNWRITTEN, comparar, compare, matches
from solutions.grading.notebook_run import cleared, execute

PREDICTION = "**Antes de ejecutar:**"


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(LESSON_NOTEBOOK, as_version=4)


def shown_text(monkeypatch, guess, outcome, show=compare):
    """Lo que ``compare`` (o ``show``) muestra, en su versión de texto."""
    shown = []
    monkeypatch.setattr("harness.notebook.display._show_raw", shown.append)
    show(guess, outcome)
    return "\n".join(bundle["text/plain"] for bundle in shown)


@pytest.mark.parametrize(
    ("guess", "outcome", "same"),
    [
        (True, True, True),
        (1, True, False),  # un número no es un booleano
        (True, 1, False),
        ("Ninguna ", "ninguna", True),
        ("version 2", "versión 2", True),
        (["report.txt"], {"report.txt"}, True),
        ({"report.txt", "effects.json"}, {"report.txt"}, False),
        (None, None, True),
        ("None", None, False),
        (2, 2, True),
        (2.0, 2, False),
    ],
)
def test_matches_is_strict_on_types_and_lenient_on_case_and_accents(guess, outcome, same):
    assert matches(guess, outcome) is same


def test_a_guess_in_another_unicode_form_is_the_same_answer():
    decomposed = unicodedata.normalize("NFD", "no reanudó")
    assert decomposed != "no reanudó" and matches(decomposed, "no reanudó")


@pytest.mark.parametrize(
    ("guess", "outcome"), [("1", 1), ("null", None), ("None", None), (1, True), ("true", True), (2.0, 2)]
)
def test_a_guess_that_differs_only_in_type_says_so(monkeypatch, guess, outcome):
    text = shown_text(monkeypatch, {"pregunta": guess}, {"pregunta": outcome})
    assert "el valor coincide pero no el tipo" in text and "✗" in text


def test_a_wrong_guess_gets_no_note_about_types(monkeypatch):
    text = shown_text(monkeypatch, {"pregunta": "2"}, {"pregunta": 1})
    assert "✗" in text and "tipo" not in text


def test_the_table_puts_each_guess_next_to_what_happened(monkeypatch):
    text = shown_text(
        monkeypatch,
        {"copias": 2, "rama": "acierto en el registro"},
        {"copias": 1, "rama": "acierto en el registro"},
    )
    assert "copias | 2 | 1 | ✗" in text
    assert "rama | acierto en el registro | acierto en el registro | ✓" in text
    assert text.endswith("Acertaste 1 de 2.")


def test_the_old_name_of_released_notebooks_still_shows_the_table(monkeypatch):
    """Los notebooks ya repartidos llaman ``comparar(prediccion, observado)``: la misma tabla."""
    guess, outcome = {"copias": 2, "rama": "acierto"}, {"copias": 1, "rama": "acierto"}
    old = shown_text(monkeypatch, guess, outcome, show=comparar)
    assert "copias | 2 | 1 | ✗" in old and old == shown_text(monkeypatch, guess, outcome)


def test_an_unwritten_guess_asks_for_one_and_a_bad_key_is_named(monkeypatch):
    text = shown_text(monkeypatch, {"copias": ..., "copia": 1}, {"copias": 1})
    assert f"copias | {UNWRITTEN} | 1 | —" in text
    assert "Estas claves no son preguntas de este experimento: copia." in text and ASK in text
    text = shown_text(monkeypatch, 3, {"copias": 1})
    assert "tiene que ser el diccionario de su celda" in text and f"copias | {UNWRITTEN} | 1" in text


def guess_cell(cell):
    """(nombre, claves) del diccionario que la celda de predicción deja con cada valor en ``...``."""
    tree = ast.parse(cell.source)
    (assign,) = [node for node in tree.body if isinstance(node, ast.Assign)]
    assert isinstance(assign.value, ast.Dict), "la predicción es un diccionario literal"
    assert all(isinstance(v, ast.Constant) and v.value is Ellipsis for v in assign.value.values), (
        "cada valor empieza en ..., sin una respuesta ya escrita"
    )
    return assign.targets[0].id, [ast.literal_eval(k) for k in assign.value.keys]


def test_every_prediction_has_its_cell_and_its_comparison(notebook):
    cells = notebook.cells
    asked = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and PREDICTION in c.source]
    assert len(asked) >= 15
    for i in asked:
        after = cells[i + 1 :]
        ends = next(
            (j for j, c in enumerate(after) if c.cell_type == "markdown" and PREDICTION in c.source),
            len(after),
        )
        code = [c for c in after[:ends] if c.cell_type == "code"]
        assert "prediccion" in code[0].metadata.get("tags", []), f"la predicción de la celda {i} sin su celda"
        name, keys = guess_cell(code[0])
        compared = [c for c in code[1:] if re.search(rf"compare\(\s*{name}\b", c.source)]
        assert compared, f"nada compara {name} con la corrida"
        table = output_text(compared[0])
        for key in keys:
            assert re.search(rf"^{re.escape(key)} \| {re.escape(UNWRITTEN)} \| .+ \| —$", table, re.M), (
                f"{name}: la fila «{key}» no está en la salida guardada"
            )


def test_a_written_guess_is_marked_against_the_real_run(tmp_path, notebook):
    """Un kernel de verdad: la lección hasta la reanudación de la demostración, con una predicción
    escrita (una acertada y otra no). Corre en una copia: ``_trabajo`` queda en ``tmp_path``."""
    shutil.copy(LESSON_NOTEBOOK, tmp_path)
    lesson = cleared(tmp_path / "leccion_6_puntos_de_control.ipynb")
    end = next(i for i, c in enumerate(lesson.cells) if "prediccion_reanudar," in c.source)
    guess = next(c for c in lesson.cells[:end] if "prediccion_reanudar =" in c.source)
    _, keys = guess_cell(guess)
    rerun_key, copies_key = keys
    guess.source = f"prediccion_reanudar = {{{rerun_key!r}: True, {copies_key!r}: 1}}"
    lesson.cells = lesson.cells[: end + 1]
    execute(lesson, tmp_path)
    table = output_text(lesson.cells[end])
    assert f"{rerun_key} | True | False | ✗" in table
    assert f"{copies_key} | 1 | 1 | ✓" in table
    assert table.rstrip().endswith("Acertaste 1 de 2.")

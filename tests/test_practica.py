"""La Práctica (issue 48): momentos de práctica sin fin, cada respuesta medida por una corrida de verdad.

Las series salen de ``harness.notebook.practice.Practice``; cada comprobación corre el agente de la
lección (armado desde ``notebooks/leccion_6_puntos_de_control.ipynb``) con el cambio de la variante, lo
mata en su etiqueta y reanuda. Nada del notebook guardado muestra una respuesta antes de que quien
estudia escriba la suya.
"""

import ast
import contextlib
import io
import os

import nbformat
import pytest

from harness.notebook import display
from harness.notebook.exercise_feedback import FIELDS
from harness.notebook.moment_reasons import reasoned
from harness.notebook.moments import GRADED, PRACTICE
from harness.notebook.practice import ASK, Practice
from maintainer.paths import NOTEBOOKS, ROOT
from solutions.grading.edicion_estudiantes import INCLUDED

LESSON = os.path.join(NOTEBOOKS, "leccion_6_puntos_de_control.ipynb")
STORED = os.path.join(NOTEBOOKS, "practica.ipynb")


def series(seed, draws, difficulty=None):
    """Los ids de ``draws`` momentos seguidos de una serie."""
    practice, found = Practice(seed=seed), []
    with contextlib.redirect_stdout(io.StringIO()):
        for _ in range(draws):
            practice.draw(difficulty)
            found.append(practice.moment.id)
    return found


@pytest.fixture
def shown(monkeypatch, capsys):
    """Todo lo que la Práctica mostró hasta ahora: tablas (en texto) y líneas impresas."""
    lines = []
    monkeypatch.setattr(display, "_show_raw", lambda bundle: lines.append(bundle["text/plain"]))

    def text():
        lines.append(capsys.readouterr().out)
        return "\n".join(lines)

    return text


def practice_in(tmp_path, seed=0):
    return Practice(seed=seed, folder=str(tmp_path / "practica"), lesson=LESSON)


def right_answer(moment):
    return {key: value for key, (value, _) in reasoned(moment).items()}


@pytest.mark.parametrize("seed", [None, *range(30)])
def test_twenty_draws_give_at_least_ten_moments_never_the_same_twice_in_a_row(seed):
    drawn = series(seed, 20)
    assert len(set(drawn)) >= 10
    assert all(a != b for a, b in zip(drawn, drawn[1:], strict=False))
    assert set(drawn) <= set(PRACTICE)


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_a_draw_by_difficulty_gives_only_that_difficulty_and_every_one_of_it(difficulty):
    wanted = {i for i, m in PRACTICE.items() if m.difficulty == difficulty}
    drawn = series(7, 3 * len(wanted), difficulty)
    assert set(drawn) == wanted  # sin límite: la serie da la vuelta y sigue
    assert all(a != b for a, b in zip(drawn, drawn[1:], strict=False))


def test_a_difficulty_that_does_not_exist_says_so_and_keeps_the_moment(shown):
    practice = Practice(seed=1)
    practice.draw()
    before = practice.moment
    practice.draw(difficulty=4)
    assert practice.moment == before
    assert "✗ la dificultad es 1, 2 o 3" in shown()


def test_the_practice_family_shares_no_moment_with_the_graded_one():
    def parts(m):
        return m.agent, m.task, m.label

    assert not {parts(m) for m in PRACTICE.values()} & {parts(m) for m in GRADED.values()}
    assert all(i.startswith("P") for i in PRACTICE) and not set(PRACTICE) & set(GRADED)
    with pytest.raises(KeyError):
        reasoned(next(iter(GRADED.values())))  # nada aquí razona un momento con nota


def test_each_right_answer_is_measured_by_a_real_run_and_extends_the_streak(tmp_path):
    """25 sorteos recorren la familia entera (ninguno se repite antes): cada predicción razonada se
    comprueba con su corrida de verdad y tiene las siete claves bien."""
    practice = practice_in(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        for n in range(1, len(PRACTICE) + 1):
            practice.draw()
            verdict, seen, end = practice.answer(right_answer(practice.moment))
            assert verdict.wrong == () and verdict.streak == n, (practice.moment.id, verdict.observed)
            # Lo juzgado es lo que dejó la corrida en su carpeta.
            assert end.report_copies == verdict.observed["report_copies_after_resume"]
            assert (seen.resumed.returncode == 0) is verdict.observed["resume_finishes"]
    assert practice.streak == len(PRACTICE)


def test_a_wrong_key_is_named_with_its_reason_and_resets_the_streak(tmp_path, shown):
    practice = practice_in(tmp_path, seed=5)
    practice.draw()
    practice.check(right_answer(practice.moment))
    assert practice.streak == 1 and "Racha: 1 momento con las siete claves bien" in shown()
    practice.draw()
    moment = practice.moment
    guess = right_answer(moment)
    guess["ledger_has_entry"] = not guess["ledger_has_entry"]
    practice.check(guess)
    assert practice.last.wrong == ("ledger_has_entry",) and practice.streak == 0
    reason = reasoned(moment)["ledger_has_entry"][1]
    text = shown()
    assert f"✗ ledger_has_entry: {reason}." in text and "6 de 7 claves bien" in text
    assert "La racha vuelve a 0" in text
    assert f"ledger_has_entry | {guess['ledger_has_entry']} | {not guess['ledger_has_entry']} | ✗" in text


def test_the_reason_at_after_tool_says_the_tool_ran_and_save_effect_did_not():
    moment = next(m for m in PRACTICE.values() if m.label == "after-tool:2")
    value, why = reasoned(moment)["ledger_has_entry"]
    assert value is False and why == "count_words terminó pero save_effect todavía no corrió"


def test_an_unwritten_prediction_runs_nothing_and_a_checked_moment_is_not_checked_again(tmp_path, shown):
    practice = practice_in(tmp_path)
    practice.check(dict.fromkeys(FIELDS, ...))
    assert "saca uno con practica.draw()" in shown()
    practice.draw()
    practice.check(dict.fromkeys(FIELDS, ...))
    assert ASK in shown() and not (tmp_path / "practica").exists()  # ninguna corrida
    half = {**dict.fromkeys(FIELDS, ...), "pending_tool_use": None}
    practice.check(half)
    assert "✗ ledger_has_entry" in shown() and not (tmp_path / "practica").exists()
    practice.check(right_answer(practice.moment))
    practice.check(right_answer(practice.moment))
    assert practice.streak == 1 and f"ya comprobaste {practice.moment.id}" in shown()


def stored_output(notebook):
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts += [v for v in output.get("data", {}).values() if isinstance(v, str)]
    return "\n".join(parts)


def test_the_stored_notebook_asks_without_revealing_any_practice_answer():
    notebook = nbformat.read(STORED, as_version=4)
    (cell,) = [c for c in notebook.cells if c.get("id") == "prediccion"]
    values = ast.literal_eval(cell.source.split("=", 1)[1].strip())
    assert set(values) == set(FIELDS) and all(v is Ellipsis for v in values.values())
    text = stored_output(notebook)
    assert ASK in text and "lo medido" not in text and "tu predicción |" not in text
    for moment in PRACTICE.values():
        for key, (_, why) in reasoned(moment).items():
            assert why not in text and f"{key} | " not in text


def test_the_practice_comes_after_the_exercises_and_ships_to_students():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert readme.index("notebooks/ejercicio_nivel_2.ipynb") < readme.index("notebooks/practica.ipynb")
    assert any("notebooks/practica.ipynb".startswith(prefix) for prefix in INCLUDED)

"""El Nivel 1 de cada estudiante (issue 48): la familia de momentos, la lista de la clase y las copias.

Rápido: la familia y su verdad medida, una lista de 30 (tríos distintos, a lo sumo un momento en común,
uno de cada dificultad, estables), los errores de una lista mala, nada de verdad en lo repartido y el
juez con una predicción copiada. Lento (nbgrader y aislamiento de verdad): una copia calificada por
``grade_class``.
"""

import itertools
import json
import os
import shutil

import nbformat
import pytest
from nbgrader.api import Gradebook

from harness.notebook import assignment
from harness.notebook.moments import DEFAULT, FAMILY, GRADED, PRACTICE
from solutions.grading import judge, truth, variantes
from solutions.grading.grade_class import grade_class
from solutions.grading.paths import NOTEBOOKS
from solutions.grading.release import ASSIGNMENT, EXERCISES

ROSTER = [f"estudiante_{n:02d}" for n in range(30)]


def write_roster(folder, students):
    path = os.path.join(folder, "lista.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(students) + "\n")
    return path


@pytest.fixture(scope="module")
def measured():
    """La verdad de toda la familia, medida por corridas de verdad (o leída de lo ya medido hoy)."""
    return truth.measured(FAMILY)


def test_every_moment_of_the_family_is_measured_and_graded_and_practice_are_disjoint(measured):
    assert set(measured) == set(FAMILY) and len(GRADED) >= 45 and len(PRACTICE) >= 10
    assert not set(GRADED) & set(PRACTICE)
    assert {m.task for m in PRACTICE.values()}.isdisjoint({m.task for m in GRADED.values()})
    assert all(set(keys) == set(truth.OBSERVED_FIELDS) for keys in measured.values())
    # Los momentos no son todos la misma pregunta: la verdad cambia de uno a otro.
    assert len({json.dumps(v, sort_keys=True) for v in measured.values()}) >= 20


def test_a_roster_of_30_gets_30_triples_sharing_at_most_one_and_one_of_each_difficulty(tmp_path):
    mine = variantes.write_assignment(str(tmp_path), variantes.read_roster(write_roster(tmp_path, ROSTER)))
    assert len(set(mine.values())) == 30
    for a, b in itertools.combinations(mine.values(), 2):
        assert len(set(a) & set(b)) <= 1, (a, b)
    assert all(sorted(GRADED[m].difficulty for m in trio) == [1, 2, 3] for trio in mine.values())
    for student, trio in mine.items():  # lo que lee el notebook y quien califica
        assert assignment.moments_for(student, str(tmp_path)) == trio
    # Agregar estudiantes no cambia a nadie; el archivo no guarda nombres.
    more = variantes.write_assignment(str(tmp_path), [*ROSTER, "nueva", "nuevo"])
    assert {s: more[s] for s in ROSTER} == mine and len(set(more.values())) == 32
    text = (tmp_path / assignment.FILE_NAME).read_text(encoding="utf-8")
    assert not any(student in text for student in ROSTER)


def test_200_students_fit(tmp_path):
    mine = variantes.assign([f"e{n}" for n in range(200)])
    assert len({tuple(t) for t in mine.values()}) == 200 and len(variantes.triples()) >= 200


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("\n# nadie\n", "no tiene ningún id"),
        ("ana\nbeto\nana\n", "ids repetidos: «ana» (líneas 1 y 3)"),
        ("ana\nbeto garcía\n../x\n", "línea 2: «beto garcía»; línea 3: «../x»"),
    ],
    ids=["vacia", "repetidos", "invalidos"],
)
def test_a_bad_roster_says_why_in_spanish(tmp_path, capsys, text, said):
    path = tmp_path / "lista.txt"
    path.write_text(text, encoding="utf-8")
    assert variantes.main([str(path), "--carpeta", str(tmp_path)]) == 1
    assert said in capsys.readouterr().err
    assert not (tmp_path / assignment.FILE_NAME).exists()


def test_a_csv_roster_skips_its_header(tmp_path):
    path = tmp_path / "lista.csv"
    path.write_text("student_id,nombre\nana,Ana\nbeto,Beto\n", encoding="utf-8")
    assert variantes.read_roster(str(path)) == ["ana", "beto"]


def truth_lines(measured, ids):
    """Cada dato de la verdad de ``ids`` como se escribiría en JSON o en Python («"clave": valor»)."""
    for moment in ids:
        for key, value in measured[moment].items():
            yield f'"{key}": {json.dumps(value, ensure_ascii=False)}'
            yield f'"{key}": {value!r}'


def test_no_released_file_holds_a_truth(tmp_path, measured):
    variantes.write_assignment(str(tmp_path), ROSTER)
    released = [tmp_path / assignment.FILE_NAME, os.path.join(NOTEBOOKS, "ejercicio_nivel_1.ipynb")]
    texts = [open(path, encoding="utf-8").read() for path in released]
    for line in truth_lines(measured, GRADED):
        for path, text in zip(released, texts, strict=True):
            assert line not in text, (path, line)


def answers(measured, ids):
    return {m: measured[m] for m in ids}


def test_a_classmates_answers_answer_the_classmates_moments(tmp_path, measured):
    """La predicción de otra persona, entregada tal cual: en los momentos que no comparten no hay
    respuesta (0 puntos) y el veredicto nombra los momentos que respondió sin ser suyos."""
    mine = variantes.write_assignment(str(tmp_path), ROSTER)
    owner, copier = next(
        (a, b) for a, b in itertools.combinations(ROSTER, 2) if len(set(mine[a]) & set(mine[b])) == 1
    )
    handed_in = answers(measured, mine[owner])
    for slot in (1, 2, 3):
        check = judge.check_moment(slot)
        assert check(handed_in, None, 30, owner, str(tmp_path)) is None
        moment = mine[copier][slot - 1]
        if moment in mine[owner]:
            assert check(handed_in, None, 30, copier, str(tmp_path)) is None
            continue
        with pytest.raises(judge.AnswerError) as said:
            check(handed_in, None, 30, copier, str(tmp_path))
        assert f"{judge.NO_ANSWER}{moment}" in str(said.value)
        assert ", ".join(sorted(set(mine[owner]) - set(mine[copier]))) in str(said.value)
    with pytest.raises(judge.AnswerError, match="no está en la lista"):
        judge.check_moment(1)(handed_in, None, 30, "quien_no_esta", str(tmp_path))
    # Sin lista de la clase, todos tienen los tres de siempre.
    assert judge.check_moment(2)(answers(measured, DEFAULT), None, 30, "x", str(tmp_path / "nada")) is None


# —— Por el camino de verdad: grade_class con nbgrader y aislamiento ——


def level_1_with(released, predictions):
    """El Nivel 1 repartido con cada celda de respuesta k escribiendo la k-ésima predicción."""
    nb = nbformat.read(released, as_version=4)
    items = list(predictions.items())
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("momento_"):
            moment, value = items[int(grade_id[-1]) - 1]
            cell.source = f"prediction[{moment!r}] = {value!r}"
    return nb


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_copied_notebook_scores_at_most_a_third_on_unshared_moments(released_course, tmp_path, measured):
    course_dir, released = released_course("clase_copiona")
    shown = tmp_path / "repartido"
    shown.mkdir()
    for name in EXERCISES:
        shutil.copy(os.path.join(NOTEBOOKS, f"{name}.ipynb"), shown)
    mine = variantes.write_assignment(str(shown), ROSTER)
    owner, copier = next(
        (a, b) for a, b in itertools.combinations(ROSTER, 2) if len(set(mine[a]) & set(mine[b])) == 1
    )
    own = level_1_with(released["ejercicio_nivel_1"], answers(measured, mine[owner]))
    for student in (owner, copier):  # quien copia entrega el notebook de la otra persona, tal cual
        folder = os.path.join(course_dir, "submitted", student, ASSIGNMENT)
        os.makedirs(folder)
        nbformat.write(own, os.path.join(folder, "ejercicio_nivel_1.ipynb"))
    overrides = {"RestoreStructure": {"released_directory": str(shown)}}
    assert grade_class(str(course_dir), 2, 30, notebooks=("ejercicio_nivel_1",), overrides=overrides) == []
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        score = {
            (s, n): gb.find_grade(f"prueba_momento_{n}", "ejercicio_nivel_1", ASSIGNMENT, s).score
            for s in (owner, copier)
            for n in (1, 2, 3)
        }
    assert [score[owner, n] for n in (1, 2, 3)] == [2, 2, 2]
    unshared = [n for n in (1, 2, 3) if mine[copier][n - 1] not in mine[owner]]
    assert len(unshared) == 2
    assert sum(score[copier, n] for n in unshared) <= 2 * len(unshared) / 3

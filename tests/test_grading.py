"""Calificación con nbgrader: las fuentes de instructor, los notebooks repartidos y una clase de muestra.

Una sola carpeta de curso temporal para todo el módulo (generate_assignment corre una vez). Las
entregas se arman desde las fuentes: la versión repartida con las celdas de respuesta reemplazadas.
"""

import csv
import json
import os
import shutil
import tempfile

import nbformat
import pytest
from nbgrader.api import Gradebook

from maintainer.paths import ROOT as REPO_ROOT
from solutions.grading.release import ASSIGNMENT, EXERCISES, NOTEBOOKS, generate, nbgrader
from solutions.grading.sample_class import CLASS, NIVEL_1, NIVEL_2, SOURCE, cells_by_id, submit

# Para el estudiante que entra en un bucle infinito: que la celda se corte pronto. La celda más lenta
# de estos notebooks tarda alrededor de 1 s (medido con nbclient); la configuración del curso deja 30.
SHORT_TIMEOUT = 8


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course_dir = tmp_path_factory.mktemp("curso")
    released = generate(course_dir)
    return course_dir, released


# —— Los notebooks repartidos no se apartan de lo que genera nbgrader ——


def comparable(nb):
    """Lo que generate_assignment decide: celdas (tipo, id, fuente, metadatos) y metadatos del notebook.
    Las salidas y los contadores los pone la ejecución, y language_info el kernel que la hizo."""
    meta = {k: v for k, v in nb.metadata.items() if k != "language_info"}
    return meta, [(c.cell_type, c.get("id"), c.source, c.metadata) for c in nb.cells]


@pytest.mark.parametrize("name", EXERCISES)
def test_released_notebook_is_what_nbgrader_generates(course, name):
    _, released = course
    committed = nbformat.read(os.path.join(NOTEBOOKS, f"{name}.ipynb"), 4)
    assert comparable(committed) == comparable(nbformat.read(released[name], 4)), (
        "notebooks/ quedó distinto de las fuentes: corre python solutions/grading/release.py"
    )


@pytest.mark.parametrize("name", EXERCISES)
def test_released_notebook_outputs_have_no_machine_paths(name):
    with open(os.path.join(NOTEBOOKS, f"{name}.ipynb"), encoding="utf-8") as f:
        text = f.read()
    for path in (REPO_ROOT, tempfile.gettempdir(), os.path.expanduser("~")):
        assert path not in text


def test_unanswered_cells_are_tagged_raises_exception(course):
    """nbval solo acepta un error en una celda marcada; nbgrader pone el NotImplementedError."""
    for name in EXERCISES:
        for cell in nbformat.read(os.path.join(NOTEBOOKS, f"{name}.ipynb"), 4).cells:
            raised = any(o.output_type == "error" for o in cell.get("outputs", []))
            assert raised == ("raises-exception" in cell.metadata.get("tags", [])), cell.source


# —— nbgrader validate ——


def validate(course_dir, folder, *flags):
    """``nbgrader validate`` de los dos ejercicios de ``folder``, sobre copias: lo que los notebooks
    crean al ejecutarse queda en la carpeta temporal. Una sola llamada: nbgrader tarda en arrancar."""
    copies = []
    for name in EXERCISES:
        copies.append(os.path.join(course_dir, "validar", os.path.basename(folder), f"{name}.ipynb"))
        os.makedirs(os.path.dirname(copies[-1]), exist_ok=True)
        shutil.copyfile(os.path.join(folder, f"{name}.ipynb"), copies[-1])
    done = nbgrader(course_dir, "validate", *copies, *flags, check=False)
    return done.stdout + done.stderr


def test_source_notebooks_pass_their_own_tests(course):
    course_dir, _ = course
    out = validate(course_dir, SOURCE)
    assert out.count("Success! Your notebook passes all the tests.") == len(EXERCISES), out


def test_released_notebooks_fail_every_test_until_answered(course):
    course_dir, _ = course
    out = validate(course_dir, NOTEBOOKS, "--invert")
    assert out.count("Success! The notebook does not pass any tests.") == len(EXERCISES), out


# —— Una clase de muestra, de las entregas a grades.csv ——

# Puntos automáticos esperados por estudiante y notebook (de 7 y 6: el resto se califica a mano).
EXPECTED = {
    "correcta": {NIVEL_1: 7, NIVEL_2: 6},
    "equivocada": {NIVEL_1: 4, NIVEL_2: 3},
    "en_blanco": {NIVEL_1: 0, NIVEL_2: 0},
    "lanza": {NIVEL_1: 5, NIVEL_2: 3},
    "bucle": {NIVEL_1: 5, NIVEL_2: 6},
    "edita_prueba": {NIVEL_1: 5, NIVEL_2: 3},
}
MANUAL = {NIVEL_1: {"explicacion": 3}, NIVEL_2: {"explicacion_error": 4}}
MAX_SCORE = 20


def notebook_scores(course_dir):
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        return {
            student: {
                name: gb.find_submission_notebook(name, ASSIGNMENT, student).score for name in EXERCISES
            }
            for student in CLASS
        }


def grade_by_hand(course_dir, student):
    """Lo que hace quien dicta el curso en el formgrader: poner los puntos de las respuestas escritas."""
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        for name, cells in MANUAL.items():
            for grade_id, points in cells.items():
                gb.find_grade(grade_id, name, ASSIGNMENT, student).manual_score = points
        gb.db.commit()


def exported(course_dir):
    nbgrader(course_dir, "export")
    with open(os.path.join(course_dir, "grades.csv"), encoding="utf-8") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def graded(course):
    """La clase de muestra entregada y calificada una vez (autograde es lo que más tarda)."""
    course_dir, released = course
    submit(course_dir, released, CLASS)
    done = nbgrader(course_dir, "autograde", ASSIGNMENT, f"--Execute.timeout={SHORT_TIMEOUT}", check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return course_dir


def test_sample_class_gets_its_honest_scores(graded):
    course_dir = graded  # la carpeta del curso, ya calificada
    assert notebook_scores(course_dir) == EXPECTED
    grades = exported(course_dir)
    for student, scores in EXPECTED.items():
        assert float(grades[student]["score"]) == sum(scores.values()), student
        assert float(grades[student]["max_score"]) == MAX_SCORE

    grade_by_hand(course_dir, "correcta")
    assert float(exported(course_dir)["correcta"]["score"]) == MAX_SCORE

    nbgrader(course_dir, "generate_feedback", ASSIGNMENT)
    for student in CLASS:
        for name in EXERCISES:
            page = os.path.join(course_dir, "feedback", student, ASSIGNMENT, f"{name}.html")
            assert os.path.exists(page), page


def test_edited_and_deleted_test_cells_are_restored(graded):
    """Las celdas de prueba editadas o borradas volvieron desde la base de nbgrader."""
    folder = os.path.join(graded, "autograded", "edita_prueba", ASSIGNMENT)
    cells = cells_by_id(os.path.join(folder, f"{NIVEL_1}.ipynb"))
    assert "### BEGIN HIDDEN TESTS" in cells["prueba_momento_2"].source
    assert "prueba_momento_3" in cells
    assert "prueba_script" in cells_by_id(os.path.join(folder, f"{NIVEL_2}.ipynb"))


def test_a_looping_cell_is_cut_and_reported(graded):
    notebook = os.path.join(graded, "autograded", "bucle", ASSIGNMENT, f"{NIVEL_1}.ipynb")
    outputs = cells_by_id(notebook)["momento_3"].outputs
    assert [o.ename for o in outputs if o.output_type == "error"], json.dumps(outputs)[:500]

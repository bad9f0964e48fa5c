"""Una clase chica calificada con el comando de verdad (nbgrader y aislamiento reales), con lo que la
hacía injusta o lenta: una entrega sin el notebook del Nivel 2, una predicción escrita en NFD y con
mayúscula, una corrección que solo llama al agente prestado y dos entregas idénticas. Después, las
notas a mano desde un CSV y los comandos desde otra carpeta.
"""

import csv
import os
import re

import pytest
from nbgrader.api import Gradebook
from sample_class import CLASS, HONEST, NIVEL_1, NIVEL_2, submit

from solutions.grading.release import ASSIGNMENT
from tests.test_instructors import run

OWN = {
    NIVEL_1: {"explicacion": "Tras ① y ② el checkpoint y el registro quedan iguales; el reporte no."},
    NIVEL_2: {"explicacion_error": "save_effect va antes de run_tool: anota un null que reconcile cree."},
}
STUDENTS = {
    **{s: CLASS[s] for s in ("correcta", "sin_nivel_2", "escribe_en_nfd", "delega_al_agente")},
    "gemela_a": OWN,
    "gemela_b": OWN,
    "nivel_2_roto": CLASS["correcta"],  # su Nivel 2 no es JSON (lo rompe el fixture)
}
# Quienes no entregaron un Nivel 2 que se pueda calificar: su explicacion_error no lleva nota a mano.
WITHOUT_NIVEL_2 = ("sin_nivel_2", "nivel_2_roto")
# Un número con más de dos decimales, donde sea que aparezca (no dentro de una palabra o un id).
MANY_DECIMALS = re.compile(r"(?<![\w.])\d+\.\d{3,}(?![\w.])")


@pytest.fixture(scope="module")
def graded(released_course):
    course_dir, released = released_course("clase_justa")
    submit(course_dir, released, STUDENTS)
    broken = course_dir / "submitted" / "nivel_2_roto" / ASSIGNMENT / f"{NIVEL_2}.ipynb"
    broken.write_text("{no es json", encoding="utf-8")
    done = run("solutions.grading.grade_class", course_dir)
    return course_dir, done


def scores(course_dir, student):
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        return {n.name: n.score for n in gb.find_submission(ASSIGNMENT, student).notebooks}


def question_score(course_dir, student, notebook, question):
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        return gb.find_grade(question, notebook, ASSIGNMENT, student).score


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_missing_notebook_is_worth_zero_and_the_rest_is_graded(graded):
    course_dir, done = graded
    assert done.returncode == 0, done.stderr[-3000:]
    assert "NO SE PUDO CALIFICAR" not in done.stderr
    assert (
        "sin_nivel_2: calificada en" in done.stderr
        and "falta ejercicio_nivel_2.ipynb (vale 0)" in done.stderr
    )
    with open(os.path.join(course_dir, "grades.csv"), encoding="utf-8") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(STUDENTS)
    assert scores(course_dir, "sin_nivel_2") == {NIVEL_1: 6, NIVEL_2: 0}
    assert rows["sin_nivel_2"]["score"] == "6"
    page = read(os.path.join(course_dir, "informe.html"))
    assert '<li data-incompleta="sin_nivel_2">sin_nivel_2: falta ejercicio_nivel_2.ipynb</li>' in page
    assert scores(course_dir, "nivel_2_roto") == {NIVEL_1: 6, NIVEL_2: 0}
    assert "nivel_2_roto: ejercicio_nivel_2.ipynb no se puede leer (no es un notebook en JSON)" in page
    run("solutions.grading.devolucion", course_dir, "--estudiante", "sin_nivel_2")
    feedback = read(os.path.join(course_dir, "feedback", "sin_nivel_2", ASSIGNMENT, f"{NIVEL_2}.html"))
    assert "No entregaste ejercicio_nivel_2.ipynb: vale 0 de 10 puntos" in feedback


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_nfd_earns_what_nfc_earns_and_a_delegating_fix_earns_nothing(graded):
    course_dir, _ = graded
    assert scores(course_dir, "escribe_en_nfd") == scores(course_dir, "correcta") == HONEST["correcta"]
    assert question_score(course_dir, "delega_al_agente", NIVEL_2, "prueba_corregida") == 0
    assert scores(course_dir, "delega_al_agente") == HONEST["delega_al_agente"]


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_the_report_shows_the_distribution_a_legend_and_the_twins(graded):
    course_dir, _ = graded
    page = read(os.path.join(course_dir, "informe.html"))
    picture = read(os.path.join(course_dir, "informe.svg"))
    assert "Distribución de la nota total (de 19)" in page
    bins = re.findall(r'data-desde="[^"]+" data-hasta="[^"]+" data-estudiantes="(\d+)"', page)
    assert sum(map(int, bins)) == len(STUDENTS)
    assert "estudiantes con esa nota total" in picture and "pregunta con todos sus puntos" in picture
    assert "Nota total (de 19)" in picture
    # Preguntas y datos en español; los ids solo en los datos de la tabla.
    labels = re.findall(r'<text x="[^"]+" y="[^"]+" text-anchor="end"[^>]*>([^<]*)</text>', picture)
    assert "Nivel 1 · momento 1 (el de cada estudiante)" in labels
    assert "anotación en effects.json" in labels
    assert not any(re.search(r"prueba_|_tool_|ledger_", label) for label in labels), labels
    twins = re.findall(r'<li data-parecidas="([^"]*)">', page)
    assert "gemela_a gemela_b" in twins
    assert not any("sin_nivel_2" in t.split() and "delega_al_agente" in t.split() for t in twins)


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_marks_from_a_csv_all_or_nothing_and_no_long_decimals(graded, tmp_path):
    course_dir, _ = graded
    before = (course_dir / "gradebook.db").read_bytes()
    bad = tmp_path / "malas.csv"
    bad.write_text(
        "estudiante,pregunta,puntos,comentario\ncorrecta,explicacion,3,bien\nnadie,explicacion,1,\n"
        "gemela_a,explicacion_error,9,\nsin_nivel_2,explicacion_error,2,\nnivel_2_roto,explicacion_error,1,\n",
        encoding="utf-8",
    )
    done = run("solutions.grading.manual", course_dir, "--csv", bad)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert [line.split(": ")[0] for line in lines[:-1]] == [f"{bad}, fila {n}" for n in (3, 4, 5, 6)]
    # Una nota para un notebook que no se entregó (o que no es un notebook) es una fila mala.
    assert "«sin_nivel_2»: falta ejercicio_nivel_2.ipynb, así que vale 0" in lines[2]
    assert "«nivel_2_roto»: ejercicio_nivel_2.ipynb " in lines[3] and "explicacion_error no lleva" in lines[3]
    assert "Traceback" not in done.stderr
    assert (course_dir / "gradebook.db").read_bytes() == before
    good = tmp_path / "notas.csv"
    good.write_text(
        "".join(f"{s},explicacion,2.5,comentario de {s}\n" for s in STUDENTS)
        + "".join(f"{s},explicacion_error,3.14,\n" for s in STUDENTS if s not in WITHOUT_NIVEL_2),
        encoding="utf-8",
    )
    done = run("solutions.grading.manual", course_dir, "--csv", good)
    assert done.returncode == 0, done.stderr
    count = 2 * len(STUDENTS) - len(WITHOUT_NIVEL_2)
    assert done.stdout.strip() == f"{count} notas anotadas; grades.csv e informe.html al día"
    # Otra nota para la misma pregunta dice qué nota reemplaza.
    again = tmp_path / "otra.csv"
    again.write_text("correcta,explicacion,3,\n", encoding="utf-8")
    done = run("solutions.grading.manual", course_dir, "--csv", again)
    assert done.returncode == 0, done.stderr
    assert f"{again}, fila 1: correcta · explicacion: 3 reemplaza la nota anterior, 2.5" in done.stdout
    assert question_score(course_dir, "correcta", NIVEL_1, "explicacion") == 3
    done = run("solutions.grading.manual", course_dir, "correcta", "explicacion", 2)  # una suelta, igual
    assert done.stdout.splitlines()[0] == "correcta · explicacion: 2 reemplaza la nota anterior, 3"
    run("solutions.grading.manual", course_dir, "--csv", good)  # de vuelta a las notas de arriba
    with open(os.path.join(course_dir, "grades.csv"), encoding="utf-8") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert rows["correcta"]["score"] == "17.64" and rows["correcta"]["manual_pendiente"] == "0"
    run("solutions.grading.devolucion", course_dir)
    outputs = [os.path.join(course_dir, name) for name in ("grades.csv", "informe.html", "informe.svg")]
    for where, _, files in os.walk(os.path.join(course_dir, "feedback")):
        outputs += [os.path.join(where, name) for name in files]
    for path in outputs:
        text = re.sub(
            r'(fill|stroke)="#[0-9a-f]+"|[xy][12]?="[\d.]+"|(width|height)="[\d.]+"', "", read(path)
        )
        assert not MANY_DECIMALS.findall(text), path


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_instructor_commands_from_another_folder_say_one_line(graded):
    course_dir, _ = graded
    # Sin PYTHONPATH: la instalación editable del README deja la raíz del repositorio en sys.path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for module, args in (
        ("solutions.grading.manual", [course_dir, "--pendientes"]),
        ("solutions.grading.manual", ["/no/existe", "--pendientes"]),
        ("solutions.grading.grade_class", ["/no/existe"]),
        ("solutions.grading.devolucion", ["/no/existe"]),
    ):
        done = run(module, *args, cwd="/", env=env)
        assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr, done.stderr
        if done.returncode:
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr

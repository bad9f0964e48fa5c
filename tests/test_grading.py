"""Calificación con nbgrader: las fuentes de instructor, los notebooks repartidos y una clase de muestra.

Una sola carpeta de curso temporal para todo el módulo (una copia de la que arma generate_assignment,
una vez por proceso de pruebas: ``released_course`` en ``tests/conftest.py``). Las entregas se arman
desde las fuentes: la versión repartida con las celdas de respuesta reemplazadas.
"""

import contextlib
import csv
import hashlib
import json
import os
import re
import select
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

import nbformat
import pytest
from nbgrader.api import Gradebook
from sample_class import (
    CLASS,
    ESCAPE_PORT_FILE,
    HONEST,
    LOOPS,
    NIVEL_1,
    NIVEL_2,
    SOURCE,
    cells_by_id,
    submit,
)

from harness.notebook.export import PRODUCTION_NOTEBOOK
from maintainer.paths import ROOT as REPO_ROOT
from solutions.grading.preprocessors import CUT_NOTE, DEAD_NOTE, WarmExecute
from solutions.grading.release import ASSIGNMENT, EXERCISES, NOTEBOOKS, nbgrader

LESSON = "leccion_6_puntos_de_control.ipynb"
MAX_SCORE = 19

# Para el estudiante que entra en un bucle infinito: que la celda se corte pronto. Mientras nbgrader
# califica, ninguna celda corre nada pesado (las comprobaciones van fuera del kernel).
SHORT_TIMEOUT = 5
SECRET = "sk-ant-de-quien-califica"


@pytest.fixture(scope="module")
def course(released_course):
    return released_course("curso")


# El programa ``alembic`` (su punto de entrada, ``alembic.config:main``), sin la gramática de
# rfc3987_syntax (``solutions/grading/__init__.py``): lo mismo que imprime, más barato de lanzar.
ALEMBIC = (
    "import sys; sys.modules['rfc3987_syntax'] = None; from alembic.config import main; sys.exit(main())"
)


@pytest.mark.slow
def test_a_new_gradebook_records_the_version_alembic_names(course):
    """La versión del esquema que ``alembic_head`` lee sin lanzar otro proceso es la que ``alembic heads``
    imprime (lo que nbgrader preguntaría), y es la que anotó la base que creó ``generate_assignment``."""
    from nbgrader.dbutil import _temp_alembic_ini

    from solutions.grading import alembic_head

    course_dir, _ = course
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        said = subprocess.run(
            [sys.executable, "-c", ALEMBIC, "-c", ini, "heads"], capture_output=True, text=True, check=True
        ).stdout
    assert said.split("\n")[0].split(" ")[0] == alembic_head.head()
    with contextlib.closing(sqlite3.connect(os.path.join(course_dir, "gradebook.db"))) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(alembic_head.head(),)]


# —— Los notebooks repartidos no se apartan de lo que genera nbgrader ——


def comparable(nb):
    """Lo que generate_assignment decide: celdas (tipo, id, fuente, metadatos) y metadatos del notebook.
    Las salidas y los contadores los pone la ejecución, y language_info el kernel que la hizo."""
    meta = {k: v for k, v in nb.metadata.items() if k != "language_info"}
    return meta, [(c.cell_type, c.get("id"), c.source, c.metadata) for c in nb.cells]


@pytest.mark.slow
@pytest.mark.parametrize("name", EXERCISES)
def test_released_notebook_is_what_nbgrader_generates(course, name):
    _, released = course
    committed = nbformat.read(os.path.join(NOTEBOOKS, f"{name}.ipynb"), 4)
    assert comparable(committed) == comparable(nbformat.read(released[name], 4)), (
        "notebooks/ quedó distinto de las fuentes: corre python -m solutions.grading.release"
    )


@pytest.mark.parametrize("name", EXERCISES)
def test_released_notebook_outputs_have_no_machine_paths(name):
    with open(os.path.join(NOTEBOOKS, f"{name}.ipynb"), encoding="utf-8") as f:
        text = f.read()
    for path in (REPO_ROOT, tempfile.gettempdir(), os.path.expanduser("~")):
        assert path not in text


@pytest.mark.slow
def test_unanswered_cells_are_tagged_raises_exception(course):
    """nbval solo acepta un error en una celda marcada; nbgrader pone el NotImplementedError."""
    for name in EXERCISES:
        for cell in nbformat.read(os.path.join(NOTEBOOKS, f"{name}.ipynb"), 4).cells:
            raised = any(o.output_type == "error" for o in cell.get("outputs", []))
            assert raised == ("raises-exception" in cell.metadata.get("tags", [])), cell.source


def test_hidden_test_cells_do_not_import_harness():
    """Las pruebas ocultas no buscan la verdad en harness: solo sacan la respuesta como JSON."""
    for name in EXERCISES:
        for cell in nbformat.read(os.path.join(SOURCE, f"{name}.ipynb"), 4).cells:
            hidden = cell.source.partition("### BEGIN HIDDEN TESTS")[2]
            assert "harness" not in hidden, cell.source


# —— nbgrader validate ——


def validate(course_dir, folder, *flags):
    """``nbgrader validate`` de los dos ejercicios de ``folder``, sobre copias junto a la lección y a
    «De la lección a producción», como en notebooks/ (el Nivel 2 arma desde ellas el agente de la lección
    y el registro que presta): lo que los notebooks crean queda en la carpeta temporal."""
    target = os.path.join(course_dir, "validar", os.path.basename(folder))
    os.makedirs(target, exist_ok=True)
    for notebook in (LESSON, PRODUCTION_NOTEBOOK):
        shutil.copyfile(os.path.join(NOTEBOOKS, notebook), os.path.join(target, notebook))
    copies = []
    for name in EXERCISES:
        copies.append(os.path.join(target, f"{name}.ipynb"))
        shutil.copyfile(os.path.join(folder, f"{name}.ipynb"), copies[-1])
    done = nbgrader(course_dir, "validate", *copies, *flags, check=False)
    return done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_source_notebooks_pass_their_own_tests(course):
    course_dir, _ = course
    out = validate(course_dir, SOURCE)
    assert out.count("Success! Your notebook passes all the tests.") == len(EXERCISES), out


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_released_notebooks_fail_every_test_until_answered(course):
    course_dir, _ = course
    out = validate(course_dir, NOTEBOOKS, "--invert")
    assert out.count("Success! The notebook does not pass any tests.") == len(EXERCISES), out


def test_released_level_2_shows_the_incident():
    """La salida guardada del Nivel 2 muestra la anotación null, el falso acierto, la corrida entera del
    agente de la lección (que da la tarea por hecha: [done] y código 0) y el reporte ausente."""
    cells = cells_by_id(os.path.join(NOTEBOOKS, f"{NIVEL_2}.ipynb"))
    shown = "".join(o.get("text", "") for o in cells["incidente"].outputs)
    assert '"result": null' in shown
    assert "acierto en el registro, reutilizando resultado, sin volver a ejecutar" in shown
    assert re.search(r"\n\[done\] [^\n]*\n\n--resume salió con código 0\.\n", shown), shown
    assert shown.rstrip().endswith("report.txt: no existe")


# —— Una clase adversaria, de las entregas a grades.csv ——


def digest(*roots, skip=()):
    """Un resumen de cada archivo bajo ``roots`` (salvo ``skip``): si algo cambia, cambia."""
    found = hashlib.sha256()
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in skip and d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(folder, name)
                found.update(path.encode())
                with open(path, "rb") as f:
                    found.update(f.read())
    return found.hexdigest()


def course_digest(course_dir):
    return digest(os.path.join(course_dir, "submitted"), os.path.join(course_dir, "release"))


def repo_digest():
    """Lo que una entrega no puede cambiar del repositorio (la verdad medida que quien califica guarda en
    su carpeta de trabajo, ``_trabajo``, no cuenta)."""
    return digest(
        os.path.join(REPO_ROOT, "solutions"), os.path.join(REPO_ROOT, "harness"), skip=("_trabajo",)
    )


@pytest.fixture(scope="module")
def graded(course):
    """La clase adversaria entregada y calificada una vez con el comando de quien dicta el curso. Un
    puerto de 127.0.0.1 escucha mientras tanto: la entrega que escapa intenta conectarse a él."""
    course_dir, released = course
    submit(course_dir, released, CLASS)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        port_file = os.path.join(course_dir, "submitted", "escapa", ASSIGNMENT, ESCAPE_PORT_FILE)
        with open(port_file, "w", encoding="utf-8") as f:
            f.write(str(listener.getsockname()[1]))
        before = course_digest(course_dir), repo_digest()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "solutions.grading.grade_class",
                str(course_dir),
                f"--tiempo={SHORT_TIMEOUT}",
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**os.environ, "ANTHROPIC_API_KEY": SECRET},  # la clave de quien califica
        )
        try:
            listener.accept()
            reached = True
        except BlockingIOError:
            reached = False
    return course_dir, done, before, reached


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_adversarial_class_gets_honest_scores(graded):
    course_dir, done, _, _ = graded
    assert done.returncode == 0, done.stderr[-3000:]
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        scores = {
            student: {
                name: gb.find_submission_notebook(name, ASSIGNMENT, student).score for name in EXERCISES
            }
            for student in CLASS
        }
    assert rounded(scores) == HONEST
    with open(os.path.join(course_dir, "grades.csv"), encoding="utf-8") as f:
        grades = {row["student_id"]: row for row in csv.DictReader(f)}
    for student, by_notebook in HONEST.items():
        assert round(float(grades[student]["score"]), 2) == round(sum(by_notebook.values()), 2), student
        assert float(grades[student]["max_score"]) == MAX_SCORE


def rounded(scores):
    """Los puntos a centésimos: el crédito parcial es una fracción de los puntos del momento."""
    return {s: {n: round(p, 2) for n, p in by.items()} for s, by in scores.items()}


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_half_right_moment_earns_part_of_its_points(graded):
    """Por el camino real (grade_class, nbgrader autograde): el momento 1 de «a_medias» tiene 4 de 7
    datos bien y se lleva 4/7 de sus 2 puntos; cada momento de «correcta», todos. La devolución nombra
    los datos equivocados, nunca los valores medidos."""
    course_dir, done, _, _ = graded
    assert done.returncode == 0, done.stderr[-3000:]
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        half = gb.find_grade("prueba_momento_1", NIVEL_1, ASSIGNMENT, "a_medias")
        assert 0 < half.score < half.max_score == 2
        assert half.score == pytest.approx(2 * 4 / 7, abs=0.01)
        for n in (1, 2, 3):
            right = gb.find_grade(f"prueba_momento_{n}", NIVEL_1, ASSIGNMENT, "correcta")
            assert right.score == right.max_score == 2
    path = os.path.join(course_dir, "autograded", "a_medias", ASSIGNMENT, f"{NIVEL_1}.ipynb")
    cell = cells_by_id(path)["prueba_momento_1"]
    shown = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    assert "reconcile_branch, resume_finishes, notices_after_resume (4 de 7 datos bien)" in shown
    assert "no reanudó" not in json.dumps(cell.outputs, ensure_ascii=False)


def leftovers(course_dir):
    """Los procesos vivos que miran dentro de ``course_dir``: su carpeta actual o su línea de comandos."""
    inside = str(course_dir) + os.sep
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd") + os.sep
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ya terminó (o es un zombi)
            continue
        if cwd.startswith(inside) or inside in cmdline:
            found.append((int(pid), cmdline))
    return found


def await_leftovers(course_dir, limit_s=30):
    """Espera a que termine cada proceso que dejó la calificación en ``course_dir`` (con un pidfd, sin
    dormir): cuando vuelve, lo que una entrega hubiera dejado corriendo ya actuó. El límite solo corta un
    proceso que no termina nunca, y eso ya es un fallo."""
    deadline = time.monotonic() + limit_s
    while found := leftovers(course_dir):
        for pid, cmdline in found:
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                ended, _, _ = select.select([pidfd], [], [], max(0, deadline - time.monotonic()))
            finally:
                os.close(pidfd)
            assert ended, f"un proceso de la calificación sigue vivo: {pid} {cmdline}"


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_grading_leaves_repository_and_course_unchanged(graded):
    course_dir, _, before, _ = graded
    await_leftovers(course_dir)
    assert (course_digest(course_dir), repo_digest()) == before
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        assert gb.find_student("escapa")
    # Lo que la entrega «enlaza» dejó en su carpeta no sobrevive: quien califica escribió ahí después.
    graded = os.path.join(course_dir, "autograded")
    links = [os.path.join(d, n) for d, dirs, files in os.walk(graded) for n in dirs + files]
    assert [p for p in links if os.path.islink(p)] == []


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_the_graders_secrets_do_not_reach_the_graded_notebooks(graded):
    """La entrega que escapa imprime su entorno: la clave de quien califica no está ahí, ni en ningún
    notebook calificado (lo que vuelve a cada estudiante como devolución)."""
    course_dir, done, _, _ = graded
    assert done.returncode == 0, done.stderr[-3000:]
    escapa = os.path.join(course_dir, "autograded", "escapa", ASSIGNMENT, "ejercicio_nivel_1.ipynb")
    with open(escapa, encoding="utf-8") as f:
        assert "NBGRADER_EXECUTION" in f.read()  # el entorno sí se imprimió
    for folder, _, files in os.walk(os.path.join(course_dir, "autograded")):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                assert SECRET.encode() not in f.read(), os.path.join(folder, name)


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_submission_has_no_network(graded):
    """Sin red dentro del aislamiento: la conexión de la entrega que escapa nunca llegó al puerto."""
    course_dir, done, _, reached = graded
    assert done.returncode == 0, done.stderr[-3000:]
    # El puerto llegó a la carpeta donde corrió la entrega: sabía adónde conectarse.
    assert os.path.exists(os.path.join(course_dir, "autograded", "escapa", ASSIGNMENT, ESCAPE_PORT_FILE))
    assert not reached


def timed_out_cells(course_dir, student):
    """Cuántas celdas de ``student`` cortó el tiempo límite, según sus notebooks ejecutados."""
    folder = os.path.join(course_dir, "autograded", student, ASSIGNMENT)
    return sum(
        any(o.output_type == "error" and o.ename == "CellTimeoutError" for o in cell.get("outputs", []))
        for name in EXERCISES
        if os.path.exists(os.path.join(folder, f"{name}.ipynb"))  # «sin_nivel_2» no lo entregó
        for cell in nbformat.read(os.path.join(folder, f"{name}.ipynb"), 4).cells
    )


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_looping_submission_costs_one_timeout(graded):
    """El bucle infinito de una respuesta corta una sola celda: las de prueba no vuelven a correrlo. Uno
    que ignora SIGINT también: su kernel se mata y se reinicia con la preparación."""
    course_dir, done, _, _ = graded
    assert done.returncode == 0, done.stderr[-3000:]
    assert {s: timed_out_cells(course_dir, s) for s in CLASS} == {s: int(s in LOOPS) for s in CLASS}


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_printing_loop_keeps_a_bounded_output(graded):
    """Lo que imprime una celda hasta su corte se recorta mientras llega: quien califica guarda su
    presupuesto y una línea que lo dice, no todo lo que imprimió."""
    course_dir, done, _, _ = graded
    assert done.returncode == 0, done.stderr[-3000:]
    path = os.path.join(course_dir, "autograded", "imprime_en_bucle", ASSIGNMENT, "ejercicio_nivel_1.ipynb")
    (cell,) = [
        c
        for c in nbformat.read(path, 4).cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "momento_3"
    ]
    texts = [o.get("text", "") for o in cell.outputs if o.output_type == "stream"]
    assert any(CUT_NOTE in t for t in texts)
    assert sum(map(len, texts)) <= WarmExecute.output_budget.default_value + 200


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_student_with_no_notebook_that_counts_is_graded_zero_and_named(course, tmp_path):
    """Ningún notebook es JSON: la persona queda en grades.csv con 0, su línea de avance dice por qué, y
    el comando sale con 0 (los archivos de una persona no detienen a la clase)."""
    course_dir, released = course
    folder = tmp_path / "curso"
    shutil.copytree(os.path.join(course_dir, "release"), folder / "release")
    shutil.copyfile(os.path.join(course_dir, "gradebook.db"), folder / "gradebook.db")
    for name in EXERCISES:
        (folder / "submitted" / "roto" / ASSIGNMENT).mkdir(parents=True, exist_ok=True)
        (folder / "submitted" / "roto" / ASSIGNMENT / f"{name}.ipynb").write_text(
            "{no es json", encoding="utf-8"
        )
    done = subprocess.run(
        [sys.executable, "-m", "solutions.grading.grade_class", str(folder)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    unreadable = ", ".join(f"{name}.ipynb no se puede leer (no es un notebook en JSON)" for name in EXERCISES)
    assert "roto: calificada en" in done.stderr and f"{unreadable} (vale 0)" in done.stderr
    with open(folder / "grades.csv", encoding="utf-8") as f:
        assert {row["student_id"]: row["score"] for row in csv.DictReader(f)}["roto"] == "0"


def test_the_measured_truth_is_named_only_while_a_class_is_graded(tmp_path, monkeypatch):
    """La verdad del Nivel 1 va a los procesos de calificación por un archivo que nombra una variable
    de entorno: una que quedó de otra clase (con su archivo ya borrado) no se usa, y al terminar no
    queda ninguna que un proceso lanzado después herede."""
    from harness.notebook.moments import DEFAULT
    from solutions.grading import truth
    from solutions.grading.grade_class import _truth_for_workers

    monkeypatch.setenv(truth.TRUTH_FILE_ENV, str(tmp_path / "de_otra_clase" / "verdad.json"))
    # Sin lista de la clase, cada estudiante tiene los tres de siempre: es lo que se mide.
    with _truth_for_workers(str(tmp_path), EXERCISES, ["ana", "beto"], str(tmp_path / "sin_lista")):
        with open(os.environ[truth.TRUTH_FILE_ENV], encoding="utf-8") as f:
            found = json.load(f)
        assert sorted(found) == sorted(DEFAULT) and found == truth.measured(DEFAULT)
    assert truth.TRUTH_FILE_ENV not in os.environ
    with _truth_for_workers(
        str(tmp_path), ("trivial",), ["ana"], {}
    ):  # sin comprobaciones JSON: nada que medir
        assert truth.TRUTH_FILE_ENV not in os.environ


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_autograde_by_hand_is_protected_too(graded):
    """``nbgrader autograde`` a mano (sin ``grade_class``) usa la misma configuración: la entrega que
    deja enlaces en su carpeta no alcanza el repositorio ni se lleva más puntos."""
    course_dir, _, before, _ = graded
    done = nbgrader(course_dir, "autograde", ASSIGNMENT, "--student=enlaza", "--force", check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert repo_digest() == before[1]
    folder = os.path.join(course_dir, "autograded", "enlaza", ASSIGNMENT)
    assert not any(os.path.islink(os.path.join(folder, n)) for n in os.listdir(folder))
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        assert {n: gb.find_submission_notebook(n, ASSIGNMENT, "enlaza").score for n in EXERCISES} == HONEST[
            "enlaza"
        ]


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_cell_that_kills_its_kernel_loses_only_its_question(graded):
    """``os._exit`` en una respuesta: esa celda queda con el error que lo explica y las demás preguntas se
    califican en un kernel nuevo (la nota de «mata_su_kernel» en la prueba de la clase)."""
    course_dir, done, _, _ = graded
    assert done.returncode == 0, done.stderr[-3000:]
    path = os.path.join(course_dir, "autograded", "mata_su_kernel", ASSIGNMENT, "ejercicio_nivel_1.ipynb")
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nbformat.read(path, 4).cells}
    assert [o.get("evalue") for o in cells["momento_1"].outputs if o.output_type == "error"] == [DEAD_NOTE]

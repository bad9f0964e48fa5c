"""Lo que usa quien dicta el curso después de calificar: el informe de la clase, las notas a mano desde
la terminal, la devolución, la carpeta del curso que sobrevive a una mudanza, la edición para
estudiantes y el flujo de CI para un fork.

Una clase chica, calificada una vez con el comando de verdad (nbgrader y aislamiento reales): una
entrega correcta, una en blanco, una con un dato equivocado del Nivel 1 y una con la corrección del
Nivel 2 en el orden equivocado.
"""

import csv
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

import nbformat
import pytest
import yaml
from course_files import output_text
from nbformat.v4 import new_code_cell
from nbgrader.api import Gradebook
from sample_class import CLASS, NIVEL_1, NIVEL_2, submit

from maintainer.paths import ROOT as REPO_ROOT
from solutions.grading import edicion_estudiantes, paths, report
from solutions.grading.manual import SOLUTION_MARKERS
from solutions.grading.release import ASSIGNMENT, EXERCISES, course_config
from solutions.grading.truth import OBSERVED_FIELDS

# Anota un resultado inventado antes de correr la herramienta: con SIGKILL justo cuando la herramienta
# vuelve, effects.json ya da por hecha una llamada sin resultado real (el mecanismo «orden»).
EARLY_NOTE_FIX = """def run_tool_uses_fixed(content):
    results = []
    for block in tool_uses(content):
        save_effect(block["id"], {"name": block["name"], "result": "en curso", "at": now_ms()})
        output = run_tool(block["name"], block["input"])
        save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})
        results.append(tool_result(block["id"], output))
    return results
"""
SMALL_CLASS = {
    "correcta": CLASS["correcta"],
    "en_blanco": None,
    # notices_after_resume del momento 2, equivocado; lo demás, bien.
    "dato_equivocado": {NIVEL_1: CLASS["equivocada"][NIVEL_1], NIVEL_2: {}},
    "orden_equivocado": {NIVEL_1: {}, NIVEL_2: {"corregida": EARLY_NOTE_FIX}},
}
QUESTIONS = {
    "prueba_momento_1",
    "prueba_momento_2",
    "prueba_momento_3",
    "explicacion",
    "prueba_corregida",
    "explicacion_error",
    "prueba_script",
}
HIDDEN = ("BEGIN HIDDEN TESTS", "@@respuesta@@", "Student's answer", "Test cell")


def run(module, *args, cwd=REPO_ROOT, env=None, python=sys.executable):
    return subprocess.run(
        [python, "-m", module, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
    )


@pytest.fixture(scope="module")
def small_class(released_course):
    course_dir, released = released_course("clase")
    submit(course_dir, released, SMALL_CLASS)
    done = run("solutions.grading.grade_class", course_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    return course_dir


def grades(course_dir):
    with open(os.path.join(course_dir, "grades.csv"), encoding="utf-8") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def report_rows(course_dir):
    """{(pregunta, parte o ""): {"bien", "de", "pendientes"}} de las filas de informe.html."""
    with open(os.path.join(course_dir, "informe.html"), encoding="utf-8") as f:
        page = f.read()
    pattern = r'<tr data-pregunta="([^"]*)" data-parte="([^"]*)" data-bien="(\d+)" data-de="(\d+)" data-pendientes="(\d+)">'
    return {
        (question, part): {"bien": int(right), "de": int(of), "pendientes": int(waiting)}
        for question, part, right, of, waiting in re.findall(pattern, page)
    }


# —— El informe de la clase y grades.csv ——


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_the_class_report_counts_each_field_and_mechanism(small_class):
    rows = report_rows(small_class)
    assert {q for q, part in rows if not part} == QUESTIONS  # una fila por pregunta
    assert all(r["de"] == len(SMALL_CLASS) for r in rows.values())
    # El dato equivocado cuenta una vez más que la entrega en blanco; los demás datos, solo el blanco.
    for field in OBSERVED_FIELDS:
        wrong = 2 if field == "notices_after_resume" else 1
        assert rows["prueba_momento_2", field]["bien"] == len(SMALL_CLASS) - wrong, field
        assert rows["prueba_momento_1", field]["bien"] == len(SMALL_CLASS) - 1, field
    assert rows["prueba_momento_2", ""]["bien"] == len(SMALL_CLASS) - 2
    # La corrección en el orden equivocado: el orden, no la caída superada ni el script.
    assert rows["prueba_corregida", "orden"]["bien"] == len(SMALL_CLASS) - 2
    assert rows["prueba_corregida", "caida_superada"]["bien"] == len(SMALL_CLASS) - 1
    assert rows["prueba_script", "prueba_script"]["bien"] == len(SMALL_CLASS) - 1
    with open(os.path.join(small_class, "informe.svg"), encoding="utf-8") as f:
        picture = f.read()
    # Las preguntas con su nombre en español, no con su id (el issue 35: los ids no le dicen nada a nadie).
    assert picture.lstrip().startswith("<?xml") and "Nivel 1 · momento 2 (el de cada estudiante)" in picture
    assert "prueba_momento_2" not in picture


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_grades_csv_says_which_manual_points_are_pending(small_class):
    table = grades(small_class)
    # La entrega en blanco ya tiene 0 en lo escrito (nbgrader: «sin respuesta»); las otras esperan 3 + 4.
    assert {s: float(r["manual_pendiente"]) for s, r in table.items()} == {
        "correcta": 7.0,
        "en_blanco": 0.0,
        "dato_equivocado": 7.0,
        "orden_equivocado": 7.0,
    }
    # Un dato mal de 7: el momento 2 se lleva 6/7 de sus 2 puntos.
    assert float(table["dato_equivocado"]["score"]) == pytest.approx(4 + 1.71 + 6)
    assert float(table["orden_equivocado"]["score"]) == 6 + 3


# —— Notas a mano desde la terminal ——


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_a_manual_score_from_the_terminal_reaches_grades_and_report(small_class):
    listed = run("solutions.grading.manual", small_class, "--pendientes")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "dato_equivocado\texplicacion\t3\t" in "\n".join(lines)
    assert all(line.count("\t") == 4 for line in lines)
    before_rows, before = report_rows(small_class), grades(small_class)["dato_equivocado"]

    done = run(
        "solutions.grading.manual",
        small_class,
        "dato_equivocado",
        "explicacion",
        2,
        "--comentario",
        "Bien la primera parte; falta la ventana que el registro achica.",
    )
    assert done.returncode == 0, done.stderr

    after = grades(small_class)["dato_equivocado"]
    assert float(after["score"]) == float(before["score"]) + 2
    assert float(after["manual_pendiente"]) == float(before["manual_pendiente"]) - 3
    rows = report_rows(small_class)
    assert rows["explicacion", ""]["pendientes"] == before_rows["explicacion", ""]["pendientes"] - 1
    still = run("solutions.grading.manual", small_class, "--pendientes").stdout
    assert "dato_equivocado\texplicacion\t" not in still
    # Lo mismo que vería el Formgrader, en la misma base.
    with Gradebook(f"sqlite:///{small_class}/gradebook.db") as gb:
        grade = gb.find_grade("explicacion", NIVEL_1, ASSIGNMENT, "dato_equivocado")
        assert (grade.score, grade.needs_manual_grade) == (2, False)


@pytest.mark.slow
@pytest.mark.needs_bwrap
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("nadie", "explicacion", 1), "no hay una entrega calificada de «nadie»"),
        (("correcta", "momento_9", 1), "no hay una pregunta a mano «momento_9»"),
        (("correcta", "explicacion", 4), "explicacion vale de 0 a 3 puntos"),
    ],
)
def test_a_wrong_manual_score_is_one_spanish_line(small_class, args, said):
    done = run("solutions.grading.manual", small_class, *args)
    assert done.returncode == 1
    assert said in done.stderr and "Traceback" not in done.stderr


# —— La devolución ——


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_feedback_shows_answers_and_reasons_without_the_plumbing(small_class):
    note = "Falta decir qué hace reconcile al reanudar."
    assert (
        run(
            "solutions.grading.manual", small_class, "correcta", "explicacion_error", 3, "--comentario", note
        ).returncode
        == 0
    )
    done = run("solutions.grading.devolucion", small_class)
    assert done.returncode == 0, done.stderr
    pages = {}
    for student in SMALL_CLASS:
        for name in EXERCISES:
            with open(
                os.path.join(small_class, "feedback", student, ASSIGNMENT, f"{name}.html"), encoding="utf-8"
            ) as f:
                pages[student, name] = f.read()
    for key, page in pages.items():
        assert not [h for h in HIDDEN if h in page], key
        assert "Tu respuesta" in page and "Comprobación" in page, key
    # Cada comprobación del Nivel 1 nombra cuál de sus momentos juzgó, con su id.
    graded = report.graded_moments(small_class)
    assert all(len(graded[student]) == 3 for student in SMALL_CLASS)
    for student in SMALL_CLASS:
        titles = [f"Comprobación de tu momento {n} ({m})" for n, m in enumerate(graded[student], 1)]
        assert all(t in pages[student, NIVEL_1] for t in titles), student
    said = "◐ En parte: no coincide con lo medido en: notices_after_resume (6 de 7 datos bien)"
    assert said in pages["dato_equivocado", NIVEL_1]
    assert "effects.json ya da por hecha la llamada" in pages["orden_equivocado", NIVEL_2]
    assert note in pages["correcta", NIVEL_2]


# —— Calificar solo lo nuevo, y la carpeta del curso tras mudar el repositorio ——


def test_the_course_config_holds_no_path(tmp_path):
    old = f"load_subconfig({os.path.join('/ya/no/esta', 'solutions/grading/nbgrader_config.py')!r})\n"
    (tmp_path / "nbgrader_config.py").write_text(old, encoding="utf-8")
    assert course_config(tmp_path) is True  # reemplazado
    assert course_config(tmp_path) is False  # ya estaba así
    text = (tmp_path / "nbgrader_config.py").read_text(encoding="utf-8")
    assert REPO_ROOT not in text and "/ya/no/esta" not in text


def moved_repository(target):
    """Una copia del repositorio tal como está (con lo que aún no se guardó en git), en otra carpeta. Con
    su bytecode: copytree conserva las fechas de las fuentes, así que la copia no recompila nada."""
    skip = shutil.ignore_patterns(".git", ".venv", "_trabajo", "*.egg-info", "test-output")
    shutil.copytree(REPO_ROOT, target, ignore=skip, symlinks=True)
    return str(target)


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_only_new_submissions_are_graded_and_a_moved_repository_still_grades(small_class, tmp_path):
    again = run("solutions.grading.grade_class", small_class)
    assert again.returncode == 0, again.stderr
    assert f"{len(SMALL_CLASS)} entregas sin cambios" in again.stderr and "[1/" not in again.stderr
    # Una nota a mano de una entrega que no cambia sobrevive a --todo.
    assert run("solutions.grading.manual", small_class, "correcta", "explicacion", 3).returncode == 0

    # Una carpeta de curso de antes: su configuración nombraba el repositorio donde estaba.
    with open(os.path.join(small_class, "nbgrader_config.py"), "w", encoding="utf-8") as f:
        f.write(f"load_subconfig({os.path.join(REPO_ROOT, 'solutions/grading/nbgrader_config.py')!r})\n")
    # Quien estaba en blanco entrega ahora la solución; el repositorio se mudó. El comando corre con el
    # python del entorno sin activarlo y con un entorno mínimo (env -i): nbgrader se encuentra igual.
    submit(
        small_class,
        {n: os.path.join(small_class, "release", ASSIGNMENT, f"{n}.ipynb") for n in EXERCISES},
        {"en_blanco": CLASS["correcta"]},
    )
    moved = moved_repository(tmp_path / "otro_lugar")
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    done = run("solutions.grading.grade_class", small_class, "--todo", cwd=moved, env=bare)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "nbgrader_config.py de la carpeta del curso reemplazado" in done.stderr
    assert f"[{len(SMALL_CLASS)}/{len(SMALL_CLASS)}]" in done.stderr
    assert float(grades(small_class)["en_blanco"]["score"]) == 12
    with Gradebook(f"sqlite:///{small_class}/gradebook.db") as gb:
        kept = gb.find_grade("explicacion", NIVEL_1, ASSIGNMENT, "correcta")
        assert (kept.manual_score, kept.needs_manual_grade) == (3, False)
    for name in ("nbgrader_config.py", "gradebook.db", "grades.csv", "informe.html", "calificadas.json"):
        with open(os.path.join(small_class, name), "rb") as f:
            content = f.read()
        assert REPO_ROOT.encode() not in content and moved.encode() not in content, name


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_the_class_command_runs_with_an_empty_environment(small_class, tmp_path):
    """``env -i`` y el python del entorno sin activar: nbgrader (``generate_assignment``, que arma
    ``gradebook.db``) y el aislamiento se encuentran igual, sin traza."""
    course = tmp_path / "curso"
    shutil.copytree(small_class / "submitted" / "correcta", course / "submitted" / "correcta")
    done = run("solutions.grading.grade_class", course, env={})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "[1/1] correcta: calificada" in done.stderr
    assert float(grades(course)["correcta"]["score"]) == 12


@pytest.mark.needs_bwrap
def test_the_class_command_without_submissions_is_one_line(tmp_path):
    done = run("solutions.grading.grade_class", tmp_path)
    assert done.returncode == 1
    assert "no tiene entregas" in done.stderr and "Traceback" not in done.stderr


# —— La edición para estudiantes ——


def model_answers():
    """Cada respuesta modelo de las fuentes, aplanada (las de más de 40 caracteres)."""
    found = []
    for name in EXERCISES:
        for cell in nbformat.read(os.path.join(paths.SOURCE, ASSIGNMENT, f"{name}.ipynb"), 4).cells:
            for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.DOTALL):
                flat = " ".join(SOLUTION_MARKERS.sub("", block).split())
                if len(flat) > 40:
                    found.append(flat)
    return found


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    dest = tmp_path_factory.mktemp("edicion") / "curso"
    done = run("solutions.grading.edicion_estudiantes", dest)
    assert done.returncode == 0, done.stderr
    return dest


def test_the_student_edition_holds_no_answers(edition):
    assert not (edition / "solutions" / "grading").exists()
    assert not (edition / "docs" / "instructores.md").exists()
    assert (edition / "notebooks" / "ejercicio_nivel_1.ipynb").exists() and (edition / "harness").is_dir()
    answers = model_answers()
    assert len(answers) >= 6
    for folder, _, files in os.walk(edition):
        for name in files:
            text = (open(os.path.join(folder, name), "rb").read()).decode("utf-8", "replace")
            flat = " ".join(text.split())
            if name.endswith(".ipynb"):
                flat += " ".join(" ".join(c.source.split()) for c in nbformat.reads(text, 4).cells)
            assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, name
            assert not any(answer in flat for answer in answers), name
    readme = (edition / "README.md").read_text(encoding="utf-8")
    assert "## Para instructores" not in readme and "solutions/grading" not in readme


def test_the_edition_refuses_a_destination_in_use(tmp_path):
    (tmp_path / "algo.txt").write_text("ya estaba", encoding="utf-8")
    done = run("solutions.grading.edicion_estudiantes", tmp_path)
    assert done.returncode == 1 and "ya existe y no está vacío" in done.stderr
    assert edicion_estudiantes.leaks(paths.SOURCE)  # lo que revisa, lo encuentra donde está


def readme_command_1():
    """El comando 1 del README (Linux y macOS): crear el entorno, instalar, abrir la lección."""
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    line = re.search(r"^# 1\..*\n(.*)$", text, re.MULTILINE).group(1)
    return [part.strip() for part in line.split("&&")]


@pytest.mark.slow
def test_readme_command_1_installs_the_edition_and_the_lesson_runs(edition, tmp_path):
    """El comando 1 en la edición: un entorno nuevo, ``python -m pip install -e .`` (sin descargar: con
    ``--no-deps --no-build-isolation`` y las dependencias del entorno de pruebas a la vista) y la
    lección ejecutada de punta a punta en ese entorno, con el arnés de la edición."""
    steps = readme_command_1()
    assert steps[0].startswith("python3 -m venv .venv") and "python -m pip install -e ." in steps
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(purelib, "dependencias_del_curso.pth"), "w", encoding="utf-8") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    install = [python, *shlex.split(steps[steps.index("python -m pip install -e .")])[1:]]
    done = subprocess.run(
        [*install, "--no-deps", "--no-build-isolation", "-q"], cwd=edition, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    script = (
        "import nbformat, sys\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], 4)\n"
        "nb.cells.insert(0, nbformat.v4.new_code_cell(sys.argv[2]))\n"
        "NotebookClient(nb, timeout=300, resources={'metadata': {'path': '.'}}).execute()\n"
        "print(nb.cells[0].outputs[0]['text'].strip())\n"
    )
    lesson = edition / "notebooks" / "leccion_6_puntos_de_control.ipynb"
    probe = new_code_cell("import harness, sys; print(harness.__file__, sys.executable)").source
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    ran = subprocess.run(
        [python, "-c", script, str(lesson), probe],
        cwd=edition / "notebooks",
        capture_output=True,
        text=True,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    where, kernel_python = ran.stdout.split()[-2:]
    assert where.startswith(str(edition)), where
    assert kernel_python.startswith(str(venv)), kernel_python


# —— CI para un fork ——

WORKFLOW = os.path.join(REPO_ROOT, ".github", "workflows", "curso.yml")
ACTIVATE = ". .venv/bin/activate && "


def ci_run_commands():
    with open(os.path.join(REPO_ROOT, ".ci", "run"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]


def test_the_fork_workflow_runs_the_same_commands_as_ci():
    with open(WORKFLOW, encoding="utf-8") as f:
        workflow = yaml.safe_load(f)
    (job,) = workflow["jobs"].values()
    commands = [step["run"].strip() for step in job["steps"] if "run" in step]
    ci = ci_run_commands()
    packages = set(re.findall(r"missing\+=\(([\w-]+)\)", "\n".join(ci)))
    apt = [c for c in commands if "apt-get install" in c]
    assert apt, "el flujo instala bubblewrap con apt"
    for command in apt:
        wanted = set(command.split("apt-get install", 1)[1].split()) - {"-y", "-q"}
        assert "bubblewrap" in wanted and wanted <= packages, command
    python_steps = [c for c in commands if "python" in c]
    # La instalación, la misma línea que .ci/run (el comando 2 del README).
    assert python_steps[0] in ci
    for command in python_steps[1:]:
        assert command.startswith(ACTIVATE), command
        program = command[len(ACTIVATE) :]
        if program.startswith("python -m pytest"):
            assert "python -m pytest" in ci
            for target in shlex.split(program)[3:]:
                assert target.startswith("-") or os.path.exists(
                    os.path.join(REPO_ROOT, target.split("::")[0])
                ), target
        else:
            assert program in ci, program
    ran = " ".join(commands)
    assert "pytest notebooks" in ran and "tests/test_grading.py" in ran


def test_the_report_names_who_could_not_be_graded(tmp_path):
    from solutions.grading.report import ungraded

    for student in ("ana", "roto"):
        (tmp_path / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
    (tmp_path / "autograded" / "ana" / ASSIGNMENT).mkdir(parents=True)
    assert ungraded(tmp_path) == ["roto"]


# —— Las soluciones comentadas ——


def test_the_annotated_solutions_are_stamped_and_not_shipped(tmp_path):
    """``prepare`` las ejecuta y les pone la huella como a los notebooks de notebooks/; la edición para
    estudiantes no las copia, y su revisión de respuestas las reconocería si se copiaran."""
    from maintainer.paths import ANNOTATED
    from maintainer.prepare import stale_outputs, stored_notebooks, stored_problems

    assert ANNOTATED in stored_notebooks()
    assert not stored_problems(ANNOTATED) and not stale_outputs(ANNOTATED)
    relative = os.path.relpath(ANNOTATED, REPO_ROOT).replace(os.sep, "/")
    files = edicion_estudiantes.committed_files()
    assert relative in files and relative not in edicion_estudiantes.chosen(files)
    shutil.copy(ANNOTATED, tmp_path)  # copiadas por error, la revisión de la edición las reconoce
    assert [what for _, what in edicion_estudiantes.leaks(tmp_path, answers=[])] == [
        edicion_estudiantes.MARKERS[2]
    ]


def test_the_annotated_solutions_run_each_exercise_with_the_lesson_agent():
    """Cada corrida que la lección ya no hace está aquí, con su salida guardada: la matriz del Nivel 1,
    ① ≡ ② en disco, los momentos con nota y la reproducción del Nivel 2 (los dos órdenes y el script)."""
    from maintainer.paths import ANNOTATED

    text = "\n".join(output_text(c) for c in nbformat.read(ANNOTATED, 4).cells if c.cell_type == "code")
    for branch in (
        "agregando is_error",
        "acierto en el registro",
        "sin llamada colgante",
        "volviendo a ejecutar",
    ):
        assert branch in text, branch
    assert "checkpoint.json | True" in text and "report.txt | False" in text  # ① ≡ ②, salvo el reporte
    assert text.count("la respuesta modelo es lo medido") == 3
    assert '"result": null' in text and "report.txt: no existe" in text  # el incidente
    assert "el script modelo reproduce el error: True" in text


@pytest.mark.slow
def test_the_annotated_solutions_pass_strict_nbval():
    """Las salidas guardadas son las de hoy: nbval estricto, como los notebooks de notebooks/."""
    from maintainer.paths import ANNOTATED

    done = subprocess.run(
        # Un solo proceso (-n 0): es un notebook, y sus celdas corren juntas en uno de todos modos.
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", ANNOTATED],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert done.returncode == 0, done.stdout[-3000:]

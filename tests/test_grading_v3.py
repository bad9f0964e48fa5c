"""Lo entregado no llega a los secretos de quien califica, no engaña a la clase ni la detiene (issue 46).

Primero, rápido y pieza por pieza: el entorno de cada proceso aislado y la recogida de una entrega
(enlaces, dispositivos, FIFOs, carpetas, archivos enormes o que no son notebooks, enlaces duros). Después,
una clase chica calificada con el comando de verdad, con todo eso a la vez.
"""

import csv
import os
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbgrader.api import Gradebook
from sample_class import CLASS, NIVEL_1, NIVEL_2, submit

from solutions.grading import handed_in, sandbox
from solutions.grading.release import ASSIGNMENT
from tests.test_instructors import run

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-secreto-de-quien-califica",
    "DATABASE_URL": "postgres://u:clave-46@h/db",
}

# Lee el entorno de cada proceso que ve (y de cada hilo) y lo imprime.
READS_EVERY_ENVIRON = """import glob

found = []
for path in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/task/[0-9]*/environ"):
    try:
        with open(path, "rb") as f:
            found.append(f.read().decode(errors="replace"))
    except OSError:
        pass
print("entornos leídos:", len(found))
print("\\n".join(found))
"""


# —— 1. El entorno de quien califica no existe adentro ——


@pytest.mark.needs_bwrap
@pytest.mark.parametrize("as_init", [False, True], ids=["kernel", "servidor_de_corridas"])
def test_no_process_in_the_sandbox_holds_the_graders_secrets(tmp_path, monkeypatch, as_init):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    command = [*sandbox.prefix(tmp_path, as_init=as_init), sys.executable, "-c", READS_EVERY_ENVIRON]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    read = int(done.stdout.split("entornos leídos:")[1].split()[0])
    assert read >= (1 if as_init else 2)  # el pid 1 (bwrap, o el comando) y el que lee
    assert "PATH=" in done.stdout  # se leyeron de verdad
    for value in SECRETS.values():
        assert value not in done.stdout


@pytest.mark.needs_bwrap
def test_a_secret_only_in_the_launchers_environment_does_not_get_in_either(tmp_path):
    """El kernel se lanza con el entorno que arma jupyter_client, no con ``os.environ``: ``prefix`` lo recibe."""
    launch_env = {**os.environ, **SECRETS}
    command = [*sandbox.prefix(tmp_path, env=launch_env), sys.executable, "-c", READS_EVERY_ENVIRON]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=launch_env)
    assert done.returncode == 0 and "PATH=" in done.stdout, done.stderr
    assert not [value for value in SECRETS.values() if value in done.stdout]


# —— 2 y 3. Recoger sin seguir enlaces, con un tope, y solo notebooks ——

NOTEBOOK = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])


def student_folder(course_dir, student):
    folder = course_dir / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    return folder


def write_notebook(path):
    nbformat.write(NOTEBOOK, str(path))


@pytest.fixture
def tricky_course(tmp_path):
    """Una entrega buena y, de otra persona, cada cosa que no es un notebook donde va uno."""
    course = tmp_path / "curso"
    good = student_folder(course, "buena")
    write_notebook(good / "a.ipynb")
    write_notebook(good / "b.ipynb")
    tricky = student_folder(course, "tramposa")
    (tricky / "relativo.ipynb").symlink_to("../../buena/leccion_6/a.ipynb")
    (tricky / "absoluto.ipynb").symlink_to(good / "b.ipynb")
    (tricky / "cero.ipynb").symlink_to("/dev/zero")
    os.mkfifo(tricky / "fifo.ipynb")
    (tricky / "carpeta.ipynb").mkdir()
    (tricky / "carpeta.ipynb" / "adentro.txt").write_text("una carpeta con el nombre de un notebook")
    with open(tricky / "enorme.ipynb", "wb") as f:
        f.truncate(handed_in.NOTEBOOK_BYTES + 1)  # disperso: no ocupa disco
    (tricky / "no_json.ipynb").write_text("{no es json", encoding="utf-8")
    (tricky / "json_no_notebook.ipynb").write_text('{"cells": "ninguna", "nbformat": 4}', encoding="utf-8")
    (tricky / "anidado.ipynb").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    write_notebook(tricky / "propio.ipynb")
    # Lo demás que trae: un archivo común, y enlaces (a un archivo, a una carpeta) en una subcarpeta.
    (tricky / "datos").mkdir()
    (tricky / "datos" / "propio.txt").write_text("mío", encoding="utf-8")
    (tricky / "datos" / "clave").symlink_to("/etc/passwd")
    (tricky / "datos" / "vecina").symlink_to(good)
    (tricky / "datos" / "cero").symlink_to("/dev/zero")
    os.mkfifo(tricky / "datos" / "tuberia")
    (tricky / handed_in.TIMESTAMP).write_text("no es una fecha", encoding="utf-8")
    return course


EXPECTED = {
    "relativo": handed_in.LINK,
    "absoluto": handed_in.LINK,
    "cero": handed_in.LINK,
    "fifo": handed_in.SPECIAL,
    "carpeta": handed_in.FOLDER,
    "enorme": handed_in.TOO_BIG,
    "no_json": handed_in.NOT_JSON,
    "json_no_notebook": handed_in.NOT_NOTEBOOK,
    "anidado": handed_in.NOT_JSON,
    "falta": handed_in.MISSING,
}


def staged_tree(folder):
    return sorted(
        os.path.relpath(os.path.join(where, name), folder)
        for where, dirs, files in os.walk(folder)
        for name in dirs + files
    )


def test_only_real_notebooks_count_and_nothing_outside_the_folder_is_read(tricky_course, tmp_path):
    target = tmp_path / "copia"
    notebooks = [*EXPECTED, "propio"]
    reasons = handed_in.stage(str(tricky_course), "tramposa", ASSIGNMENT, notebooks, str(target))
    assert reasons == EXPECTED
    # Solo lo suyo: el notebook que es un notebook y el archivo común; ni enlaces ni la hora ilegible.
    assert staged_tree(target) == ["datos", "datos/propio.txt", "propio.ipynb"]
    assert not any(os.path.islink(os.path.join(w, n)) for w, d, f in os.walk(target) for n in d + f)


def test_a_folder_that_is_a_link_hands_in_nothing(tricky_course, tmp_path):
    (tricky_course / "submitted" / "copiona").symlink_to(tricky_course / "submitted" / "buena")
    reasons = handed_in.stage(str(tricky_course), "copiona", ASSIGNMENT, ["a", "b"], str(tmp_path / "copia"))
    assert reasons == {"a": handed_in.LINKED_FOLDER, "b": handed_in.LINKED_FOLDER}
    assert staged_tree(tmp_path / "copia") == []


def test_a_hard_link_to_a_classmates_notebook_counts_for_neither(tricky_course, tmp_path):
    submitted = tricky_course / "submitted"
    os.link(submitted / "buena" / ASSIGNMENT / "a.ipynb", submitted / "tramposa" / ASSIGNMENT / "a.ipynb")
    found = handed_in.shared(str(tricky_course), ["buena", "tramposa"], ["a", "b", "propio"], ASSIGNMENT)
    assert found == {("buena", "a"): ["tramposa"], ("tramposa", "a"): ["buena"]}
    reasons = handed_in.stage(
        str(tricky_course), "buena", ASSIGNMENT, ["a", "b"], str(tmp_path / "c"), {"a": ["tramposa"]}
    )
    assert reasons == {"a": handed_in.SHARED.format(others="tramposa")}


def test_the_fingerprint_reads_no_link_and_changes_with_what_was_handed_in(tricky_course):
    course = str(tricky_course)
    before = handed_in.fingerprint(course, "tramposa", ASSIGNMENT)  # con /dev/zero y FIFOs: no se cuelga
    assert before == handed_in.fingerprint(course, "tramposa", ASSIGNMENT)
    (tricky_course / "submitted" / "buena" / ASSIGNMENT / "a.ipynb").write_text("{}", encoding="utf-8")
    assert handed_in.fingerprint(course, "tramposa", ASSIGNMENT) == before  # el enlace no se sigue
    (tricky_course / "submitted" / "tramposa" / ASSIGNMENT / "propio.ipynb").write_text(
        "{}", encoding="utf-8"
    )
    assert handed_in.fingerprint(course, "tramposa", ASSIGNMENT) != before


# —— Una clase con todo eso, calificada con el comando de verdad ——

# Una respuesta que lee el entorno de todo proceso que ve y deja un proceso dormido en su propia sesión.
LINGERS = "nada-sobrevive-a-la-calificacion-46"
ALIVE_INSIDE = "el-durmiente-corre-dentro"
READS_AND_LINGERS = (
    READS_EVERY_ENVIRON
    + f"""
import os
import sys

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(1000)", "{LINGERS}"])
    os._exit(0)
os.wait()
import time


def seen(pid):
    try:
        return "{LINGERS}" in open(f"/proc/{{pid}}/cmdline").read()
    except OSError:
        return False


for _ in range(200):  # el nieto ya corre, en su propia sesión: si no, la prueba no probaría nada
    if any(seen(p) for p in os.listdir("/proc") if p.isdigit()):
        print("{ALIVE_INSIDE}")
        break
    time.sleep(0.05)
prediction[1] = {{}}"""
)
ONLY_LEVEL_1 = {NIVEL_1: {}}
STUDENTS = {
    "correcta": CLASS["correcta"],
    "enlaza_companero": ONLY_LEVEL_1,
    "enlaza_dev_zero": ONLY_LEVEL_1,
    "fifo": ONLY_LEVEL_1,
    "no_es_notebook": ONLY_LEVEL_1,
    "metadatos_rotos": CLASS["correcta"],
    "duro_a": ONLY_LEVEL_1,
    "duro_b": ONLY_LEVEL_1,
    "lee_entornos": {NIVEL_1: {"momento_1": READS_AND_LINGERS}},
}
LEVEL_2 = f"{NIVEL_2}.ipynb"


def hand_in_tricks(course_dir):
    """Lo que cada entrega pone donde va su Nivel 2."""
    submitted = course_dir / "submitted"
    folder = {s: submitted / s / ASSIGNMENT for s in STUDENTS}
    (folder["enlaza_companero"] / LEVEL_2).symlink_to(f"../../correcta/{ASSIGNMENT}/{LEVEL_2}")
    (folder["enlaza_dev_zero"] / LEVEL_2).symlink_to("/dev/zero")
    (folder["enlaza_dev_zero"] / "datos").mkdir()
    (folder["enlaza_dev_zero"] / "datos" / "cero").symlink_to("/dev/zero")
    os.mkfifo(folder["fifo"] / LEVEL_2)
    (folder["fifo"] / handed_in.TIMESTAMP).write_text("no es una fecha", encoding="utf-8")
    (folder["no_es_notebook"] / LEVEL_2).write_text('{"hola": "no soy un notebook"}', encoding="utf-8")
    broken = nbformat.read(str(folder["metadatos_rotos"] / LEVEL_2), as_version=4)
    for cell in broken.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata["nbgrader"] = "no es un diccionario"  # nbformat lo acepta; nbgrader, no
    nbformat.write(broken, str(folder["metadatos_rotos"] / LEVEL_2))
    shutil.copyfile(submitted / "correcta" / ASSIGNMENT / LEVEL_2, folder["duro_a"] / LEVEL_2)
    os.link(folder["duro_a"] / LEVEL_2, folder["duro_b"] / LEVEL_2)


# El comando de la clase con los secretos de quien califica en su entorno; al final, en stderr, la memoria
# máxima (KiB) de cualquiera de sus procesos.
MEASURED = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(done.returncode)"
)
MEMORY_KIB = 2 << 20  # 2 GiB: leer /dev/zero lo pasaría; calificar, no


@pytest.fixture(scope="module")
def graded(released_course):
    course_dir, released = released_course("clase_v3")
    submit(course_dir, released, STUDENTS)
    hand_in_tricks(course_dir)
    command = [sys.executable, "-m", "solutions.grading.grade_class", str(course_dir)]
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, *command],
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, **SECRETS},
    )
    alive = [pid for pid in _pids() if LINGERS in _cmdline(pid)]
    return course_dir, done, alive


def _pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def scores(course_dir):
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        return {s: {n.name: n.score for n in gb.find_submission(ASSIGNMENT, s).notebooks} for s in STUDENTS}


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_the_class_is_graded_whatever_sits_where_a_notebook_should(graded):
    course_dir, done, _ = graded
    assert done.returncode == 0, done.stderr[-3000:]
    assert "NO SE PUDO CALIFICAR" not in done.stderr and "Traceback" not in done.stderr
    assert int(done.stderr.strip().splitlines()[-1]) < MEMORY_KIB
    with open(os.path.join(course_dir, "grades.csv"), encoding="utf-8") as f:
        assert {row["student_id"] for row in csv.DictReader(f)} == set(STUDENTS)
    got = scores(course_dir)
    assert got["correcta"] == {NIVEL_1: 6, NIVEL_2: 6}
    for student in ("enlaza_companero", "enlaza_dev_zero", "fifo", "no_es_notebook", "duro_a", "duro_b"):
        assert got[student] == {NIVEL_1: 6, NIVEL_2: 0}, student
    assert got["metadatos_rotos"] == {NIVEL_1: 6, NIVEL_2: 0}
    # El Nivel 2 de «correcta» no se calificó otra vez como de quien lo enlazó.
    assert not os.path.exists(os.path.join(course_dir, "autograded", "enlaza_companero", ASSIGNMENT, LEVEL_2))


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_the_report_and_the_feedback_say_why_it_was_not_handed_in(graded):
    course_dir, done, _ = graded
    with open(os.path.join(course_dir, "informe.html"), encoding="utf-8") as f:
        page = f.read()
    said = {
        "enlaza_companero": handed_in.LINK,
        "enlaza_dev_zero": handed_in.LINK,
        "fifo": handed_in.SPECIAL,
        "no_es_notebook": handed_in.NOT_NOTEBOOK,
        "duro_a": handed_in.SHARED.format(others="duro_b"),
        "duro_b": handed_in.SHARED.format(others="duro_a"),
    }
    for student, reason in said.items():
        line = f'<li data-incompleta="{student}">{student}: {LEVEL_2} {reason}</li>'
        assert line in page, student
        assert f"{student}: calificada en" in done.stderr and f"{LEVEL_2} {reason} (vale 0)" in done.stderr
    assert (
        f'<li data-incompleta="metadatos_rotos">metadatos_rotos: {LEVEL_2} nbgrader no lo pudo leer' in page
    )
    feedback = run("solutions.grading.devolucion", course_dir, "--estudiante", "enlaza_companero")
    assert feedback.returncode == 0, feedback.stderr
    with open(
        os.path.join(course_dir, "feedback", "enlaza_companero", ASSIGNMENT, f"{NIVEL_2}.html"),
        encoding="utf-8",
    ) as f:
        assert f"Tu {LEVEL_2} {handed_in.LINK}: vale 0 de" in f.read()


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_the_graders_secrets_are_not_in_any_environ_of_the_sandbox(graded):
    course_dir, _, _ = graded
    path = os.path.join(course_dir, "autograded", "lee_entornos", ASSIGNMENT, f"{NIVEL_1}.ipynb")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert "entornos leídos:" in text and "PATH=" in text  # leyó entornos de verdad
    for where, _, files in os.walk(course_dir):
        for name in files:
            if not os.path.isfile(os.path.join(where, name)):  # la FIFO y el enlace a /dev/zero entregados
                continue
            with open(os.path.join(where, name), "rb") as f:
                content = f.read()
            for value in SECRETS.values():
                assert value.encode() not in content, os.path.join(where, name)


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_no_process_of_the_grading_outlives_it(graded):
    course_dir, done, alive = graded
    assert done.returncode == 0, done.stderr[-3000:]
    graded_notebook = course_dir / "autograded" / "lee_entornos" / ASSIGNMENT / f"{NIVEL_1}.ipynb"
    assert ALIVE_INSIDE in graded_notebook.read_text(encoding="utf-8"), "el durmiente nunca arrancó"
    assert alive == []


def test_the_memory_measure_sees_a_child_that_reads_a_lot():
    """La medida de memoria de la clase ve a un proceso hijo que se pasa (si no, no prueba nada)."""
    big = "x = bytearray(600 << 20)"
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, sys.executable, "-c", big], capture_output=True, text=True
    )
    assert int(done.stderr.strip().splitlines()[-1]) > 500 << 10

"""Califica una clase de la Lección 6 y la compara, en la misma corrida, con nbgrader sin más.

    python -m benchmarks.grading_class [--students 20] [--procesos N] [--clase-adversaria]

Arma en carpetas temporales dos cursos con ``--students`` entregas cada uno:

- la Lección 6: entregas correctas (con ``--clase-adversaria``, la clase adversaria de las pruebas y,
  hasta completar, correctas), calificadas con ``grade_class`` como lo hace quien dicta el curso
  (aisladas, ``--procesos`` a la vez, uno por núcleo por omisión);
- un notebook trivial (una celda ``answer = 1`` y una prueba) con la configuración de nbgrader de
  fábrica, calificado con ``nbgrader autograde`` (sin aislamiento ni pasos propios), antes y después de
  la Lección 6: si la máquina cambia de ritmo en medio, la media de las dos le toca a las dos.

Imprime el tiempo de cada uno por entrega, de punta a punta (el comando entero: arrancar, calificar,
escribir las notas), y el cociente, cuyo objetivo es no más de 1,5×. Después revisa que la base de la
Lección 6 quedó consistente: cada estudiante con una sola entrega, los dos notebooks con su nota, y una
fila por estudiante en ``grades.csv``. Al final, las notas a mano: una suelta y hasta 20 en un CSV,
cada una con el comando de quien califica (objetivo: el CSV en menos del doble que una).
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

import nbformat
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook

from solutions.grading.release import ASSIGNMENT, EXERCISES, generate, importable_env
from tests.sample_class import CLASS, HONEST, NIVEL_1, NIVEL_2, submit

TIMEOUT = 5  # el de la prueba de punta a punta: corta pronto el bucle infinito de la clase adversaria
TRIVIAL = "trivial"
GOAL = 1.5  # la Lección 6 no más de 1,5 veces nbgrader sin más, por entrega
# El comando de la clase en un intérprete nuevo, como lo corre quien dicta el curso.
COMMAND = ["-m", "solutions.grading.grade_class"]


def lesson_course(course_dir, size, adversarial=True):
    """Reparte y entrega ``size`` entregas (sin ``adversarial``, todas correctas); {estudiante: puntos
    esperados}."""
    released = generate(course_dir)
    names = list(CLASS)[:size] if adversarial else []
    students = {name: CLASS[name] for name in names}
    students.update({f"extra_{i}": {NIVEL_1: {}, NIVEL_2: {}} for i in range(size - len(names))})
    submit(course_dir, released, students)
    return {s: HONEST.get(s, HONEST["correcta"]) for s in students}


def lesson_class(course_dir, processes):
    """Segundos del comando de la clase, de punta a punta, en un intérprete nuevo."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *COMMAND, course_dir, "--procesos", str(processes), "--tiempo", str(TIMEOUT)],
        env=importable_env(),
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"la calificación de la clase falló: {done.stderr.strip()[-2000:]}")
    return elapsed


def trivial_cell(grade_id, text, **flags):
    meta = {"grade_id": grade_id, "locked": False, "schema_version": 3, "task": False, **flags}
    return new_code_cell(text, metadata={"nbgrader": meta})


def plain_course(course_dir, students):
    """El notebook trivial en un curso con la configuración de nbgrader de fábrica (sin
    ``solutions.grading``), con ``students`` entregas: lo que califica ``nbgrader autograde`` sin más."""
    source = os.path.join(course_dir, "source", TRIVIAL)
    os.makedirs(source)
    nb = new_notebook(
        cells=[
            trivial_cell("respuesta", "answer = 1", grade=False, solution=True),
            trivial_cell("prueba", "assert answer == 1", grade=True, solution=False, points=1),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, os.path.join(source, f"{TRIVIAL}.ipynb"))
    with open(os.path.join(course_dir, "nbgrader_config.py"), "w", encoding="utf-8") as f:
        f.write("c = get_config()  # noqa: F821\n")
    plain_nbgrader(course_dir, "generate_assignment", TRIVIAL)
    for i in range(students):
        folder = os.path.join(course_dir, "submitted", f"e{i}", TRIVIAL)
        os.makedirs(folder)
        nbformat.write(nb, os.path.join(folder, f"{TRIVIAL}.ipynb"))


def plain_nbgrader(course_dir, *args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join(filter(None, [os.path.dirname(sys.executable), env.get("PATH")]))
    subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course_dir, env=env, check=True, capture_output=True
    )


def plain_class(course_dir, students):
    """Segundos por entrega de ``nbgrader autograde`` sin más, con toda la clase en un proceso."""
    start = time.perf_counter()
    plain_nbgrader(course_dir, "autograde", TRIVIAL, "--force")
    return (time.perf_counter() - start) / students


def inconsistencies(course_dir, expected):
    """Lo que no cuadra en la base y en grades.csv frente a lo esperado; [] si todo cuadra."""
    found = []
    with Gradebook(f"sqlite:///{course_dir}/gradebook.db") as gb:
        submissions = [s.student_id for s in gb.find_assignment(ASSIGNMENT).submissions]
        if sorted(submissions) != sorted(expected):
            found.append(f"entregas en la base: {len(submissions)}, esperadas {len(expected)}")
        for student, scores in expected.items():
            got = {n: gb.find_submission_notebook(n, ASSIGNMENT, student).score for n in EXERCISES}
            if got != scores:
                found.append(f"{student}: {got} en vez de {scores}")
    with open(os.path.join(course_dir, "grades.csv"), encoding="utf-8") as f:
        rows = [row["student_id"] for row in csv.DictReader(f)]
    if sorted(rows) != sorted(expected):
        found.append(f"grades.csv tiene {len(rows)} filas para {len(set(rows))} estudiantes")
    return found


def manual_marks(course_dir, students):
    """(segundos de una nota suelta, segundos de un CSV con hasta 20 notas, cuántas): cada una con el
    comando de quien califica, en un intérprete nuevo."""
    marks = [(s, q) for s in sorted(students) for q in ("explicacion", "explicacion_error")][:20]
    path = os.path.join(course_dir, "notas.csv")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{s},{q},1.5,medido\n" for s, q in marks)
    timed = []
    for args in ([*marks[0], "1"], ["--csv", path]):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "solutions.grading.manual", course_dir, *args],
            env=importable_env(),
            check=True,
            capture_output=True,
        )
        timed.append(time.perf_counter() - start)
    return (*timed, len(marks))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20, help="entregas en cada clase")
    parser.add_argument("--procesos", type=int, default=os.cpu_count(), help="entregas a la vez")
    parser.add_argument("--clase-adversaria", action="store_true", help="con la clase adversaria")
    args = parser.parse_args()
    n = args.students
    with tempfile.TemporaryDirectory() as root:
        lesson, plain = os.path.join(root, "leccion"), os.path.join(root, "trivial")
        os.makedirs(lesson)
        os.makedirs(plain)
        expected = lesson_course(lesson, n, args.clase_adversaria)
        plain_course(plain, n)
        print("midiendo…", file=sys.stderr, flush=True)
        before = plain_class(plain, n)
        mine = lesson_class(lesson, args.procesos) / n
        after = plain_class(plain, n)
        problems = inconsistencies(lesson, expected)
        one, many, count = manual_marks(lesson, expected)
    theirs = (before + after) / 2
    ratio = mine / theirs
    print(f"Lección 6, grade_class ({args.procesos} procesos): {mine:.2f} s por entrega ({n} entregas)")
    print(
        f"trivial, nbgrader autograde sin más: {theirs:.2f} s por entrega (antes {before:.2f}, después {after:.2f})"
    )
    print(f"cociente: {ratio:.2f}× (objetivo: no más de {GOAL}×) {'✓' if ratio <= GOAL else '✗'}")
    print(
        f"notas a mano: una suelta {one:.2f} s; {count} en un CSV {many:.2f} s ({many / one:.2f}×, objetivo: menos de 2×)"
    )
    print("base y grades.csv consistentes" if not problems else "\n".join(["INCONSISTENTE:", *problems]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

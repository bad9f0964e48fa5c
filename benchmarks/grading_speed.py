"""Mide cuánto tarda calificar una entrega de la Lección 6, y lo compara con un notebook trivial.

    python benchmarks/grading_speed.py [--students 4] [--procesos N]

Arma en carpetas temporales (1) la clase adversaria de las pruebas más ``--students`` entregas correctas,
calificada con ``python -m solutions.grading.grade_class`` (aislada, en paralelo), y (2) la misma
cantidad de entregas de un notebook de una sola celda (``answer = 1``, una prueba) con
``nbgrader autograde``; imprime el tiempo total, el de cada entrega y el cociente entre los dos.
Con ``--students 89`` la clase es de 100 entregas: el tiempo total es el de una clase de 100.
"""

import argparse
import os
import sys
import tempfile
import time

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

# Se corre como script desde la raíz: solutions/ no está instalado, así que se agrega el repositorio.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from solutions.grading.grade_class import grade_class  # noqa: E402
from solutions.grading.release import generate, nbgrader  # noqa: E402
from solutions.grading.sample_class import CLASS, NIVEL_1, NIVEL_2, submit  # noqa: E402

TIMEOUT = 5  # el de la prueba de punta a punta: corta pronto el bucle infinito de la clase adversaria


def timed_autograde(course_dir, assignment, *flags):
    start = time.perf_counter()
    nbgrader(course_dir, "autograde", assignment, *flags)
    return time.perf_counter() - start


def lesson_class(course_dir, extra, processes):
    released = generate(course_dir)
    students = {**CLASS, **{f"extra_{i}": {NIVEL_1: {}, NIVEL_2: {}} for i in range(extra)}}
    submit(course_dir, released, students)
    start = time.perf_counter()
    failed = grade_class(course_dir, processes, TIMEOUT)
    if failed:
        raise SystemExit(f"no se pudo calificar a {', '.join(s for s, _ in failed)}")
    return len(students), time.perf_counter() - start


def trivial_cell(grade_id, text, **flags):
    meta = {"grade_id": grade_id, "locked": False, "schema_version": 3, "task": False, **flags}
    return new_code_cell(text, metadata={"nbgrader": meta})


def trivial_class(course_dir, students):
    """Un curso de nbgrader sin nada de la lección: una celda de respuesta y una de prueba."""
    source = os.path.join(course_dir, "source", "trivial")
    os.makedirs(source)
    nb = new_notebook(
        cells=[
            trivial_cell("respuesta", "answer = 1", grade=False, solution=True),
            trivial_cell("prueba", "assert answer == 1", grade=True, solution=False, points=1),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, os.path.join(source, "trivial.ipynb"))
    nbgrader(course_dir, "generate_assignment", "trivial")
    for i in range(students):
        folder = os.path.join(course_dir, "submitted", f"e{i}", "trivial")
        os.makedirs(folder)
        nbformat.write(nb, os.path.join(folder, "trivial.ipynb"))
    return students, timed_autograde(course_dir, "trivial")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--students", type=int, default=4, help="entregas correctas además de la clase de muestra"
    )
    parser.add_argument("--procesos", type=int, default=os.cpu_count(), help="entregas a la vez")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as lesson, tempfile.TemporaryDirectory() as trivial:
        n_lesson, t_lesson = lesson_class(lesson, args.students, args.procesos)
        n_trivial, t_trivial = trivial_class(trivial, n_lesson)
    print(f"{'qué':<44} {'entregas':>8} {'total':>8} {'por entrega':>12}")
    print(
        f"{'Lección 6 (2 notebooks, clase adversaria)':<44} {n_lesson:>8} {t_lesson:7.1f}s {t_lesson / n_lesson:11.1f}s"
    )
    print(
        f"{'notebook trivial (1 celda + 1 prueba)':<44} {n_trivial:>8} {t_trivial:7.1f}s {t_trivial / n_trivial:11.1f}s"
    )
    print(f"cociente por entrega: {(t_lesson / n_lesson) / (t_trivial / n_trivial):.2f}×")


if __name__ == "__main__":
    main()

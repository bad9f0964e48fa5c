"""Califica una clase grande de la Lección 6 en paralelo y mide cuánto tarda de punta a punta.

    python -m benchmarks.grading_class [--students 100] [--procesos N]

Arma en una carpeta temporal ``--students`` entregas (la clase adversaria de las pruebas y, hasta
completar, entregas correctas), las califica con ``grade_class`` (aislada, un proceso por núcleo) e
imprime el tiempo total. Después revisa que la base quedó consistente: cada estudiante con una sola
entrega, los dos notebooks con su nota, y una fila por estudiante en ``grades.csv``.
"""

import argparse
import csv
import os
import sys
import tempfile
import time

from nbgrader.api import Gradebook

from solutions.grading.grade_class import grade_class, show_progress
from solutions.grading.release import ASSIGNMENT, EXERCISES, generate
from solutions.grading.sample_class import CLASS, HONEST, NIVEL_1, NIVEL_2, submit

TIMEOUT = 5  # el de la prueba de punta a punta: corta pronto el bucle infinito de la clase adversaria


def lesson_course(course_dir, size, adversarial=True):
    """Reparte y entrega ``size`` entregas (sin ``adversarial``, todas correctas); {estudiante: puntos
    esperados}."""
    released = generate(course_dir)
    names = list(CLASS)[:size] if adversarial else []
    students = {name: CLASS[name] for name in names}
    students.update({f"extra_{i}": {NIVEL_1: {}, NIVEL_2: {}} for i in range(size - len(names))})
    submit(course_dir, released, students)
    return {s: HONEST.get(s, HONEST["correcta"]) for s in students}


def lesson_class(course_dir, size, processes):
    """Entrega y califica ``size`` entregas; (entregas, segundos, {estudiante: puntos esperados})."""
    expected = lesson_course(course_dir, size)
    start = time.perf_counter()
    failed = grade_class(course_dir, processes, TIMEOUT, progress=show_progress)
    elapsed = time.perf_counter() - start
    if failed:
        raise SystemExit(f"no se pudo calificar a {', '.join(s for s, _ in failed)}")
    return len(expected), elapsed, expected


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100, help="entregas en la clase")
    parser.add_argument("--procesos", type=int, default=os.cpu_count(), help="entregas a la vez")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as course_dir:
        n, elapsed, expected = lesson_class(course_dir, args.students, args.procesos)
        problems = inconsistencies(course_dir, expected)
    print(
        f"{n} entregas en {args.procesos} procesos: {elapsed:.1f} s en total, {elapsed / n:.2f} s por entrega"
    )
    print("base y grades.csv consistentes" if not problems else "\n".join(["INCONSISTENTE:", *problems]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

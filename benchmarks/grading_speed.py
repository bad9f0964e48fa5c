"""Mide cuánto tarda calificar una entrega de la Lección 6, y lo compara con un notebook trivial.

    python benchmarks/grading_speed.py [--students 11] [--procesos N] [--solo-correctas]

Arma en carpetas temporales (1) una clase de ``--students`` entregas de la Lección 6 (la clase
adversaria de las pruebas y, hasta completar, entregas correctas) y (2) la misma cantidad de
entregas de un notebook de una sola celda (``answer = 1``, una prueba). Las dos pasan por el mismo
camino: ``grade_class``, con la misma configuración de nbgrader, el mismo aislamiento y los mismos
procesos. Imprime el tiempo total, el de cada entrega y el cociente entre los dos. Con
``--solo-correctas`` la clase de la Lección 6 no trae la adversaria (ni su bucle de 5 s).
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

from grading_class import TIMEOUT, lesson_class  # noqa: E402

from solutions.grading.grade_class import grade_class  # noqa: E402
from solutions.grading.release import course_config, nbgrader  # noqa: E402
from solutions.grading.sample_class import CLASS  # noqa: E402

TRIVIAL = "trivial"


def trivial_cell(grade_id, text, **flags):
    meta = {"grade_id": grade_id, "locked": False, "schema_version": 3, "task": False, **flags}
    return new_code_cell(text, metadata={"nbgrader": meta})


def trivial_class(course_dir, students, processes):
    """Un notebook sin nada de la lección (una celda de respuesta y una de prueba), calificado por el
    mismo camino que la lección: solo cambian de dónde salen la fuente y lo repartido."""
    source = os.path.join(course_dir, "fuentes")
    os.makedirs(os.path.join(source, TRIVIAL))
    nb = new_notebook(
        cells=[
            trivial_cell("respuesta", "answer = 1", grade=False, solution=True),
            trivial_cell("prueba", "assert answer == 1", grade=True, solution=False, points=1),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, os.path.join(source, TRIVIAL, f"{TRIVIAL}.ipynb"))
    course_config(course_dir)
    nbgrader(course_dir, "generate_assignment", TRIVIAL, f"--CourseDirectory.source_directory={source}")
    for i in range(students):
        folder = os.path.join(course_dir, "submitted", f"e{i}", TRIVIAL)
        os.makedirs(folder)
        nbformat.write(nb, os.path.join(folder, f"{TRIVIAL}.ipynb"))
    overrides = {
        "CourseDirectory": {"source_directory": source},
        "RestoreStructure": {"released_directory": os.path.join(course_dir, "release", TRIVIAL)},
    }
    start = time.perf_counter()
    failed = grade_class(course_dir, processes, TIMEOUT, TRIVIAL, (TRIVIAL,), overrides)
    if failed:
        raise SystemExit(f"no se pudo calificar el notebook trivial de {', '.join(s for s, _ in failed)}")
    return students, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=len(CLASS), help="entregas de cada clase")
    parser.add_argument("--procesos", type=int, default=os.cpu_count(), help="entregas a la vez")
    parser.add_argument("--solo-correctas", action="store_true", help="sin la clase adversaria")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as lesson, tempfile.TemporaryDirectory() as trivial:
        n_trivial, t_trivial = trivial_class(trivial, args.students, args.procesos)
        n_lesson, t_lesson, _ = lesson_class(lesson, args.students, args.procesos, not args.solo_correctas)
    rows = (
        (
            f"Lección 6 (2 notebooks, {'correctas' if args.solo_correctas else 'clase adversaria'})",
            n_lesson,
            t_lesson,
        ),
        ("notebook trivial (1 celda + 1 prueba)", n_trivial, t_trivial),
    )
    print(f"{'qué':<44} {'entregas':>8} {'total':>8} {'por entrega':>12}")
    for what, n, t in rows:
        print(f"{what:<44} {n:>8} {t:7.1f}s {t / n:11.2f}s")
    print(f"cociente por entrega: {(t_lesson / n_lesson) / (t_trivial / n_trivial):.2f}×")


if __name__ == "__main__":
    main()

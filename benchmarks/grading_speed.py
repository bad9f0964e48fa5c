"""Mide cuánto tarda calificar una entrega de la Lección 6 y lo compara con un notebook trivial.

    python -m benchmarks.grading_speed [--students 8] [--rondas 3] [--procesos N] [--clase-adversaria]

En la misma corrida arma dos cursos en carpetas temporales: la Lección 6 (``--students`` entregas
correctas; con ``--clase-adversaria``, la clase adversaria de las pruebas y, hasta completar,
correctas) y un notebook de una sola celda (``answer = 1``, una prueba) con otras tantas entregas.
Los dos se califican por el mismo camino, ``grade_class`` (la misma configuración de nbgrader, el
mismo aislamiento), y se miden tres cosas:

1. **Una entrega, de punta a punta**: lo que espera quien califica una entrega suelta (una que llegó
   tarde, por ejemplo) con el comando del curso, en un intérprete nuevo: cargar nbgrader, medir la
   verdad del Nivel 1 si hace falta, calificar y escribir ``grades.csv``. Es la medida del issue (y
   su objetivo: la Lección 6 no más de 1,5 veces el notebook trivial). Mediana de ``--rondas``.
2. **Cada entrega de una clase, de a una** (un proceso): de que empieza su ``autograde`` a que tiene
   la nota, lo que ``grade_class`` informa por entrega; la mediana de las ``--rondas`` veces que se
   califica cada clase. Sin lo que se hace una vez por corrida.
3. **La clase** (``--procesos``, uno por núcleo): el tiempo total repartido entre las entregas. Con
   los núcleos llenos cuenta el trabajo total (dos kernels y nueve corridas por entrega de la
   lección, contra un kernel), no la espera.

4. **Contra ``nbgrader autograde`` sin más**: el mismo notebook trivial en un curso con la
   configuración de nbgrader de fábrica (sin aislamiento ni pasos propios), calificado por
   ``nbgrader autograde`` en un proceso; su tiempo total entre las entregas, contra el de la Lección 6
   calificada por ``grade_class`` en un proceso (``--procesos 1``), también entre sus entregas. Es la
   medida del issue 25 (objetivo: no más de 1,5×). Mediana de ``--rondas``.

Las rondas alternan los cursos: si la máquina cambia de ritmo, les toca a todos. Al final se imprime
la carga de la máquina (``os.getloadavg``) antes y después de medir.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import nbformat
from nbformat.v4 import new_notebook

from benchmarks.grading_class import TIMEOUT, TRIVIAL, lesson_course, plain_class, plain_course, trivial_cell
from solutions.grading.grade_class import grade_class
from solutions.grading.release import ASSIGNMENT, EXERCISES, course_config, importable_env, nbgrader

# El comando del curso en un intérprete nuevo (que importa solutions desde el repositorio: PYTHONPATH),
# con los argumentos de ``grade_class`` en JSON.
ONE_SUBMISSION = (
    "import json, sys; "
    "from solutions.grading.grade_class import grade_class; "
    "sys.exit(1 if grade_class(sys.argv[1], 1, **json.loads(sys.argv[2])) else 0)"
)


def trivial_course(course_dir, students):
    """Un notebook sin nada de la lección (una celda de respuesta y una de prueba), repartido y
    entregado por ``students``; devuelve los argumentos de ``grade_class`` para calificarlo."""
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
    return {"assignment": TRIVIAL, "notebooks": [TRIVIAL], "overrides": overrides}


def one_submission(course_dir, how):
    """Segundos del comando del curso, en un intérprete nuevo, sobre un curso con una entrega."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", ONE_SUBMISSION, course_dir, json.dumps(how)], env=importable_env(), check=True
    )
    return time.perf_counter() - start


def class_of(course_dir, processes, how):
    """(segundos de cada entrega, segundos de toda la clase) al calificar con ``grade_class``."""
    each = []
    start = time.perf_counter()
    failed = grade_class(
        course_dir, processes, TIMEOUT, progress=lambda *done, **_: each.append(done[4]), **how
    )
    total = time.perf_counter() - start
    if failed:
        raise SystemExit(f"no se pudo calificar a {', '.join(s for s, _ in failed)}")
    return each, total


def measure(args, folders):
    """{medida: (Lección 6, trivial)} en segundos."""
    (lesson_one, lesson_many, lesson), (trivial_one, trivial_many, trivial), plain = folders
    # Las clases se alternan ronda a ronda: si la máquina cambia de ritmo, les toca a todas.
    rounds, each, against_plain = [], [[], []], []
    for _ in range(args.rondas):
        rounds.append([one_submission(lesson_one, lesson), one_submission(trivial_one, trivial)])
        lesson_each, lesson_total = class_of(lesson_many, 1, lesson)
        each[0] += lesson_each
        each[1] += class_of(trivial_many, 1, trivial)[0]
        against_plain.append([lesson_total / args.students, plain_class(plain, args.students)])
    whole = [
        class_of(lesson_many, args.procesos, lesson)[1],
        class_of(trivial_many, args.procesos, trivial)[1],
    ]
    return {
        "una entrega, de punta a punta": [statistics.median(r[i] for r in rounds) for i in (0, 1)],
        "cada entrega de una clase, de a una": [statistics.median(e) for e in each],
        f"la clase ({args.procesos} procesos), por entrega": [t / args.students for t in whole],
        PLAIN_ROW: [statistics.median(r[i] for r in against_plain) for i in (0, 1)],
    }


# La medida del issue 25: la Lección 6 con grade_class contra el trivial con nbgrader autograde sin más.
PLAIN_ROW = "por entrega de una clase, vs. autograde sin más"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8, help="entregas de cada clase")
    parser.add_argument("--rondas", type=int, default=3, help="veces que se mide la entrega suelta")
    parser.add_argument("--procesos", type=int, default=os.cpu_count(), help="entregas a la vez en la clase")
    parser.add_argument("--clase-adversaria", action="store_true", help="con la clase adversaria")
    args = parser.parse_args()
    lesson = {"assignment": ASSIGNMENT, "notebooks": list(EXERCISES)}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as root:
        folders = [os.path.join(root, name) for name in ("l1", "ln", "t1", "tn", "pn")]
        for folder in folders:
            os.makedirs(folder)
        lesson_course(folders[0], 1, adversarial=False)
        lesson_course(folders[1], args.students, args.clase_adversaria)
        trivial_course(folders[2], 1)
        trivial = trivial_course(folders[3], args.students)
        plain_course(folders[4], args.students)
        print("midiendo…", file=sys.stderr, flush=True)
        courses = [(folders[0], folders[1], lesson), (folders[2], folders[3], trivial), folders[4]]
        rows = measure(args, courses)
    load_after = os.getloadavg()
    print(f"{'qué':<48} {'Lección 6':>10} {'trivial':>10} {'cociente':>9}")
    for what, (mine, theirs) in rows.items():
        print(f"{what:<48} {mine:9.2f}s {theirs:9.2f}s {mine / theirs:8.2f}×")
    print(
        "objetivo (issue 25): «por entrega de una clase, vs. autograde sin más» no más de 1,5×; "
        f"{os.cpu_count()} núcleos, carga antes {load_before[0]:.2f}, después {load_after[0]:.2f}"
    )


if __name__ == "__main__":
    main()

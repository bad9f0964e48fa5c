"""Calificar una clase entera de la Lección 6, en paralelo y aislada: el comando de quien dicta el curso.

    python -m solutions.grading.grade_class CARPETA_DEL_CURSO [--procesos N] [--tiempo S] [--sin-aislamiento]

La carpeta del curso tiene ``submitted/<estudiante>/leccion_6/*.ipynb``. El comando deja su
``nbgrader_config.py`` (una línea que carga el del repositorio), registra la tarea si hace falta
(``generate_assignment``), corre ``nbgrader autograde`` de cada estudiante en paralelo (uno por
núcleo), cada uno contra su propia copia de ``gradebook.db``, y después pasa las notas a la base
del curso de a una, así que la base queda consistente. Al final ``nbgrader export`` escribe
``grades.csv``. Un estudiante que no se pudo calificar se nombra en una línea y el comando sale con
código 1: nunca queda un 0 silencioso.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from nbgrader.api import Gradebook

from solutions.grading import sandbox, truth
from solutions.grading.release import ASSIGNMENT, EXERCISES, course_config, nbgrader


def students(course_dir):
    root = os.path.join(course_dir, "submitted")
    return sorted(s for s in os.listdir(root) if os.path.isdir(os.path.join(root, s, ASSIGNMENT)))


def autograde_one(course_dir, student, scratch, timeout):
    """``nbgrader autograde`` de un estudiante contra una copia de la base; (estudiante, copia, falla)."""
    db = os.path.join(scratch, f"{student}.db")
    shutil.copyfile(os.path.join(course_dir, "gradebook.db"), db)
    done = nbgrader(
        course_dir,
        "autograde",
        ASSIGNMENT,
        f"--student={student}",
        "--force",
        f"--CourseDirectory.db_url=sqlite:///{db}",
        f"--Execute.timeout={timeout}",
        check=False,
    )
    folder = os.path.join(course_dir, "autograded", student, ASSIGNMENT)
    missing = [n for n in EXERCISES if not os.path.exists(os.path.join(folder, f"{n}.ipynb"))]
    if done.returncode != 0 or missing:
        errors = [line for line in done.stderr.splitlines() if "ERROR" in line or "Error" in line]
        return student, db, (errors[-1] if errors else f"sin notebook calificado: {', '.join(missing)}")
    return student, db, None


def merge(course_dir, student, db):
    """Pasa las notas automáticas de ``student`` de su copia a la base del curso."""
    with Gradebook(f"sqlite:///{db}") as src, Gradebook(f"sqlite:///{course_dir}/gradebook.db") as dst:
        submission = src.find_submission(ASSIGNMENT, student)
        dst.update_or_create_student(student)
        dst.update_or_create_submission(ASSIGNMENT, student, timestamp=submission.timestamp)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                target = dst.find_grade(grade.name, notebook.name, ASSIGNMENT, student)
                target.auto_score, target.needs_manual_grade = grade.auto_score, grade.needs_manual_grade
            for comment in notebook.comments:
                dst.find_comment(
                    comment.name, notebook.name, ASSIGNMENT, student
                ).auto_comment = comment.auto_comment
        dst.db.commit()


def grade_class(course_dir, processes, timeout=30):
    course_config(course_dir)
    if not os.path.exists(os.path.join(course_dir, "gradebook.db")):
        nbgrader(course_dir, "generate_assignment", ASSIGNMENT, "--force")
    failed = []
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(processes) as pool:
        measured = os.path.join(scratch, "verdad.json")
        with open(measured, "w", encoding="utf-8") as f:
            json.dump(truth.measured(), f)  # una medición para toda la clase, no una por proceso
        os.environ[truth.TRUTH_FILE_ENV] = measured
        jobs = [pool.submit(autograde_one, course_dir, s, scratch, timeout) for s in students(course_dir)]
        for job in jobs:
            student, db, problem = job.result()
            if problem:
                failed.append((student, problem))
            else:
                merge(course_dir, student, db)
    nbgrader(course_dir, "export")
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("carpeta", help="la carpeta del curso (con submitted/)")
    parser.add_argument("--procesos", type=int, default=os.cpu_count(), help="entregas a la vez (núcleos)")
    parser.add_argument(
        "--sin-aislamiento", action="store_true", help="calificar sin bubblewrap (solo si confías en todas)"
    )
    parser.add_argument("--tiempo", type=int, default=30, help="segundos por celda antes de cortarla")
    args = parser.parse_args(argv)
    if args.sin_aislamiento:
        os.environ[sandbox.UNSANDBOXED_ENV] = "1"
    try:
        sandbox.required()
    except sandbox.SandboxMissingError as err:
        print(err, file=sys.stderr)
        return 2
    failed = grade_class(os.path.abspath(args.carpeta), max(1, args.procesos), args.tiempo)
    for student, problem in failed:
        print(f"NO SE PUDO CALIFICAR a {student}: {problem}", file=sys.stderr)
    print(f"grades.csv escrito en {args.carpeta}" + (f"; {len(failed)} sin calificar" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

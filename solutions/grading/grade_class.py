"""Calificar una clase entera de la Lección 6, en paralelo y aislada: el comando de quien dicta el curso.

    python -m solutions.grading.grade_class CARPETA_DEL_CURSO [--procesos N] [--tiempo S] [--sin-aislamiento]

La carpeta del curso tiene ``submitted/<estudiante>/leccion_6/*.ipynb``. El comando deja su
``nbgrader_config.py`` (una línea que carga el del repositorio), registra la tarea si hace falta
(``generate_assignment``) y reparte las entregas entre procesos (uno por núcleo). Cada proceso carga
nbgrader una sola vez y corre el ``autograde`` de cada entrega que le toca (``AheadAutograde``: el de
nbgrader, con la misma configuración, que arranca los kernels y las comprobaciones de la entrega
desde el principio) contra su propia copia de ``gradebook.db``. Las notas de cada entrega pasan a la
base del curso apenas termina (una línea de avance por entrega en stderr), así que la base queda
consistente; al final se escribe ``grades.csv`` como lo haría ``nbgrader export``. Un estudiante que
no se pudo calificar se nombra en una línea y el comando sale con código 1: nunca queda un 0 silencioso.
"""

import argparse
import contextlib
import json
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time
import warnings

from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import CsvExportPlugin
from nbgrader.utils import capture_log
from sqlalchemy.exc import SAWarning
from traitlets.config import Config, PyFileConfigLoader

from solutions.grading import sandbox, truth
from solutions.grading.autograde import AheadAutograde
from solutions.grading.judge import CHECKS
from solutions.grading.release import ASSIGNMENT, EXERCISES, NbgraderError, course_config, nbgrader

# Lo que cada proceso de calificación arma una vez: su configuración y su copia de la base.
_worker = {}


def students(course_dir, assignment=ASSIGNMENT):
    root = os.path.join(course_dir, "submitted")
    return sorted(s for s in os.listdir(root) if os.path.isdir(os.path.join(root, s, assignment)))


def _start_worker(*args):
    """Una vez por proceso: la configuración del curso (la de ``nbgrader autograde``) y su base. Si
    falla, cada entrega de este proceso lo dice (un inicializador que lanza se reintentaría sin fin)."""
    try:
        _prepare_worker(*args)
    except Exception as err:  # noqa: BLE001 (se informa por entrega, con su texto)
        _worker["problem"] = f"no se pudo preparar nbgrader: {err}"


def _prepare_worker(course_dir, scratch, timeout, overrides):
    db = os.path.join(scratch, f"proceso_{os.getpid()}.db")
    shutil.copyfile(os.path.join(course_dir, "gradebook.db"), db)
    config = PyFileConfigLoader("nbgrader_config.py", path=course_dir).load_config()
    config.merge(
        Config(
            {
                "CourseDirectory": {"root": course_dir, "db_url": f"sqlite:///{db}"},
                "Execute": {"timeout": timeout},
                "JudgeAnswers": {"timeout": timeout},
            }
        )
    )
    config.merge(Config(overrides))
    os.chdir(course_dir)
    _worker.update(config=config, db=db, course_dir=course_dir)


def _autograde(job):
    """El ``autograde`` de una entrega en este proceso; (estudiante, base, problema o None, segundos)."""
    start = time.perf_counter()
    student, db, problem = _autograde_one(*job)
    return student, db, problem, time.perf_counter() - start


def _autograde_one(assignment, student, notebooks):
    if "problem" in _worker:
        return student, None, _worker["problem"]
    config = _worker["config"]
    coursedir = CourseDirectory(config=config, assignment_id=assignment, student_id=student)
    app = AheadAutograde(coursedir=coursedir, config=config)
    app.force, app.create_student = True, True
    done = capture_log(app)
    folder = os.path.join(_worker["course_dir"], "autograded", student, assignment)
    missing = [n for n in notebooks if not os.path.exists(os.path.join(folder, f"{n}.ipynb"))]
    if done["success"] and not missing:
        return student, _worker["db"], None
    return student, _worker["db"], reason(done.get("log", "")) or f"sin notebook calificado: {missing}"


# La última línea de una traza: el tipo de la excepción y su mensaje.
RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b:?.*$")


def reason(log):
    """Por qué no se pudo calificar, en una línea: la excepción de la traza que nbgrader dejó en su log
    (su propio último error solo dice «ver la traza de arriba»), o ese error si no hay traza."""
    lines = [line.strip() for line in log.splitlines()]
    raised = [line for line in lines if RAISED.match(line)]
    errors = [line.removeprefix("[ERROR] ") for line in lines if line.startswith("[ERROR]")]
    return (raised or errors or [None])[-1]


def merge(course_dir, assignment, student, db):
    """Pasa las notas automáticas de ``student`` de la base de un proceso a la base del curso."""
    with Gradebook(f"sqlite:///{db}") as src, Gradebook(f"sqlite:///{course_dir}/gradebook.db") as dst:
        submission = src.find_submission(assignment, student)
        dst.update_or_create_student(student)
        dst.update_or_create_submission(assignment, student, timestamp=submission.timestamp)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                target = dst.find_grade(grade.name, notebook.name, assignment, student)
                target.auto_score, target.needs_manual_grade = grade.auto_score, grade.needs_manual_grade
            for comment in notebook.comments:
                dst.find_comment(
                    comment.name, notebook.name, assignment, student
                ).auto_comment = comment.auto_comment
        dst.db.commit()


def grade_class(
    course_dir,
    processes,
    timeout=30,
    assignment=ASSIGNMENT,
    notebooks=EXERCISES,
    overrides=None,
    progress=None,
):
    """Califica cada entrega de ``assignment`` en ``processes`` procesos; [(estudiante, problema)].
    ``progress(hechas, total, estudiante, problema, segundos)`` se llama al terminar cada entrega."""
    # nbgrader crea cada entrega de una forma que SQLAlchemy desaprueba; el aviso no le dice nada a
    # quien califica (y lo heredan los procesos de calificación).
    warnings.filterwarnings("ignore", category=SAWarning, module="nbgrader.api")
    course_config(course_dir)
    if not os.path.exists(os.path.join(course_dir, "gradebook.db")):
        nbgrader(course_dir, "generate_assignment", assignment, "--force")
    sandbox.required()
    failed = []
    # Las bases de cada proceso son copias de trabajo: en memoria (/dev/shm), sus commits no esperan
    # al disco. Si algo falla se descartan; la del curso recibe las notas de a una entrega.
    with (
        tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as scratch,
        _truth_for_workers(scratch, notebooks),
    ):
        # fork: cada proceso hereda lo ya importado; la base de cada uno es suya hasta el final.
        context = multiprocessing.get_context("fork")
        init = (course_dir, scratch, timeout, overrides or {})
        with context.Pool(processes, initializer=_start_worker, initargs=init, maxtasksperchild=None) as pool:
            jobs = [(assignment, s, notebooks) for s in students(course_dir, assignment)]
            for done, (student, db, problem, seconds) in enumerate(pool.imap_unordered(_autograde, jobs), 1):
                if problem:
                    failed.append((student, problem))
                else:
                    merge(course_dir, assignment, student, db)
                if progress:
                    progress(done, len(jobs), student, problem, seconds)
    export_grades(course_dir)
    return failed


@contextlib.contextmanager
def _truth_for_workers(scratch, notebooks):
    """Si alguna comprobación la usa, la verdad del Nivel 1 medida una vez para toda la clase, en un
    archivo que cada proceso de calificación lee; la variable que lo nombra no sobrevive a la clase."""
    if not any(kind == "json" for n in notebooks for kind, _ in CHECKS.get(n, {}).values()):
        yield
        return
    os.environ.pop(truth.TRUTH_FILE_ENV, None)  # la de otra clase, ya borrada, no vale
    measured = os.path.join(scratch, "verdad.json")
    with open(measured, "w", encoding="utf-8") as f:
        json.dump(truth.measured(), f)
    os.environ[truth.TRUTH_FILE_ENV] = measured
    try:
        yield
    finally:
        os.environ.pop(truth.TRUTH_FILE_ENV, None)


def export_grades(course_dir):
    """Lo que hace ``nbgrader export`` con la configuración del curso (``grades.csv``), en este
    proceso: otro intérprete que vuelva a cargar nbgrader tarda más que exportar."""
    config = PyFileConfigLoader("nbgrader_config.py", path=course_dir).load_config()
    coursedir = CourseDirectory(config=config, root=course_dir)
    plugin = CsvExportPlugin(config=config)
    plugin.to = plugin.to or os.path.join(course_dir, "grades.csv")
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        plugin.export(gradebook)


def show_progress(done, total, student, problem, seconds):
    outcome = f"NO SE PUDO CALIFICAR ({problem})" if problem else f"calificada en {seconds:.1f} s"
    print(f"[{done}/{total}] {student}: {outcome}", file=sys.stderr, flush=True)


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
    try:
        failed = grade_class(
            os.path.abspath(args.carpeta), max(1, args.procesos), args.tiempo, progress=show_progress
        )
    except NbgraderError as err:  # un paso de nbgrader que no es de una entrega: una línea, sin traza
        print(err, file=sys.stderr)
        return 1
    for student, problem in failed:
        print(f"NO SE PUDO CALIFICAR a {student}: {problem}", file=sys.stderr)
    print(f"grades.csv escrito en {args.carpeta}" + (f"; {len(failed)} sin calificar" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

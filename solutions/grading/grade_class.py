"""Calificar una clase entera de la Lección 6, en paralelo y aislada: el comando de quien dicta el curso.

    python -m solutions.grading.grade_class CARPETA_DEL_CURSO [--todo] [--procesos N] [--tiempo S] [--sin-aislamiento]

La carpeta del curso tiene ``submitted/<estudiante>/leccion_6/*.ipynb``. El comando deja su
``nbgrader_config.py`` (carga el del repositorio sin guardar rutas; uno viejo se reemplaza y se dice),
registra la tarea si hace falta (``generate_assignment``) y reparte las entregas entre procesos (uno
por núcleo). Por omisión solo califica las entregas nuevas o cambiadas desde la última vez (su huella
queda en ``calificadas.json``); ``--todo`` las vuelve a calificar todas. Cada proceso carga
nbgrader una sola vez y corre el ``autograde`` de cada entrega que le toca (``AheadAutograde``: el de
nbgrader, con la misma configuración, que arranca los kernels y las comprobaciones de la entrega
desde el principio) contra su propia copia de ``gradebook.db``. Las notas de cada entrega pasan a la
base del curso apenas termina (una línea de avance por entrega en stderr), así que la base queda
consistente; al final se escriben ``grades.csv`` (como lo haría ``nbgrader export``, más la columna
``manual_pendiente``) y el informe de la clase (``informe.html``, ``informe.svg``: ``report``). Se
califica lo que hay: nbgrader califica una copia de lo que cuenta como entregado (``handed_in``: sin
seguir enlaces, con tope); un notebook que no cuenta (falta, es un enlace, una FIFO, una carpeta, no es
un notebook) vale 0, se nombra con su razón en la línea de avance, el informe y la devolución, y el
resto de la entrega se califica. Los archivos de una persona nunca detienen a la clase; un estudiante
que no se pudo calificar por una falla de la calificación se nombra en una línea y el comando sale con
código 1: nunca queda un 0 silencioso.
"""

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
from nbgrader.utils import capture_log
from sqlalchemy.exc import SAWarning
from traitlets.config import Config, PyFileConfigLoader

from harness.conformidad.spanish_args import command_parser
from harness.notebook import assignment as class_list
from solutions.grading import handed_in, report, sandbox, truth
from solutions.grading.autograde import AheadAutograde
from solutions.grading.judge import CHECKS
from solutions.grading.preprocessors import RestoreStructure
from solutions.grading.release import ASSIGNMENT, EXERCISES, NbgraderError, course_config, nbgrader

# Lo que cada proceso de calificación arma una vez: su configuración y su copia de la base.
_worker = {}
# {estudiante: huella de su entrega} de las entregas ya calificadas, en la carpeta del curso.
GRADED_FILE = "calificadas.json"


def students(course_dir, assignment=ASSIGNMENT):
    root = os.path.join(course_dir, "submitted")
    return sorted(s for s in os.listdir(root) if os.path.isdir(os.path.join(root, s, assignment)))


def graded_before(course_dir):
    """{estudiante: huella} de lo ya calificado ({} si no hay registro o no se puede leer)."""
    try:
        with open(os.path.join(course_dir, GRADED_FILE), encoding="utf-8") as f:
            known = json.load(f)
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def record_graded(course_dir, known):
    path = os.path.join(course_dir, GRADED_FILE)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(known, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def to_grade(course_dir, assignment, everyone):
    """[(estudiante, huella)] de las entregas que hay que calificar: todas con ``everyone``; si no,
    las nuevas, las cambiadas y las que no tienen su notebook calificado."""
    known = graded_before(course_dir)
    chosen = []
    for student in students(course_dir, assignment):
        now = handed_in.fingerprint(course_dir, student, assignment)
        done = os.path.isdir(os.path.join(course_dir, "autograded", student, assignment))
        if everyone or known.get(student) != now or not done:
            chosen.append((student, now))
    return chosen


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
    # nbgrader califica la copia de cada entrega que deja ``handed_in.stage``, no su carpeta.
    staged = os.path.join(scratch, f"entregas_{os.getpid()}")
    config = PyFileConfigLoader("nbgrader_config.py", path=course_dir).load_config()
    config.merge(
        Config(
            {
                "CourseDirectory": {
                    "root": course_dir,
                    "db_url": f"sqlite:///{db}",
                    "submitted_directory": staged,
                },
                "Execute": {"timeout": timeout},
                "JudgeAnswers": {"timeout": timeout},
            }
        )
    )
    config.merge(Config(overrides))
    os.chdir(course_dir)
    _worker.update(config=config, db=db, course_dir=course_dir, staged=staged)


def _autograde(job):
    """El ``autograde`` de una entrega en este proceso; (estudiante, base, problema o None, segundos,
    {notebook: por qué no cuenta como entregado})."""
    start = time.perf_counter()
    student = job[1]
    if "problem" in _worker:
        return student, None, _worker["problem"], time.perf_counter() - start, {}
    staged = os.path.join(_worker["staged"], student)
    try:
        problem, absent = _autograde_one(*job, os.path.join(staged, job[0]))
    except Exception as err:  # noqa: BLE001 (una entrega nunca detiene a la clase: se dice por qué)
        problem, absent = f"{type(err).__name__}: {err}", {}
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return student, _worker["db"], problem, time.perf_counter() - start, absent


def _autograde_one(assignment, student, notebooks, shared_with, staged):
    """Copia lo que cuenta de la entrega (``handed_in.stage``) y la califica; (problema o None,
    {notebook: por qué no cuenta como entregado})."""
    course_dir = _worker["course_dir"]
    absent = handed_in.stage(course_dir, student, assignment, notebooks, staged, shared_with)
    if len(absent) == len(notebooks):
        _nothing_handed_in(assignment, student)
        return None, absent
    config = _worker["config"]
    coursedir = CourseDirectory(config=config, assignment_id=assignment, student_id=student)
    app = AheadAutograde(coursedir=coursedir, config=config)
    app.force, app.create_student = True, True
    done = capture_log(app)
    absent.update(app.rejected)
    folder = os.path.join(course_dir, "autograded", student, assignment)
    missing = [
        n for n in notebooks if n not in absent and not os.path.exists(os.path.join(folder, f"{n}.ipynb"))
    ]
    if done["success"] and not missing:
        return None, absent
    return reason(done.get("log", "")) or f"sin notebook calificado: {missing}", absent


def _nothing_handed_in(assignment, student):
    """Lo que nbgrader anota de una entrega sin ningún notebook que cuente: cada pregunta en 0, sin nota
    a mano pendiente, y su carpeta calificada vacía (la de una calificación anterior no queda)."""
    with Gradebook(f"sqlite:///{_worker['db']}") as gb:
        gb.update_or_create_student(student)
        submission = gb.update_or_create_submission(assignment, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.auto_score, grade.needs_manual_grade = 0, False
        gb.db.commit()
    folder = os.path.join(_worker["course_dir"], "autograded", student, assignment)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)


# La última línea de una traza: el tipo de la excepción y su mensaje.
RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b:?.*$")


def reason(log):
    """Por qué no se pudo calificar, en una línea: la excepción de la traza que nbgrader dejó en su log
    (su propio último error solo dice «ver la traza de arriba»), o ese error si no hay traza."""
    lines = [line.strip() for line in log.splitlines()]
    raised = [line for line in lines if RAISED.match(line)]
    errors = [line.removeprefix("[ERROR] ") for line in lines if line.startswith("[ERROR]")]
    return (raised or errors or [None])[-1]


def merge(course_dir, assignment, student, db, keep_manual=False):
    """Pasa las notas automáticas de ``student`` de la base de un proceso a la base del curso. Con
    ``keep_manual`` (la entrega no cambió) las notas a mano ya puestas siguen valiendo; si no, la
    respuesta escrita es otra y su nota vuelve a quedar pendiente."""
    with Gradebook(f"sqlite:///{db}") as src, Gradebook(f"sqlite:///{course_dir}/gradebook.db") as dst:
        submission = src.find_submission(assignment, student)
        dst.update_or_create_student(student)
        dst.update_or_create_submission(assignment, student, timestamp=submission.timestamp)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                target = dst.find_grade(grade.name, notebook.name, assignment, student)
                target.auto_score, target.needs_manual_grade = grade.auto_score, grade.needs_manual_grade
                if target.manual_score is not None and not keep_manual:
                    target.manual_score = None
                    target.needs_manual_grade = target.auto_score is None
                elif target.manual_score is not None:
                    target.needs_manual_grade = False
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
    everyone=True,
    say=None,
):
    """Califica las entregas de ``assignment`` en ``processes`` procesos; [(estudiante, problema)].
    Con ``everyone`` todas; si no, solo las nuevas o cambiadas. ``progress(hechas, total, estudiante,
    problema, segundos, missing=qué notebooks faltan, en texto)`` se llama al terminar cada entrega; ``say(texto)``, con cada aviso."""
    say = say or (lambda text: None)
    # nbgrader crea cada entrega de una forma que SQLAlchemy desaprueba; el aviso no le dice nada a
    # quien califica (y lo heredan los procesos de calificación).
    warnings.filterwarnings("ignore", category=SAWarning, module="nbgrader.api")
    if course_config(course_dir):
        say(
            "nbgrader_config.py de la carpeta del curso reemplazado por uno sin rutas de esta máquina "
            "(el anterior no servía si el repositorio o la carpeta se movían)"
        )
    if not os.path.exists(os.path.join(course_dir, "gradebook.db")):
        nbgrader(course_dir, "generate_assignment", assignment, "--force")
    sandbox.required()
    failed = []
    known = graded_before(course_dir)
    chosen = dict(to_grade(course_dir, assignment, everyone))
    skipped = len(students(course_dir, assignment)) - len(chosen)
    if skipped:
        say(
            f"{skipped} entregas sin cambios desde la última calificación (--todo para calificarlas otra vez)"
        )
    if chosen:
        record_moments(course_dir, chosen, released_folder(overrides))
        failed = _grade(
            course_dir, processes, timeout, assignment, notebooks, overrides, progress, chosen, known
        )
    export_grades(course_dir, assignment)
    return failed


def _grade(course_dir, processes, timeout, assignment, notebooks, overrides, progress, chosen, known):
    """Califica las entregas de ``chosen`` ({estudiante: huella}) y anota en ``known`` cada una que
    pasó a la base del curso; [(estudiante, problema)]."""
    failed = []
    # Las bases de cada proceso son copias de trabajo: en memoria (/dev/shm), sus commits no esperan
    # al disco. Si algo falla se descartan; la del curso recibe las notas de a una entrega.
    with (
        tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as scratch,
        _truth_for_workers(scratch, notebooks, chosen, released_folder(overrides)),
    ):
        # fork: cada proceso hereda lo ya importado; la base de cada uno es suya hasta el final.
        context = multiprocessing.get_context("fork")
        init = (course_dir, scratch, timeout, overrides or {})
        # Un notebook que es el mismo archivo que el de otra entrega se busca en toda la clase.
        shared = handed_in.shared(course_dir, students(course_dir, assignment), notebooks, assignment)
        with context.Pool(processes, initializer=_start_worker, initargs=init, maxtasksperchild=None) as pool:
            jobs = [
                (assignment, s, notebooks, {n: o for (t, n), o in shared.items() if t == s}) for s in chosen
            ]
            results = pool.imap_unordered(_autograde, jobs)
            for done, (student, db, problem, seconds, absent) in enumerate(results, 1):
                if problem:
                    failed.append((student, problem))
                    known.pop(student, None)
                else:
                    handed_in.record(course_dir, student, absent)
                    merge(
                        course_dir, assignment, student, db, keep_manual=known.get(student) == chosen[student]
                    )
                    known[student] = chosen[student]
                record_graded(course_dir, known)
                if progress:
                    missing = [n for n in notebooks if n in absent and not problem]
                    said = missing and report.absent_text(course_dir, student, missing, assignment)
                    progress(done, len(jobs), student, problem, seconds, missing=said)
    return failed


def class_moments(students, released):
    """Los momentos del Nivel 1 de ``students`` según la lista de la clase repartida en ``released``
    (quien no está en la lista no tiene momentos: su comprobación lo dice)."""
    found = set()
    for student in students:
        with contextlib.suppress(class_list.NotAssignedError):
            found.update(class_list.moments_for(student, released))
    return found


def released_folder(overrides):
    """La carpeta de los notebooks repartidos (y de la lista de la clase) con la que se califica."""
    restore = (overrides or {}).get("RestoreStructure", {})
    return restore.get("released_directory", RestoreStructure.released_directory.default_value)


def record_moments(course_dir, students, released):
    """Anota en la carpeta del curso los momentos del Nivel 1 con que se calificó a cada uno de
    ``students`` (el informe y la devolución los nombran); quien no está en la lista, sin momentos."""
    path = os.path.join(course_dir, report.MOMENTS_FILE)
    known = report.graded_moments(course_dir)
    for student in students:
        try:
            known[student] = list(class_list.moments_for(student, released))
        except class_list.NotAssignedError:
            known[student] = []
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(known, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


@contextlib.contextmanager
def _truth_for_workers(scratch, notebooks, students, released):
    """Si alguna comprobación la usa, la verdad de los momentos del Nivel 1 de ``students`` medida una vez
    para toda la clase (o leída de lo ya medido), en un archivo que cada proceso de calificación lee; la
    variable que lo nombra no sobrevive a la clase. ``released``: la carpeta de la lista de la clase."""
    if not any(kind == "json" for n in notebooks for kind, _ in CHECKS.get(n, {}).values()):
        yield
        return
    os.environ.pop(truth.TRUTH_FILE_ENV, None)  # la de otra clase, ya borrada, no vale
    measured = os.path.join(scratch, "verdad.json")
    with open(measured, "w", encoding="utf-8") as f:
        json.dump(truth.measured(class_moments(students, released)), f)
    os.environ[truth.TRUTH_FILE_ENV] = measured
    try:
        yield
    finally:
        os.environ.pop(truth.TRUTH_FILE_ENV, None)


def export_grades(course_dir, assignment=ASSIGNMENT):
    """``grades.csv`` (lo de ``nbgrader export`` y ``manual_pendiente``) y, de la Lección 6, el informe
    de la clase, en este proceso: otro intérprete que vuelva a cargar nbgrader tarda más que exportar."""
    report.refresh(course_dir, assignment)


def show_progress(done, total, student, problem, seconds, missing=()):
    outcome = f"NO SE PUDO CALIFICAR ({problem})" if problem else f"calificada en {seconds:.1f} s"
    if missing and not problem:
        outcome += f"; {missing} (vale 0)"
    print(f"[{done}/{total}] {student}: {outcome}", file=sys.stderr, flush=True)


def main(argv=None):
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("carpeta", help="la carpeta del curso (con submitted/)")
    parser.add_argument("--procesos", type=int, default=os.cpu_count(), help="entregas a la vez (núcleos)")
    parser.add_argument(
        "--sin-aislamiento", action="store_true", help="calificar sin bubblewrap (solo si confías en todas)"
    )
    parser.add_argument("--tiempo", type=int, default=30, help="segundos por celda antes de cortarla")
    parser.add_argument(
        "--todo",
        action="store_true",
        help="calificar otra vez todas las entregas, no solo las nuevas o cambiadas",
    )
    args = parser.parse_args(argv)
    if not os.path.isdir(os.path.join(args.carpeta, "submitted")):
        print(
            f"{args.carpeta} no tiene entregas: cada una va en "
            f"{os.path.join(args.carpeta, 'submitted', '<estudiante>', ASSIGNMENT)}/ (ver docs/instructores.md)",
            file=sys.stderr,
        )
        return 1
    if args.sin_aislamiento:
        os.environ[sandbox.UNSANDBOXED_ENV] = "1"
    try:
        sandbox.required()
    except sandbox.SandboxMissingError as err:
        print(err, file=sys.stderr)
        return 2
    try:
        failed = grade_class(
            os.path.abspath(args.carpeta),
            max(1, args.procesos),
            args.tiempo,
            progress=show_progress,
            everyone=args.todo,
            say=lambda text: print(text, file=sys.stderr, flush=True),
        )
    except NbgraderError as err:  # un paso de nbgrader que no es de una entrega: una línea, sin traza
        print(err, file=sys.stderr)
        return 1
    for student, problem in failed:
        print(f"NO SE PUDO CALIFICAR a {student}: {problem}", file=sys.stderr)
    print(
        f"grades.csv, informe.html e informe.svg escritos en {args.carpeta}"
        + (f"; {len(failed)} sin calificar" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Las respuestas escritas, calificadas desde la terminal (sin el Formgrader, sobre la misma base).

    python -m solutions.grading.manual CARPETA_DEL_CURSO --pendientes
    python -m solutions.grading.manual CARPETA_DEL_CURSO ESTUDIANTE PREGUNTA PUNTOS [--comentario TEXTO]

``--pendientes`` lista las respuestas a mano que todavía no tienen nota, una por línea:
``ESTUDIANTE<TAB>PREGUNTA<TAB>PUNTOS<TAB>RESPUESTA<TAB>RÚBRICA`` (la respuesta y la rúbrica, acortadas).
La otra forma anota la nota de una pregunta (y un comentario, que la persona ve en su devolución) en
``gradebook.db`` como lo hace el Formgrader, y rehace ``grades.csv`` y el informe de la clase. Una
pregunta es su ``grade_id`` (``explicacion``, ``explicacion_error``); los puntos van de 0 a los de la
pregunta. Un estudiante o una pregunta que no existen son un error de una línea y código 1.
"""

import argparse
import os
import sys
import warnings

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning

from solutions.grading import paths, report
from solutions.grading.release import ASSIGNMENT, EXERCISES
from solutions.grading.sample_class import SOLUTION_MARKERS


class ManualError(Exception):
    """Lo que impide anotar una nota, en una línea en español."""


def rubric(notebook, question, assignment=ASSIGNMENT):
    """La rúbrica de ``question`` en la fuente de instructor (lo que sigue a «Rúbrica»), o ""."""
    nb = nbformat.read(os.path.join(paths.SOURCE, assignment, f"{notebook}.ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == question:
            text = SOLUTION_MARKERS.sub("", cell.source)
            start = text.find("**Rúbrica")
            return text[start:] if start >= 0 else ""
    return ""


def answer_text(course_dir, student, notebook, question, assignment=ASSIGNMENT):
    """El texto que ``student`` escribió en ``question`` (del notebook calificado), o ""."""
    path = os.path.join(course_dir, "autograded", student, assignment, f"{notebook}.ipynb")
    if not os.path.exists(path):
        return ""
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == question:
            return cell.source
    return ""


def pending_lines(course_dir, assignment=ASSIGNMENT):
    """Las líneas de ``--pendientes``, ordenadas por estudiante y pregunta."""
    with Gradebook(report.db_url(course_dir)) as gradebook:
        waiting = report.pending(gradebook, assignment)
    lines = []
    for student in sorted(waiting):
        for notebook, question, points in waiting[student]:
            answer = report.shorten(answer_text(course_dir, student, notebook, question, assignment))
            guide = report.shorten(rubric(notebook, question, assignment))
            lines.append(f"{student}\t{question}\t{points:g}\t{answer}\t{guide}")
    return lines


def find_question(gradebook, question, assignment=ASSIGNMENT):
    """El notebook de la pregunta a mano ``question``; si no existe, un ``ManualError``."""
    manual = []
    for notebook in EXERCISES:
        for grade_id, _, by_hand in report.grade_cells(notebook, assignment):
            if by_hand:
                manual.append(grade_id)
                if grade_id == question:
                    return notebook
    raise ManualError(
        f"no hay una pregunta a mano «{question}» en {assignment}; las que se califican a mano son: "
        + ", ".join(manual)
    )


def record(course_dir, student, question, points, comment=None, assignment=ASSIGNMENT):
    """Anota ``points`` (y ``comment``) en la pregunta ``question`` de ``student``; rehace
    ``grades.csv`` y el informe. Devuelve los puntos máximos de la pregunta."""
    if not os.path.exists(os.path.join(course_dir, "gradebook.db")):
        raise ManualError(
            f"{course_dir} no tiene gradebook.db: primero «python -m solutions.grading.grade_class {course_dir}»"
        )
    with Gradebook(report.db_url(course_dir)) as gradebook:
        notebook = find_question(gradebook, question, assignment)
        try:
            gradebook.find_submission(assignment, student)
        except MissingEntry:
            known = sorted(s.id for s in gradebook.students)
            raise ManualError(
                f"no hay una entrega calificada de «{student}» en {assignment}; "
                f"estudiantes calificados: {', '.join(known) or 'ninguno'}"
            ) from None
        grade = gradebook.find_grade(question, notebook, assignment, student)
        if not 0 <= points <= grade.max_score:
            raise ManualError(f"{question} vale de 0 a {grade.max_score:g} puntos, no {points:g}")
        grade.manual_score = points
        grade.needs_manual_grade = False  # lo mismo que hace el Formgrader al guardar una nota
        if comment is not None:
            gradebook.find_comment(question, notebook, assignment, student).manual_comment = comment
        gradebook.db.commit()
        top = grade.max_score
    report.refresh(course_dir)
    return top


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("carpeta", help="la carpeta del curso (con gradebook.db)")
    parser.add_argument("estudiante", nargs="?", help="quien entregó")
    parser.add_argument("pregunta", nargs="?", help="la pregunta a mano: explicacion o explicacion_error")
    parser.add_argument("puntos", nargs="?", type=float, help="los puntos, de 0 a los de la pregunta")
    parser.add_argument("--comentario", help="lo que la persona lee junto a su nota en la devolución")
    parser.add_argument("--pendientes", action="store_true", help="listar las respuestas sin nota")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=SAWarning)
    course_dir = report.graded_course(args.carpeta)
    if course_dir is None:
        return 1
    if args.pendientes:
        if args.estudiante is not None:
            parser.error("--pendientes no lleva estudiante, pregunta ni puntos")
        lines = pending_lines(course_dir)
        for line in lines:
            print(line)
        print(f"{len(lines)} respuestas a mano sin nota", file=sys.stderr)
        return 0
    if args.puntos is None:
        parser.error("faltan ESTUDIANTE PREGUNTA PUNTOS (o --pendientes)")
    try:
        top = record(course_dir, args.estudiante, args.pregunta, args.puntos, args.comentario)
    except ManualError as err:
        print(err, file=sys.stderr)
        return 1
    print(
        f"{args.estudiante}: {args.pregunta} = {args.puntos:g} de {top:g}; grades.csv e informe.html al día"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Las respuestas escritas, calificadas desde la terminal (sin el Formgrader, sobre la misma base).

    python -m solutions.grading.manual CARPETA_DEL_CURSO --pendientes
    python -m solutions.grading.manual CARPETA_DEL_CURSO ESTUDIANTE PREGUNTA PUNTOS [--comentario TEXTO]
    python -m solutions.grading.manual CARPETA_DEL_CURSO --csv NOTAS.csv

``--pendientes`` lista las respuestas a mano que todavía no tienen nota, una por línea:
``ESTUDIANTE<TAB>PREGUNTA<TAB>PUNTOS<TAB>RESPUESTA<TAB>RÚBRICA`` (la respuesta y la rúbrica, acortadas).
La otra forma anota la nota de una pregunta (y un comentario, que la persona ve en su devolución) en
``gradebook.db`` como lo hace el Formgrader, y rehace ``grades.csv`` y el informe de la clase. Una
pregunta es su ``grade_id`` (``explicacion``, ``explicacion_error``); los puntos van de 0 a los de la
pregunta, en centésimos. Un estudiante o una pregunta que no existen, o una pregunta de un notebook que
la persona no entregó (vale 0: no hay respuesta que calificar), son un error de una línea y código 1.
Una nota que reemplaza otra anterior lo dice, con la anterior.

``--csv`` anota todas las notas de un archivo (``estudiante,pregunta,puntos,comentario``, una por
fila; el encabezado y el comentario son opcionales) en una sola transacción y rehace ``grades.csv`` y
el informe una vez: la clase entera en segundos. Antes revisa todas las filas; si alguna no vale, dice
una línea por cada una y no cambia nada.
"""

import csv
import os
import re
import sys
import warnings

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning

from harness.conformidad.spanish_args import command_parser
from harness.text import shorten
from solutions.grading import paths, puntos, report
from solutions.grading.release import ASSIGNMENT, EXERCISES

# Las marcas de nbgrader alrededor de una respuesta en la fuente de instructor: la rúbrica se lee sin ellas.
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\n", re.MULTILINE)


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
            answer = shorten(answer_text(course_dir, student, notebook, question, assignment))
            guide = shorten(rubric(notebook, question, assignment))
            lines.append(f"{student}\t{question}\t{puntos.text(points)}\t{answer}\t{guide}")
    return lines


def _students(gradebook, assignment):
    """Quienes tienen una entrega calificada de ``assignment``."""
    found = set()
    for student in gradebook.students:
        try:
            gradebook.find_submission(assignment, student.id)
        except MissingEntry:
            continue
        found.add(student.id)
    return found


def _manual_questions(assignment):
    """{pregunta a mano: (notebook, puntos)}."""
    return {
        grade_id: (notebook, points)
        for notebook in EXERCISES
        for grade_id, points, by_hand in report.grade_cells(notebook, assignment)
        if by_hand
    }


def problem(mark, graded, questions, assignment=ASSIGNMENT):
    """Por qué no se puede anotar ``mark`` (estudiante, pregunta, puntos, comentario), o None.
    ``graded``: {estudiante calificado: {notebook: por qué no contó como entregado}}."""
    student, question, points, _ = mark
    if question not in questions:
        return (
            f"no hay una pregunta a mano «{question}» en {assignment}; las que se califican a mano son: "
            + ", ".join(questions)
        )
    if student not in graded:
        return (
            f"no hay una entrega calificada de «{student}» en {assignment}; "
            f"estudiantes calificados: {', '.join(sorted(graded)) or 'ninguno'}"
        )
    notebook, top = questions[question]
    absent = graded[student].get(notebook)
    if absent:
        # Vale 0 por no entregado: una nota a mano le daría puntos a una respuesta que no existe.
        return (
            f"«{student}»: {report.reason_text(notebook, absent)}, así que vale 0 y {question} no lleva "
            "nota a mano"
        )
    if not isinstance(points, (int, float)) or not 0 <= points <= top:
        return f"{question} vale de 0 a {puntos.text(top)} puntos, no {puntos.text(points)}"
    if puntos.has_more_decimals(points):
        return f"{points} tiene más de dos decimales: escribe los puntos en centésimos (p. ej. {puntos.text(points)})"
    return None


def _course_db(course_dir):
    if not os.path.exists(os.path.join(course_dir, "gradebook.db")):
        raise ManualError(
            f"{course_dir} no tiene gradebook.db: primero «python -m solutions.grading.grade_class {course_dir}»"
        )


def record_all(course_dir, marks, assignment=ASSIGNMENT, where=None, unread=()):
    """Anota todas las ``marks`` [(estudiante, pregunta, puntos, comentario o None)] en una sola
    transacción, o ninguna: antes revisa cada una y, si alguna no vale, lanza ``ManualError`` con una
    línea por cada una (``where(i)`` dice dónde está la i-ésima). ``unread``: [(posición, línea)] de
    filas que ni se pudieron leer, que también se informan. Rehace ``grades.csv`` y el informe una vez.
    Devuelve [(i, nota anterior)] de las notas que reemplazaron otra: quien anota lo sabe."""
    _course_db(course_dir)
    where = where or (lambda i: "")
    questions = _manual_questions(assignment)
    with Gradebook(report.db_url(course_dir)) as gradebook:
        students = _students(gradebook, assignment)
        # Lo que no contó como entregado en la última calificación (lo mismo que dicen el informe y la
        # devolución), solo de quienes tienen una nota en ``marks``.
        graded = dict.fromkeys(students, {})
        graded.update({s: report.not_handed_in(course_dir, s) for s in students & {m[0] for m in marks}})
        wrong, seen = list(unread), set()
        for i, mark in enumerate(marks):
            found = problem(mark, graded, questions, assignment)
            if found is None and mark[:2] in seen:
                found = f"{mark[0]} · {mark[1]} aparece dos veces: deja una sola nota"
            if found:
                wrong.append((i, f"{where(i)}{found}"))
            seen.add(mark[:2])
        if wrong:
            raise ManualError("\n".join(line for _, line in sorted(wrong, key=lambda w: w[0])))
        replaced = []
        for i, (student, question, points, comment) in enumerate(marks):
            notebook = questions[question][0]
            grade = gradebook.find_grade(question, notebook, assignment, student)
            if grade.manual_score is not None:
                replaced.append((i, grade.manual_score))
            grade.manual_score = puntos.rounded(points)
            grade.needs_manual_grade = False  # lo mismo que hace el Formgrader al guardar una nota
            if comment is not None:
                gradebook.find_comment(question, notebook, assignment, student).manual_comment = comment
        gradebook.db.commit()
    report.refresh(course_dir)
    return replaced


def record(course_dir, student, question, points, comment=None, assignment=ASSIGNMENT):
    """Anota ``points`` (y ``comment``) en la pregunta ``question`` de ``student``; rehace
    ``grades.csv`` y el informe. Devuelve la nota que reemplazó, o None si no tenía."""
    replaced = record_all(course_dir, [(student, question, points, comment)], assignment)
    return replaced[0][1] if replaced else None


def replaced_text(student, question, points, old):
    """«ana · explicacion: 2.5 reemplaza la nota anterior, 2»."""
    return f"{student} · {question}: {puntos.text(points)} reemplaza la nota anterior, {puntos.text(old)}"


# Las columnas de un CSV de notas, en orden (la fila de encabezado es opcional; en inglés también vale).
CSV_COLUMNS = ("estudiante", "pregunta", "puntos", "comentario")
CSV_HEADERS = {CSV_COLUMNS, ("student", "question", "points", "comment")}


def read_marks(path):
    """([(estudiante, pregunta, puntos, comentario)], [número de fila de cada una], [(posición,
    línea)] de las filas que no se pueden leer). Un archivo que no se puede leer es un ``ManualError``."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ManualError(f"no se pudo leer {path}: {err}") from None
    marks, lines, unread = [], [], []
    for number, row in enumerate(rows, 1):
        cells = [c.strip() for c in row]
        named = tuple(c.lower() for c in cells)
        if not any(cells) or (number == 1 and any(named == h[: len(named)] for h in CSV_HEADERS)):
            continue
        said = _unreadable(cells)
        if said:
            # Su posición: entre las notas leídas, para que las líneas salgan en el orden del archivo.
            unread.append((len(marks) - 0.5, f"{path}, fila {number}: {said}"))
            continue
        student, question, points, comment = [*cells, ""][:4]
        marks.append((student, question, float(points.replace(",", ".")), comment or None))
        lines.append(number)
    if not marks and not unread:
        raise ManualError(f"{path} no tiene notas: una fila por nota, con {', '.join(CSV_COLUMNS)}")
    return marks, lines, unread


def _unreadable(cells):
    """Por qué una fila no es una nota (columnas, puntos que no son un número), o None."""
    if not 3 <= len(cells) <= 4:
        return f"tiene {len(cells)} columnas; van {', '.join(CSV_COLUMNS)} (el comentario, opcional)"
    try:
        value = float(cells[2].replace(",", "."))
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        return f"los puntos «{cells[2]}» no son un número"
    return None


def record_csv(course_dir, path, assignment=ASSIGNMENT):
    """Anota todas las notas del CSV ``path`` o ninguna; devuelve cuántas y una línea por cada una que
    reemplazó otra (con su fila y la nota anterior)."""
    marks, lines, unread = read_marks(path)

    def where(i):
        return f"{path}, fila {lines[i]}: "

    replaced = record_all(course_dir, marks, assignment, where=where, unread=unread)
    return len(marks), [where(i) + replaced_text(*marks[i][:3], old) for i, old in replaced]


def main(argv=None):
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("carpeta", help="la carpeta del curso (con gradebook.db)")
    parser.add_argument("estudiante", nargs="?", help="quien entregó")
    parser.add_argument("pregunta", nargs="?", help="la pregunta a mano: explicacion o explicacion_error")
    parser.add_argument("puntos", nargs="?", type=float, help="los puntos, de 0 a los de la pregunta")
    parser.add_argument("--comentario", help="lo que la persona lee junto a su nota en la devolución")
    parser.add_argument("--pendientes", action="store_true", help="listar las respuestas sin nota")
    parser.add_argument(
        "--csv",
        metavar="ARCHIVO",
        help="anotar todas las notas de un CSV: estudiante,pregunta,puntos,comentario",
    )
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
    if args.csv:
        if args.estudiante is not None:
            parser.error("--csv no lleva estudiante, pregunta ni puntos: van en el archivo")
        try:
            count, replaced = record_csv(course_dir, args.csv)
        except ManualError as err:
            print(err, file=sys.stderr)
            print(
                "no se anotó ninguna nota: corrige esas filas y vuelve a correr el comando", file=sys.stderr
            )
            return 1
        for line in replaced:
            print(line)
        print(f"{count} notas anotadas; grades.csv e informe.html al día")
        return 0
    if args.puntos is None:
        parser.error("faltan ESTUDIANTE PREGUNTA PUNTOS (o --pendientes, o --csv ARCHIVO)")
    try:
        old = record(course_dir, args.estudiante, args.pregunta, args.puntos, args.comentario)
    except ManualError as err:
        print(err, file=sys.stderr)
        return 1
    if old is not None:
        print(replaced_text(args.estudiante, args.pregunta, args.puntos, old))
    top = _manual_questions(ASSIGNMENT)[args.pregunta][1]
    print(
        f"{args.estudiante}: {args.pregunta} = {puntos.text(args.puntos)} de {puntos.text(top)}; "
        "grades.csv e informe.html al día"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

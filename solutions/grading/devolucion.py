"""La devolución de cada estudiante, en español y sin las pruebas ocultas.

    python -m solutions.grading.devolucion CARPETA_DEL_CURSO [--estudiante NOMBRE]

Escribe ``feedback/<estudiante>/leccion_6/<notebook>.html`` (donde la deja ``nbgrader
generate_feedback``, así que ``nbgrader release_feedback`` la reparte igual) para cada entrega
calificada: el enunciado, cada respuesta de la persona, sus puntos, el veredicto de cada comprobación
con su razón (qué datos o qué corrida fallaron) y el comentario de quien calificó a mano. No muestra el
código de las celdas de prueba (ni lo oculto ni la marca con que sale la respuesta del kernel) ni las
etiquetas en inglés de nbgrader.
"""

import html
import os
import sys
import warnings

import nbformat
from nbconvert.filters.markdown import markdown2html
from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning

from harness.conformidad.spanish_args import command_parser
from harness.notebook.moments import GRADED
from solutions.grading import etiquetas, handed_in, puntos, report
from solutions.grading.judge import CHECKS, read_verdict
from solutions.grading.release import ASSIGNMENT, EXERCISES

TITLES = {"ejercicio_nivel_1": "Ejercicio de Nivel 1", "ejercicio_nivel_2": "Ejercicio de Nivel 2"}
STYLE = (
    "body{font-family:sans-serif;max-width:52em;margin:2em auto;line-height:1.45}"
    "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap}"
    ".respuesta{border-left:4px solid #1f77b4;padding-left:.8em;margin:1em 0}"
    ".bien{color:#1a7f37}.mal{color:#b42318}.comentario{background:#fff8e1;padding:.5em .8em}"
    ".puntos{font-weight:bold}"
)


def _points(grade):
    if grade is None:
        return ""
    if grade.needs_manual_grade and grade.manual_score is None:
        return f'<p class="puntos">Puntos: pendiente de calificar (vale {puntos.text(grade.max_score)})</p>'
    return f'<p class="puntos">Puntos: {puntos.text(grade.score)} de {puntos.text(grade.max_score)}</p>'


def _comment(comment):
    if comment is None:
        return ""
    parts = []
    if comment.auto_comment == "No response.":
        parts.append("<p>Sin respuesta: la celda quedó como se repartió.</p>")
    if comment.manual_comment:
        parts.append(
            '<div class="comentario"><strong>Comentario de quien calificó:</strong> '
            f"{markdown2html(comment.manual_comment)}</div>"
        )
    return "".join(parts)


def _error_line(cell):
    """Lo que falló al ejecutar una respuesta, en una línea (sin la traza)."""
    errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
    if not errors:
        return ""
    first = (errors[-1].get("evalue") or "").strip().splitlines()[:1]
    said = f"{errors[-1].get('ename', 'Error')}: {first[0]}" if first else errors[-1].get("ename", "Error")
    return f'<p class="mal">Al ejecutarse, tu respuesta falló: {html.escape(said)}</p>'


def _verdict(cell):
    """El veredicto de una celda de prueba: la salida que dejó ``JudgeAnswers`` (un crédito parcial
    nombra los datos equivocados, nunca sus valores)."""
    problem = read_verdict(cell.get("outputs", []))
    if problem is None:
        return '<p class="bien">✓ Comprobación superada (se comprobó fuera de tu kernel).</p>'
    if any(o.output_type == "execute_result" for o in cell.get("outputs", [])):
        return f'<p class="mal">◐ En parte: {html.escape(problem)}</p>'
    return f'<p class="mal">✗ No pasa: {html.escape(problem)}</p>'


def _your_moments(ids):
    """Los momentos del Nivel 1 con que se calificó a la persona, dichos enteros."""
    if not ids:
        return ["<p>No tenías momentos del Nivel 1: tu id no está en la lista de la clase.</p>"]
    items = "".join(f"<li>{html.escape(GRADED[m].describe())}</li>" for m in ids if m in GRADED)
    return [f"<h2>Tus momentos</h2><ol>{items}</ol>"]


def _check_title(grade_id, moments):
    """«Comprobación»; en el Nivel 1, de cuál de tus momentos, con su id («… de tu momento 2 (M07)»)."""
    slot = etiquetas.MOMENT_SLOTS.get(grade_id)
    if slot is None:
        return "Comprobación"
    said = f" ({moments[slot - 1]})" if len(moments or ()) >= slot else ""
    return f"Comprobación de tu momento {slot}{said}"


def notebook_page(course_dir, gradebook, student, notebook, assignment=ASSIGNMENT):
    """El HTML de la devolución de ``notebook`` de ``student``."""
    path = os.path.join(course_dir, "autograded", student, assignment, f"{notebook}.ipynb")
    nb = nbformat.read(path, as_version=4)
    submitted = gradebook.find_submission_notebook(notebook, assignment, student)
    grades = {g.name: g for g in submitted.grades}
    comments = {c.name: c for c in submitted.comments}
    tests = CHECKS.get(notebook, {})
    # El enunciado: las celdas de texto del notebook repartido (no las que agregó la persona).
    released = os.path.join(course_dir, "release", assignment, f"{notebook}.ipynb")
    statement = {
        c.get("id") for c in nbformat.read(released, as_version=4).cells if c.cell_type == "markdown"
    }
    body = [
        *_head(f"{TITLES.get(notebook, notebook)} · {student}"),
        f'<p class="puntos">Total: {puntos.text(submitted.score)} de {puntos.text(submitted.max_score)} puntos</p>',
    ]
    if submitted.needs_manual_grade:
        body.append("<p>Alguna respuesta escrita todavía no tiene nota: esta devolución no es la final.</p>")
    moments = report.graded_moments(course_dir).get(student) if notebook == EXERCISES[0] else None
    if notebook == EXERCISES[0]:
        body += _your_moments(moments)
    for cell in nb.cells:
        grading = cell.metadata.get("nbgrader", {})
        grade_id = grading.get("grade_id")
        if grade_id in tests:
            title = html.escape(_check_title(grade_id, moments))
            body += [f"<h3>{title}</h3>", _verdict(cell), _points(grades.get(grade_id))]
        elif grading.get("solution"):
            # El texto de la persona, tal cual y escapado: su HTML no se interpreta en la página.
            body.append('<div class="respuesta"><h3>Tu respuesta</h3>')
            body.append(f"<pre>{html.escape(cell.source)}</pre>")
            if cell.cell_type == "code":
                body.append(_error_line(cell))
            body += [_points(grades.get(grade_id)), _comment(comments.get(grade_id)), "</div>"]
        elif cell.cell_type == "markdown" and cell.get("id") in statement:
            body.append(markdown2html(cell.source))
        # El código de preparación y el de las pruebas no se muestran; las celdas que agregó la
        # persona tampoco (lo que se califica son sus respuestas).
    body.append("</body></html>")
    return "\n".join(part for part in body if part) + "\n"


def _head(title):
    return [
        "<!DOCTYPE html>",
        f'<html lang="es"><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]


def missing_page(course_dir, gradebook, student, notebook, assignment=ASSIGNMENT):
    """La devolución de un notebook que ``student`` no entregó (o que no cuenta como entregado: un enlace,
    algo que no es un notebook): vale 0 y dice por qué."""
    submitted = gradebook.find_submission_notebook(notebook, assignment, student)
    reason = report.not_handed_in(course_dir, student).get(notebook, handed_in.MISSING)
    said = (
        f"No entregaste {notebook}.ipynb" if reason == handed_in.MISSING else f"Tu {notebook}.ipynb {reason}"
    )
    body = _head(f"{TITLES.get(notebook, notebook)} · {student}")
    body += [
        f'<p class="mal">{html.escape(said)}: vale 0 de '
        f"{puntos.text(submitted.max_score)} puntos. Tus otros notebooks se calificaron igual.</p>",
        "</body></html>",
    ]
    return "\n".join(body) + "\n"


def write_feedback(course_dir, students=None, assignment=ASSIGNMENT, progress=None):
    """Escribe la devolución de cada estudiante calificado (o de ``students``); devuelve las rutas."""
    written = []
    with Gradebook(report.db_url(course_dir)) as gradebook:
        everyone = sorted(s.id for s in gradebook.students)
        for student in students or everyone:
            try:
                gradebook.find_submission(assignment, student)
            except MissingEntry:
                raise LookupError(
                    f"no hay una entrega calificada de «{student}»; calificados: {', '.join(everyone) or 'ninguno'}"
                ) from None
            folder = os.path.join(course_dir, "feedback", student, assignment)
            os.makedirs(folder, exist_ok=True)
            missing = report.absent(course_dir, student, EXERCISES, assignment)
            for notebook in EXERCISES:
                graded = os.path.join(course_dir, "autograded", student, assignment, f"{notebook}.ipynb")
                if notebook in missing:
                    text = missing_page(course_dir, gradebook, student, notebook, assignment)
                elif os.path.exists(graded):
                    text = notebook_page(course_dir, gradebook, student, notebook, assignment)
                else:
                    continue
                page = os.path.join(folder, f"{notebook}.html")
                with open(page, "w", encoding="utf-8") as f:
                    f.write(text)
                written.append(page)
            if progress:
                progress(student, folder)
    return written


def main(argv=None):
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("carpeta", help="la carpeta del curso (ya calificada)")
    parser.add_argument("--estudiante", action="append", help="solo esta persona (se puede repetir)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=SAWarning)
    course_dir = report.graded_course(args.carpeta)
    if course_dir is None:
        return 1

    def show(student, folder):
        print(f"{student}: {os.path.relpath(folder, course_dir)}/", file=sys.stderr, flush=True)

    try:
        written = write_feedback(course_dir, args.estudiante, progress=show)
    except LookupError as err:
        print(err.args[0], file=sys.stderr)
        return 1
    print(f"{len(written)} devoluciones escritas en {os.path.join(args.carpeta, 'feedback')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Lo que queda junto a la base del curso tras calificar: ``grades.csv`` y el informe de la clase.

- ``grades.csv``: lo que escribe ``nbgrader export``, más la columna ``manual_pendiente`` (los puntos
  a mano que todavía no tienen nota: las respuestas escritas sin calificar).
- ``informe.html`` e ``informe.svg``: por pregunta, cuántas personas la tienen bien; debajo de cada
  prueba del Nivel 1, cuántas acertaron cada dato (con crédito parcial, cada dato cuenta por sí solo),
  y de cada prueba del Nivel 2, cada mecanismo (el orden, la caída superada, la prueba del script). Al
  final, quién tiene puntos a mano pendientes.

Los veredictos salen de los notebooks calificados (``autograded/``): la salida de cada celda de prueba
es el veredicto de ``judge`` (``JudgeAnswers``). Los puntos, de ``gradebook.db``. Lo escriben
``grade_class`` y ``manual``; ``refresh`` rehace los tres archivos.
"""

import csv
import html
import json
import os
import sys
from typing import NamedTuple

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import CsvExportPlugin
from traitlets.config import PyFileConfigLoader

from solutions.grading import etiquetas, grafico, handed_in, parecidas, paths, puntos
from solutions.grading.judge import (
    CHECKS,
    MECHANISMS,
    OTHERS,
    read_verdict,
    unproven_mechanisms,
    wrong_fields,
)
from solutions.grading.release import ASSIGNMENT, EXERCISES
from solutions.grading.truth import OBSERVED_FIELDS

# {estudiante: los ids de sus momentos del Nivel 1} de la última calificación (lo anota grade_class).
MOMENTS_FILE = "momentos_calificados.json"
PENDING_COLUMN = "manual_pendiente"
# Las columnas de puntos de ``grades.csv`` (las de ``nbgrader export`` y la propia): en centésimos.
SCORE_COLUMNS = ("raw_score", "late_submission_penalty", "score", "max_score", PENDING_COLUMN)
HTML_NAME, PICTURE_NAME = "informe.html", "informe.svg"
# Lo que se desglosa bajo cada prueba: sus datos (Nivel 1) o sus mecanismos (Nivel 2).
PARTS = {
    "prueba_momento_1": OBSERVED_FIELDS,
    "prueba_momento_2": OBSERVED_FIELDS,
    "prueba_momento_3": OBSERVED_FIELDS,
    "prueba_corregida": ("orden", "caida_superada"),
    "prueba_script": ("prueba_script",),
}


def graded_course(folder):
    """La ruta absoluta de la carpeta del curso si ya tiene su gradebook.db; si no, None, con la línea
    que dice qué hacer antes (para los comandos que trabajan sobre una clase ya calificada)."""
    course_dir = os.path.abspath(folder)
    if os.path.exists(os.path.join(course_dir, "gradebook.db")):
        return course_dir
    print(f"{folder} no tiene gradebook.db: primero califica la clase (grade_class)", file=sys.stderr)
    return None


def db_url(course_dir):
    return f"sqlite:///{os.path.join(course_dir, 'gradebook.db')}"


def grade_cells(notebook, assignment=ASSIGNMENT):
    """[(grade_id, puntos, ¿a mano?)] de las celdas con puntos de ``notebook``, en el orden de la fuente."""
    nb = nbformat.read(os.path.join(paths.SOURCE, assignment, f"{notebook}.ipynb"), as_version=4)
    found = []
    for cell in nb.cells:
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("grade"):
            manual = grading["grade_id"] not in CHECKS.get(notebook, {})
            found.append((grading["grade_id"], grading.get("points", 0), manual))
    return found


def pending(gradebook, assignment=ASSIGNMENT):
    """{estudiante: [(notebook, pregunta, puntos)]}: las preguntas con puntos a mano sin nota."""
    found = {}
    for student in gradebook.students:
        try:
            submission = gradebook.find_submission(assignment, student.id)
        except MissingEntry:
            continue
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.needs_manual_grade and grade.manual_score is None:
                    found.setdefault(student.id, []).append((notebook.name, grade.name, grade.max_score))
    return found


def export_grades(course_dir):
    """``grades.csv`` como lo deja ``nbgrader export`` (con la configuración del curso, en este
    proceso), más la columna ``manual_pendiente``."""
    config = PyFileConfigLoader("nbgrader_config.py", path=course_dir).load_config()
    coursedir = CourseDirectory(config=config, root=course_dir)
    plugin = CsvExportPlugin(config=config)
    plugin.to = plugin.to or os.path.join(course_dir, "grades.csv")
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        plugin.export(gradebook)
        waiting = {
            (assignment.name, student): sum(points for *_, points in questions)
            for assignment in gradebook.assignments
            for student, questions in pending(gradebook, assignment.name).items()
        }
    with open(plugin.to, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        rows, columns = list(reader), list(reader.fieldnames or [])
    with open(plugin.to, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, [*columns, PENDING_COLUMN])
        writer.writeheader()
        for row in rows:
            row[PENDING_COLUMN] = waiting.get((row["assignment"], row["student_id"]), 0)
            writer.writerow(
                {k: puntos.text(v) if k in SCORE_COLUMNS and v != "" else v for k, v in row.items()}
            )
    return plugin.to


def verdicts(course_dir, student, assignment=ASSIGNMENT):
    """{notebook: {prueba: problema o None}} de los notebooks calificados de ``student`` ({} si no hay)."""
    found = {}
    for notebook in EXERCISES:
        path = os.path.join(course_dir, "autograded", student, assignment, f"{notebook}.ipynb")
        if not os.path.exists(path):
            continue
        tests = CHECKS.get(notebook, {})
        found[notebook] = {}
        for cell in nbformat.read(path, as_version=4).cells:
            test_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if test_id in tests:
                found[notebook][test_id] = read_verdict(cell.get("outputs", []))
    return found


def wrong_parts(test_id, problem):
    """Los datos o mecanismos de la prueba ``test_id`` que el veredicto ``problem`` no da por buenos."""
    if test_id in ("prueba_corregida", "prueba_script"):
        return set(unproven_mechanisms(test_id, problem))
    return set(wrong_fields(PARTS.get(test_id, ()), problem))


def class_rows(course_dir, assignment=ASSIGNMENT):
    """Las filas del informe: [{"notebook", "pregunta", "parte" o None, "puntos", "bien", "pendientes",
    "de"}], {estudiante: puntos a mano pendientes} y ``Totals``. «bien» cuenta a quien tiene todos los
    puntos de la pregunta (o, en una parte, a quien la prueba se la da por buena); «de», a quien se
    calificó."""
    with Gradebook(db_url(course_dir)) as gradebook:
        scores, graded, totals = {}, [], {}
        top_total = sum(n.max_score for n in gradebook.find_assignment(assignment).notebooks)
        for student in sorted(s.id for s in gradebook.students):
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                continue
            graded.append(student)
            totals[student] = submission.score
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    waiting = grade.needs_manual_grade and grade.manual_score is None
                    scores[student, notebook.name, grade.name] = (grade.score, grade.max_score, waiting)
        waiting = {s: sum(p for *_, p in q) for s, q in pending(gradebook, assignment).items()}
    judged = {student: verdicts(course_dir, student, assignment) for student in graded}
    rows = []
    for notebook in EXERCISES:
        for question, points, manual in grade_cells(notebook, assignment):
            cells = [scores[s, notebook, question] for s in graded if (s, notebook, question) in scores]
            rows.append(
                {
                    "notebook": notebook,
                    "pregunta": question,
                    "parte": None,
                    "puntos": points,
                    "a_mano": manual,
                    "bien": sum(not w and score == top for score, top, w in cells),
                    "pendientes": sum(w for *_, w in cells),
                    "de": len(cells),
                }
            )
            if manual:
                continue
            problems = [
                judged[s][notebook][question] for s in graded if question in judged[s].get(notebook, {})
            ]
            for part in PARTS.get(question, ()):
                rows.append(
                    {
                        "notebook": notebook,
                        "pregunta": question,
                        "parte": part,
                        "puntos": None,
                        "a_mano": False,
                        "bien": sum(part not in wrong_parts(question, p) for p in problems),
                        "pendientes": 0,
                        "de": len(problems),
                    }
                )
    return rows, waiting, Totals(totals, top_total)


class Totals(NamedTuple):
    """La nota total de cada estudiante calificado (lo a mano sin nota cuenta 0) y de cuánto es."""

    scores: dict
    top: float

    def bins(self, width=2):
        """[(desde, hasta, cuántos)]: la distribución de las notas totales, de ``width`` en ``width``
        puntos (la última incluye la nota máxima)."""
        edges = list(range(0, int(self.top), width)) or [0]
        found = []
        for low in edges:
            high = min(low + width, self.top)
            last = low == edges[-1]
            count = sum(
                low <= v < high or (last and v == high) for v in map(puntos.rounded, self.scores.values())
            )
            found.append((low, high, count))
        return found


def label(row):
    """El nombre de la fila en español: la pregunta, o el dato o mecanismo (debajo de su pregunta)."""
    if row["parte"]:
        return etiquetas.PARTS.get(row["parte"], row["parte"])
    return etiquetas.question(row["notebook"], row["pregunta"])


def describe(row):
    if row["parte"] in MECHANISMS:
        return MECHANISMS[row["parte"]]
    if row["parte"]:
        return "dato de la predicción"
    return "a mano (respuesta escrita)" if row["a_mano"] else "automática"


def ungraded(course_dir, assignment=ASSIGNMENT):
    """Quienes tienen una entrega en ``submitted/`` y no tienen notebooks calificados."""
    root = os.path.join(course_dir, "submitted")
    if not os.path.isdir(root):
        return []
    return sorted(
        s
        for s in os.listdir(root)
        if os.path.isdir(os.path.join(root, s, assignment))
        and not os.path.isdir(os.path.join(course_dir, "autograded", s, assignment))
    )


def incomplete(course_dir, students, assignment=ASSIGNMENT):
    """{estudiante: [notebooks que no entregó]} de los calificados a quienes les falta alguno."""
    found = {s: absent(course_dir, s, EXERCISES, assignment) for s in students}
    return {s: missing for s, missing in found.items() if missing}


def not_handed_in(course_dir, student):
    """{notebook: por qué no cuenta como entregado} de la última calificación de ``student`` (lo anota
    ``grade_class``: ``handed_in``); valen 0 y el resto se calificó."""
    return handed_in.recorded(course_dir).get(student, {})


def absent(course_dir, student, notebooks=EXERCISES, assignment=ASSIGNMENT):
    """Los notebooks de ``notebooks`` que ``student`` no entregó (``not_handed_in``)."""
    why = not_handed_in(course_dir, student)
    return [n for n in notebooks if n in why]


def reason_text(notebook, reason):
    """«falta ejercicio_nivel_2.ipynb», o «ejercicio_nivel_2.ipynb es un enlace (…)», para leer."""
    return f"falta {notebook}.ipynb" if reason == handed_in.MISSING else f"{notebook}.ipynb {reason}"


def absent_text(course_dir, student, notebooks, assignment=ASSIGNMENT):
    """Por qué no cuenta cada uno de ``notebooks`` de ``student`` (``reason_text``), en una línea."""
    why = not_handed_in(course_dir, student)
    return ", ".join(reason_text(n, why.get(n, handed_in.MISSING)) for n in notebooks)


def _table(rows):
    lines = [
        "<table><thead><tr><th>pregunta, dato o mecanismo</th><th>qué mide</th><th>puntos</th>"
        "<th>bien</th><th>calificadas</th><th>a mano pendientes</th></tr></thead><tbody>",
    ]
    for row in rows:
        css = ' class="parte"' if row["parte"] else ""
        points = "" if row["puntos"] is None else puntos.text(row["puntos"])
        data = (
            f'data-pregunta="{row["pregunta"]}" data-parte="{row["parte"] or ""}" data-bien="{row["bien"]}"'
        )
        data += f' data-de="{row["de"]}" data-pendientes="{row["pendientes"]}"'
        lines.append(
            f"<tr {data}><td{css}>{html.escape(label(row))}</td>"
            f"<td>{html.escape(describe(row))}</td><td>{points}</td><td>{row['bien']}</td>"
            f"<td>{row['de']}</td><td>{row['pendientes'] if not row['parte'] else ''}</td></tr>"
        )
    lines.append("</tbody></table>")
    return lines


def _distribution(totals):
    lines = [
        f"<h2>Distribución de la nota total (de {puntos.text(totals.top)})</h2>",
        "<p>Las respuestas a mano sin nota cuentan 0 hasta que la tienen.</p>",
        "<table><thead><tr><th>nota total</th><th>estudiantes</th></tr></thead><tbody>",
    ]
    for low, high, count in totals.bins():
        lines.append(
            f'<tr data-desde="{puntos.text(low)}" data-hasta="{puntos.text(high)}" data-estudiantes="{count}">'
            f"<td>{puntos.text(low)}–{puntos.text(high)}</td><td>{count}</td></tr>"
        )
    lines.append("</tbody></table>")
    return lines


def _pending(waiting):
    lines = ["<h2>Puntos a mano pendientes</h2>"]
    if not waiting:
        return [*lines, "<p>Ninguno: todas las respuestas escritas tienen nota.</p>"]
    lines.append("<ul>")
    lines += [f"<li>{html.escape(s)}: {puntos.text(p)} puntos</li>" for s, p in sorted(waiting.items())]
    lines.append("</ul>")
    lines.append(
        "<p>Para verlos: <code>python -m solutions.grading.manual CURSO --pendientes</code>; para "
        "anotarlos todos de una vez, <code>python -m solutions.grading.manual CURSO --csv notas.csv</code>.</p>"
    )
    return lines


def _incomplete(course_dir, missing):
    if not missing:
        return []
    lines = [
        "<h2>Entregas incompletas</h2>",
        "<p>Lo que no cuenta como entregado vale 0 (un notebook que falta, un enlace, una carpeta o un "
        "archivo que no es un notebook, con su razón); el resto se calificó.</p><ul>",
    ]
    for student, notebooks in sorted(missing.items()):
        said = html.escape(absent_text(course_dir, student, notebooks))
        lines.append(f'<li data-incompleta="{html.escape(student)}">{html.escape(student)}: {said}</li>')
    return [*lines, "</ul>"]


def graded_moments(course_dir):
    """{estudiante: [ids de momentos]} con que se calificó el Nivel 1 de cada uno ({} si no hay registro)."""
    try:
        with open(os.path.join(course_dir, MOMENTS_FILE), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def foreign_moments(course_dir, student, assignment=ASSIGNMENT):
    """{momento: [compañeros que lo tienen]} de los momentos que la entrega de ``student`` respondió sin
    ser suyos (los nombra el veredicto de cada prueba del Nivel 1: ``judge.OTHERS``)."""
    moments = graded_moments(course_dir)
    found = {}
    for problem in verdicts(course_dir, student, assignment).get(EXERCISES[0], {}).values():
        if problem and OTHERS in problem:
            for moment in problem.split(OTHERS, 1)[1].split(", "):
                found[moment] = sorted(s for s, ids in moments.items() if moment in ids and s != student)
    return found


def _moments(course_dir, students):
    """Los momentos de cada estudiante y, si su entrega responde momentos de otra persona, de quién son."""
    moments = graded_moments(course_dir)
    lines = [
        "<h2>Los momentos del Nivel 1 de cada estudiante</h2>",
        "<p>Cada quien respondió los suyos (la lista de la clase, <code>variantes</code>). Una entrega que "
        "responde los momentos de otra persona (una copia) vale 0 en los que no comparten, y se nombra "
        "aquí con los dueños de esos momentos.</p><ul>",
    ]
    for student in students:
        ids = moments.get(student)
        said = ", ".join(ids) if ids else "sin momentos: no está en la lista de la clase"
        foreign = foreign_moments(course_dir, student)
        if foreign:
            owners = "; ".join(
                f"{m} (de {', '.join(o) or 'nadie calificado'})" for m, o in sorted(foreign.items())
            )
            said += f" — <strong>respondió momentos que no son suyos</strong>: {html.escape(owners)}"
        lines.append(f'<li data-momentos="{html.escape(student)}">{html.escape(student)}: {said}</li>')
    return [*lines, "</ul>"]


def percent(similarity):
    """La semejanza en por ciento, sin redondear hacia arriba: solo lo idéntico dice 100."""
    return int(100 * similarity + 1e-9)


def _similar(groups):
    lines = [
        "<h2>Entregas casi iguales</h2>",
        "<p>Se comparan las respuestas (texto y código) y las celdas agregadas, una por una; lo que "
        "quedó como se repartió no cuenta. Es una lista para mirar, no un veredicto: puede ser trabajo en "
        "grupo permitido, o la misma fuente.</p>",
    ]
    if not groups:
        return [*lines, "<p>Ninguna.</p>"]
    lines.append("<ul>")
    for group in groups:
        same = ", ".join(parecidas.item_label(i) for i in group.same) or "ninguna"
        other = ", ".join(parecidas.item_label(i) for i in group.different) or "ninguna"
        lines.append(
            f'<li data-parecidas="{html.escape(" ".join(group.students))}">'
            f"<strong>{html.escape(', '.join(group.students))}</strong>: semejanza "
            f"{percent(group.similarity)} %; idénticas: {html.escape(same)}; distintas: {html.escape(other)}</li>"
        )
    return [*lines, "</ul>"]


def write_html(rows, waiting, path, picture, extra):
    """Escribe la página del informe; ``extra``: (``Totals``, incompletas, grupos casi iguales, sin
    calificar)."""
    totals, missing, groups, ungradable = extra
    lines = [
        "<!DOCTYPE html>",
        '<html lang="es"><head><meta charset="utf-8"><title>Informe de la clase · Lección 6</title>',
        "<style>body{font-family:sans-serif;max-width:72em;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.2em .6em}td.parte{padding-left:2em;color:#555}</style>",
        "</head><body>",
        "<h1>Informe de la clase · Lección 6</h1>",
        f'<p><img src="{html.escape(picture)}" alt="qué tiene bien la clase, por pregunta, y la '
        'distribución de la nota total"></p>',
        *_table(rows),
        *_distribution(totals),
        *_pending(waiting),
        *_incomplete(os.path.dirname(path), missing),
        *_similar(groups),
        *_moments(os.path.dirname(path), sorted(totals.scores)),
    ]
    if ungradable:
        lines.append("<h2>Sin calificar</h2>")
        lines.append(
            "<p>Entregaron y no se pudieron calificar (el comando de la clase dice por qué): "
            + ", ".join(html.escape(s) for s in ungradable)
            + ".</p>"
        )
    lines.append("</body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def write_report(course_dir, assignment=ASSIGNMENT):
    """Escribe ``informe.html`` e ``informe.svg`` en ``course_dir``; devuelve la ruta del HTML."""
    rows, waiting, totals = class_rows(course_dir, assignment)
    grafico.write_picture(rows, totals, os.path.join(course_dir, PICTURE_NAME), label)
    graded = sorted(totals.scores)
    extra = (
        totals,
        incomplete(course_dir, graded, assignment),
        parecidas.groups(course_dir, graded, assignment),
        ungraded(course_dir, assignment),
    )
    page = os.path.join(course_dir, HTML_NAME)
    write_html(rows, waiting, page, PICTURE_NAME, extra)
    return page


def refresh(course_dir, assignment=ASSIGNMENT):
    """Rehace ``grades.csv`` desde la base del curso y, si ``assignment`` es la Lección 6 (el informe
    nombra sus preguntas, datos y mecanismos), ``informe.html`` e ``informe.svg``; la ruta del informe,
    o None."""
    export_grades(course_dir)
    return write_report(course_dir) if assignment == ASSIGNMENT else None

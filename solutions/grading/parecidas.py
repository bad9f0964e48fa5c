"""Entregas casi iguales, para que quien dicta el curso las mire: se comparan, no se juzgan.

De cada notebook calificado se toman las respuestas (las celdas de respuesta, con su texto o su código)
y las celdas que agregó la persona. Una respuesta que quedó como se repartió no cuenta (dos entregas en
blanco no se parecen en nada que alguien haya escrito). Dos entregas se parecen en la media de lo
parecidas que son sus respuestas, una por una (``difflib``, de 0 a 1, sobre las respuestas que
alguna de las dos escribió). Las predicciones del Nivel 1 tienen pocas formas posibles: dos
entregas solo se listan si además se parecen en algo escrito con palabras propias (una explicación, el
código del Nivel 2, una celda agregada). Las que se parecen entre sí forman un grupo; el informe lista
cada grupo con lo que tienen igual y lo que no. No dice nada más: quién copió a quién, o si fue
trabajo en grupo permitido, lo decide quien lo lee.
"""

import json
import os
import re
import unicodedata
from typing import NamedTuple

from solutions.grading import etiquetas
from solutions.grading.judge import CHECKS
from solutions.grading.release import ASSIGNMENT, EXERCISES

# Desde cuánto (la media de las respuestas) dos entregas se listan como casi iguales.
NEAR = 0.8
WORDS = re.compile(r"\w+|[^\w\s]")
ADDED = "celdas_agregadas"
# Las respuestas con pocas formas posibles: parecerse solo en ellas no dice nada.
PREDICTIONS = {
    f"{notebook}:{test.removeprefix('prueba_')}"
    for notebook, tests in CHECKS.items()
    for test, (kind, _) in tests.items()
    if kind == "json"
}


class Group(NamedTuple):
    """Entregas casi iguales: quiénes, la menor semejanza entre dos de ellas, y qué respuestas son
    idénticas en todas y cuáles no."""

    students: tuple
    similarity: float
    same: tuple
    different: tuple


def _normal(text):
    """El texto sin lo que no cambia lo escrito: su forma Unicode, espacios al final de línea y líneas
    en blanco."""
    text = unicodedata.normalize("NFC", text)  # la misma «ó», se haya tecleado como se haya tecleado
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").splitlines()]
    return "\n".join(line for line in lines if line).strip()


def _cells(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f).get("cells", [])


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def answers(course_dir, student, released, assignment=ASSIGNMENT):
    """{«notebook:respuesta»: texto} de lo que ``student`` escribió (sin lo que quedó como se repartió)."""
    found = {}
    for notebook in EXERCISES:
        path = os.path.join(course_dir, "autograded", student, assignment, f"{notebook}.ipynb")
        if not os.path.exists(path):
            continue
        stubs, known = released[notebook]
        added = []
        for cell in _cells(path):
            grading = cell.get("metadata", {}).get("nbgrader", {})
            text = _normal(_source(cell))
            if grading.get("solution") and text and text != stubs.get(grading.get("grade_id")):
                found[f"{notebook}:{grading['grade_id']}"] = text
            elif not grading and cell.get("id") not in known and text:
                added.append(text)
        if added:
            found[f"{notebook}:{ADDED}"] = "\n\n".join(added)
    return found


def released_cells(course_dir, assignment=ASSIGNMENT):
    """{notebook: ({respuesta: su texto repartido}, ids de las celdas repartidas)}."""
    found = {}
    for notebook in EXERCISES:
        path = os.path.join(course_dir, "release", assignment, f"{notebook}.ipynb")
        stubs, known = {}, set()
        for cell in _cells(path) if os.path.exists(path) else []:
            known.add(cell.get("id"))
            grading = cell.get("metadata", {}).get("nbgrader", {})
            if grading.get("solution"):
                stubs[grading["grade_id"]] = _normal(_source(cell))
        found[notebook] = (stubs, known)
    return found


def _shingles(text):
    """Los grupos de tres palabras (o signos) seguidas de ``text``: dos textos casi iguales comparten
    casi todos, y se comparan como conjuntos (rápido aun con cien entregas)."""
    if text is None:
        return None
    words = WORDS.findall(text)
    return (
        frozenset(zip(words, words[1:], words[2:], strict=False))
        if len(words) >= 3
        else frozenset([tuple(words)])
    )


def _ratio(a, b):
    """De 0 a 1: cuántos grupos de tres palabras comparten, sobre los que hay entre los dos (Jaccard)."""
    if a is None or b is None:
        return 0.0
    if a == b:
        return 1.0
    return len(a & b) / len(a | b)


def similarity(mine, theirs):
    """De 0 a 1: la media de lo parecidas que son sus respuestas (``_ratio`` de sus ``_shingles``),
    sobre las que alguna escribió; None si no llegan a ``NEAR`` o si no se parecen en nada escrito con
    palabras propias."""
    items = sorted(set(mine) | set(theirs))
    own = [i for i in items if i not in PREDICTIONS]
    if not own:
        return None
    each = {i: _ratio(mine.get(i), theirs.get(i)) for i in items}
    mean = sum(each.values()) / len(items)
    if mean < NEAR or max(each[i] for i in own) < NEAR:
        return None
    return mean


def groups(course_dir, students, assignment=ASSIGNMENT):
    """[Group] de las entregas casi iguales de ``students``, de la más parecida a la menos."""
    released = released_cells(course_dir, assignment)
    written = {s: answers(course_dir, s, released, assignment) for s in students}
    # Las idénticas se comparan una sola vez: con 80 entregas iguales, una comparación, no 3160.
    same_text = {}
    for student in students:
        same_text.setdefault(json.dumps(written[student], sort_keys=True), []).append(student)
    kinds = list(same_text.values())
    shingled = [{i: _shingles(t) for i, t in written[k[0]].items()} for k in kinds]
    links = {}
    for i, first in enumerate(kinds):
        if len(first) > 1 and similarity(shingled[i], shingled[i]) is not None:
            links[i, i] = 1.0
        for j in range(i + 1, len(kinds)):
            found = similarity(shingled[i], shingled[j])
            if found is not None:
                links[i, j] = found
    return _grouped(kinds, links, written)


def _grouped(kinds, links, written):
    leader = list(range(len(kinds)))

    def top(i):
        while leader[i] != i:
            i = leader[i]
        return i

    for i, j in links:
        leader[top(j)] = top(i)
    members = {}
    for i, j in links:
        members.setdefault(top(i), set()).update((i, j))
    found = []
    for root, kinds_in in members.items():
        students = tuple(sorted(s for k in kinds_in for s in kinds[k]))
        lowest = min(v for (i, j), v in links.items() if top(i) == root)
        items = sorted(set().union(*(written[s] for s in students)))
        same = tuple(i for i in items if len({written[s].get(i) for s in students}) == 1)
        found.append(Group(students, lowest, same, tuple(i for i in items if i not in same)))
    return sorted(found, key=lambda g: (-g.similarity, g.students))


def item_label(item):
    """«Nivel 1 · explicación del calentamiento» de «ejercicio_nivel_1:explicacion»."""
    return etiquetas.answer(*item.split(":", 1))

"""La clase de muestra: entregas armadas desde las fuentes de instructor, para probar la calificación.

Cada entrega es la versión repartida con las respuestas de la fuente (sin las marcas de solución),
salvo lo que su estudiante cambie: una respuesta equivocada, una que lanza, un bucle infinito, una
celda de prueba editada o borrada. ``submit`` las deja donde nbgrader autograde las busca.
"""

import os
import re

import nbformat

from solutions.grading.release import ASSIGNMENT, EXERCISES, HERE

SOURCE = os.path.join(HERE, "source", ASSIGNMENT)
NIVEL_1, NIVEL_2 = EXERCISES
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\n", re.MULTILINE)


def cells_by_id(path):
    """{grade_id: celda} de las celdas de nbgrader de un notebook."""
    cells = nbformat.read(path, as_version=4).cells
    return {c.metadata.nbgrader["grade_id"]: c for c in cells if "nbgrader" in c.metadata}


def solution(name, grade_id):
    """La respuesta de la fuente de instructor, sin las marcas de solución."""
    return SOLUTION_MARKERS.sub("", cells_by_id(os.path.join(SOURCE, f"{name}.ipynb"))[grade_id].source)


def _prod_order_script():
    """El script de la solución, pero con ORDER=fixed corriendo también el orden de producción."""
    return solution(NIVEL_2, "script").replace(
        '"fixed": run_tool_uses_fixed}', '"fixed": run_tool_uses_prod}'
    )


# estudiante: {notebook: {grade_id: nueva fuente, o None para borrar la celda}}; None = en blanco.
CLASS = {
    "correcta": {name: {} for name in EXERCISES},
    "equivocada": {
        NIVEL_1: {
            "momento_2": solution(NIVEL_1, "momento_2")
            .replace('"ledger_has_entry": False', '"ledger_has_entry": True')
            .replace('"is_error"', '"hit"'),
            "distinguibles": 'prediction["distinguishable"] = True',
        },
        NIVEL_2: {"script": _prod_order_script()},
    },
    "en_blanco": None,
    "lanza": {
        NIVEL_1: {"momento_2": 'raise ValueError("no sé")'},
        NIVEL_2: {"corregida": 'def run_tool_uses_fixed(content):\n    raise RuntimeError("todavía no")'},
    },
    "bucle": {NIVEL_1: {"momento_3": "while True:\n    pass"}, NIVEL_2: {}},
    "edita_prueba": {
        NIVEL_1: {
            "momento_2": solution(NIVEL_1, "momento_2").replace('"is_error"', '"hit"'),
            "prueba_momento_2": "assert True",
            "prueba_momento_3": None,
        },
        NIVEL_2: {
            "script": "%%writefile _trabajo/nivel_2/reproducir_orden.py\nprint('nada')",
            "prueba_script": None,
        },
    },
}


def submission(released, name, changes):
    """La versión repartida con las respuestas de la fuente, salvo lo que ``changes`` cambie."""
    nb = nbformat.read(released, as_version=4)
    cells = []
    for cell in nb.cells:
        grading = cell.metadata.get("nbgrader", {})
        if changes is not None and grading.get("solution"):
            cell.source = solution(name, grading["grade_id"])
        if changes and grading.get("grade_id") in changes:
            if changes[grading["grade_id"]] is None:
                continue
            cell.source = changes[grading["grade_id"]]
        cells.append(cell)
    nb.cells = cells
    return nb


def submit(course_dir, released, students):
    """Escribe ``submitted/<estudiante>/leccion_6/*.ipynb`` para cada estudiante de ``students``."""
    for student, notebooks in students.items():
        folder = os.path.join(course_dir, "submitted", student, ASSIGNMENT)
        os.makedirs(folder, exist_ok=True)
        for name in EXERCISES:
            changes = None if notebooks is None else notebooks[name]
            nb = submission(released[name], name, changes)
            nbformat.write(nb, os.path.join(folder, f"{name}.ipynb"))

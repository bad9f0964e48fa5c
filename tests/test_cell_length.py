"""Ninguna celda de código común pasa de 25 líneas, en ningún notebook del curso (issue 45, punto 9).

La regla: una celda «común» es toda celda de código que no empieza con ``#| export``. Las ``#| export``
son el agente (su tamaño lo cuida ``tests/test_lesson_size.py``: 30 líneas); las demás son lo que quien
estudia lee para ver una demostración, y lo que pasa de una pantalla es cañería que va al arnés.
Cuentan todas las líneas del código fuente, en blanco y comentarios incluidos: es lo que se lee.
"""

import glob
import os

import nbformat
import pytest

from harness.notebook.export import EXPORT_MARKER
from maintainer.paths import ROOT

MAX_PLAIN_LINES = 25
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))


def long_plain_cells(cells):
    """{id: líneas} de cada celda de código común de más de ``MAX_PLAIN_LINES`` líneas."""
    return {
        cell.get("id", str(i)): len(cell.source.splitlines())
        for i, cell in enumerate(cells)
        if cell.cell_type == "code"
        and not EXPORT_MARKER.fullmatch(cell.source.partition("\n")[0])
        and len(cell.source.splitlines()) > MAX_PLAIN_LINES
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_no_plain_code_cell_is_over_25_lines(path):
    assert long_plain_cells(nbformat.read(path, as_version=4).cells) == {}


def test_the_rule_sees_a_long_plain_cell_and_lets_the_agent_be():
    body = "\n".join(f"x{i} = {i}" for i in range(MAX_PLAIN_LINES + 1))
    cells = [
        nbformat.v4.new_code_cell(body, id="larga"),
        nbformat.v4.new_code_cell("#| export\n" + body, id="agente"),
        nbformat.v4.new_code_cell("\n".join(body.splitlines()[:MAX_PLAIN_LINES]), id="justa"),
    ]
    assert long_plain_cells(cells) == {"larga": MAX_PLAIN_LINES + 1}

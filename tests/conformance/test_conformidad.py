"""La suite que se instala con el paquete (``harness.conformidad``), pieza por pieza, sobre cada agente:
la misma que corre ``python -m harness.conformidad RUTA`` y el taller; aquí, cada fila tiene que pasar."""

import pytest

from harness.conformidad.checks import CHECKS, run_piece
from harness.conformidad.processes import Context
from harness.conformidad.rows import OK


@pytest.mark.parametrize("piece", list(CHECKS))
def test_every_row_of_the_piece_passes(agent, piece):
    rows = run_piece(piece, Context(agent, {}))
    assert rows and [row for row in rows if row.status != OK] == []

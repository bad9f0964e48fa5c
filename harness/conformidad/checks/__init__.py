"""Las comprobaciones, una capacidad por módulo (como organiza LangGraph su suite de conformidad de
checkpointers), cada una con su título, la lista de lo que comprueba (``CHECKS``) y sus filas
(``ROWS``). Dos niveles:

- el de la lección (por omisión): lo que dice el texto de la lección, en cada una de las 12 etiquetas;
- el de producción (``--produccion``): las defensas del notebook «De la lección a producción», cada
  fila con el título de su sección.

Los nombres de las piezas (``--solo escritura``) son los que escribe una persona: en español.
"""

from typing import NamedTuple

from . import (
    command_line,
    crashes,
    failing_tool,
    fresh_start,
    ledger,
    ledger_warning,
    points,
    production,
    reading,
    reconcile,
    writing,
)

LESSON, PRODUCTION_TIER = "lección", "producción"


class Capability(NamedTuple):
    title: str
    rows: tuple  # funciones (ctx) -> fila, o (ctx, runs) -> fila si juzgan una etiqueta
    checks: tuple  # lo que comprueba, en palabras: el informe lo lista
    tier: str = LESSON
    script: bool = True  # supone el guion de la lección (una llamada por turno)


def _lesson(module, script=True):
    return module.PIECE, Capability(module.TITLE, module.ROWS, module.CHECKS, LESSON, script)


# El nivel de la lección (lo que corren ``taller.conformidad()`` y ``python -m harness.conformidad``).
CHECKS = dict(
    [
        _lesson(writing),
        _lesson(reading),
        _lesson(fresh_start),
        _lesson(points),
        _lesson(ledger),
        _lesson(reconcile),
        _lesson(crashes, script=False),
        _lesson(command_line, script=False),
        _lesson(failing_tool),
        _lesson(ledger_warning),
    ]
)
PRODUCTION = {
    piece: Capability(title, rows, checks, PRODUCTION_TIER)
    for piece, title, rows, checks in production.CAPABILITIES
}
CAPABILITIES = {**CHECKS, **PRODUCTION}  # las dos, para --solo
LESSON_PIECES, PRODUCTION_PIECES = tuple(CHECKS), tuple(PRODUCTION)


def applies(piece, ctx):
    """'' si la pieza se prueba con este agente, o por qué no."""
    if ctx.several_calls and CAPABILITIES[piece].script:
        return "supone el guion de la lección (una llamada por turno); este agente pide varias"
    return ""


def rows_of(piece, ctx):
    """Las funciones de fila de una pieza para este agente (las de varias llamadas salen de su corrida)."""
    if piece == crashes.PIECE and ctx.several_calls:
        return (crashes.several_calls_rows,)
    return CAPABILITIES[piece].rows


def run_piece(piece, ctx):
    """Las filas de una pieza, una tras otra (la suite las corre en paralelo: ``suite.run_suite``)."""
    from ..suite import run_suite

    return run_suite(ctx, [piece])[0][1]

"""Para la suite de conformidad: sus comprobaciones, una capacidad por módulo, en dos niveles (lección y ``--produccion``)."""

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


# El nivel de la lección (lo que corren ``workbook.conformance()`` y ``python -m harness.conformidad``).
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

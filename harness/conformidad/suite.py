"""Correr las piezas pedidas sobre un agente: lo que una comprobación misma no pudo hacer es una fila ✗
con su causa, nunca una traza."""

from .checks import CHECKS, run_piece
from .processes import NeedsDriver
from .rows import FAILED, Row, not_applicable


def run_suite(ctx, pieces=None, progress=None):
    """[(título, filas)] de cada pieza pedida (todas por omisión), en el orden de la lección."""
    results = []
    for piece in pieces or CHECKS:
        title = CHECKS[piece][0]
        if progress:
            progress(title)
        try:
            rows = run_piece(piece, ctx)
        except NeedsDriver as why:  # --comando: esta pieza importa el agente
            rows = [not_applicable(title, str(why))]
        except Exception as err:  # noqa: BLE001 (un agente roto no rompe la suite: se informa)
            rows = [
                Row(
                    title,
                    "que la comprobación corra",
                    f"{type(err).__name__}: {err}",
                    FAILED,
                    "revisa el agente",
                )
            ]
        results.append((title, rows))
    return results

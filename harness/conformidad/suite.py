"""Correr las piezas pedidas sobre un agente, en paralelo: un trabajador por núcleo, cada fila en su
propia carpeta de trabajo. Lo que una comprobación misma no pudo hacer es una fila ✗ con su causa,
nunca una traza; una pieza sin filas es una falla, no un pase."""

import os
from concurrent.futures import ThreadPoolExecutor

from .checks import CAPABILITIES, LESSON_PIECES, PRODUCTION_PIECES, applies, rows_of
from .checks.common import Runs
from .processes import TIMEOUT, NeedsDriver, missing
from .rows import FAILED, Row, judged, not_applicable, not_yet

TIMED_OUT = f"no terminó en {TIMEOUT} s"  # lo que processes agrega al stderr de una corrida sin fin


def pieces_for(pieces=None, production=False):
    """Las piezas pedidas; por omisión, el nivel de la lección (y el de producción, si se pide)."""
    return list(pieces or (LESSON_PIECES + (PRODUCTION_PIECES if production else ())))


def _safe(function, ctx, runs, title):
    """Las filas de una función de fila: una fila ✗ con la causa si la comprobación misma falló. Si una
    corrida no terminó (una máquina cargada), la fila se repite una vez, con corridas nuevas, antes de
    fallar."""
    needs = getattr(function, "needs", "")
    if needs and getattr(ctx, "command", None):  # un agente en otro lenguaje (--comando)
        return [not_applicable(title, f"esta fila {needs}: no aplica a un agente dado por --comando")]
    rows = _attempt(function, ctx, runs, title)
    if any(_timed_out(row) for row in rows):
        rows = _attempt(function, ctx, Runs(ctx), title)
    return [_unwritten(row) for row in rows]


def _attempt(function, ctx, runs, title):
    try:
        out = function(ctx, runs) if getattr(function, "label", None) else function(ctx)
    except NeedsDriver as why:  # --comando: esta fila importa el agente
        out = not_applicable(title, str(why))
    except Exception as err:  # noqa: BLE001 (un agente roto no rompe la suite: se informa)
        out = judged(
            title, "que la comprobación corra", f"{type(err).__name__}: {err}", False, "revisa el agente"
        )
    return out if isinstance(out, list) else [out]


def _timed_out(row):
    return row.status == FAILED and any(TIMED_OUT in line for line in row.stderr)


def _unwritten(row):
    """Una fila ✗ cuyo agente dice que le falta una pieza es «todavía no», no una falla."""
    piece = missing("\n".join(row.stderr)) if row.status == FAILED else None
    return not_yet(row.scenario, row.expected, piece) if piece else row


# Cuántas filas a la vez (por omisión, una por núcleo); con 1, las corridas van una tras otra.
WORKERS_ENV = "CONFORMANCE_WORKERS"


def workers():
    asked = os.environ.get(WORKERS_ENV, "")
    return int(asked) if asked.isdigit() and int(asked) > 0 else max(1, os.cpu_count() or 1)


def run_suite(ctx, pieces=None, progress=None, production=False):
    """[(título, filas)] de cada pieza pedida, en el orden de la lección; las filas corren en
    paralelo y comparten las corridas de cada etiqueta."""
    chosen, runs = pieces_for(pieces, production), Runs(ctx)
    jobs = {}
    for piece in chosen:
        why = applies(piece, ctx)
        jobs[piece] = [] if why else list(rows_of(piece, ctx))
    try:
        return _collect(ctx, chosen, runs, jobs, progress)
    finally:
        if ctx.bounds.servers is not None:
            ctx.bounds.servers.close()


def _collect(ctx, chosen, runs, jobs, progress):
    """Las filas de cada pieza, con ``jobs`` (sus funciones de fila) repartidas entre los trabajadores."""
    with ThreadPoolExecutor(workers()) as pool:
        futures = {
            piece: [pool.submit(_safe, f, ctx, runs, CAPABILITIES[piece].title) for f in functions]
            for piece, functions in jobs.items()
        }
        results = []
        for piece in chosen:
            title = CAPABILITIES[piece].title
            if progress:
                progress(title)
            why = applies(piece, ctx)
            rows = [not_applicable(title, why)] if why else [r for f in futures[piece] for r in f.result()]
            if not rows:
                rows = [
                    Row(
                        title,
                        "al menos una fila",
                        "ninguna fila",
                        FAILED,
                        "una pieza sin filas no prueba nada: es una falla, no un pase",
                    )
                ]
            results.append((title, rows))
    return results

"""terminal: la línea de comandos y sus códigos de salida."""

import os

from harness.contract import CHECKPOINT_FILE, EXIT_FAILED, EXIT_USAGE
from harness.text import plural, shorten

from ..processes import missing, run, run_args, scratch
from ..rows import judged, not_yet
from .reading import NO_CHECKPOINT

PIECE, TITLE = "terminal", "la línea de comandos y sus códigos de salida"
CHECKS = (
    "un argumento desconocido: código 2, una línea en stderr, nada escrito",
    f"--resume sin punto de control: código 1 y «No se encuentra {CHECKPOINT_FILE}…», en una línea",
)


def unknown_argument(ctx):
    with scratch() as w:
        bad = run_args(ctx, w, "--reanudar")
        written = os.listdir(w)
    lines = bad.stderr.splitlines()
    return judged(
        "python agent.py --reanudar",
        f"código {EXIT_USAGE}, una línea en stderr, nada escrito",
        f"código {bad.returncode}, {plural(len(lines), 'línea', 'líneas')} en stderr, archivos: {', '.join(written) or 'ninguno'}",
        bad.returncode == EXIT_USAGE and len(lines) == 1 and not written,
        "un argumento desconocido se rechaza antes de tocar nada, con una línea que dice el uso",
        bad.stderr,
    )


def nothing_to_resume(ctx):
    with scratch() as w:
        resumed = run(ctx, w, resume=True)
    scenario, expected = "--resume sin punto de control", f"código {EXIT_FAILED} y «{NO_CHECKPOINT}»"
    piece = missing(resumed.stderr)
    if piece:
        return not_yet(scenario, expected, piece)
    return judged(
        scenario,
        expected,
        f"código {resumed.returncode}: {shorten(resumed.stderr.strip(), 100)}",
        resumed.returncode == EXIT_FAILED and resumed.stderr.strip() == NO_CHECKPOINT,
        "el error de load_checkpoint llega a la terminal en una sola línea, sin traza, con código 1",
        resumed.stderr,
    )


ROWS = (unknown_argument, nothing_to_resume)

"""fallas-que-duran: un disco que falla y sigue fallando (EIO al leer sales-notes.txt) no es una
respuesta del modelo: la corrida se detiene con una línea y código 1, y --resume la termina después."""

import shutil

import harness
from harness.contract import EXIT_DONE, EXIT_FAILED, done_text
from harness.notebook.disk_state import read_disk_state
from harness.tools import NOTES_PATH

from ..processes import run, run_prefixed, scratch
from ..rows import judged, unchecked
from .diagnosis import ended
from .faults import failing, strace_missing, without_strace

PIECE, TITLE = "fallas-que-duran", "un disco que sigue fallando"
SECTION = "Un disco que falla y sigue fallando"
CHECKS = (
    "cada lectura de sales-notes.txt falla con EIO: código 1, una línea, y después --resume termina ([done], 1 copia)",
)
NOTES = f"{harness.__path__[0]}/data/{NOTES_PATH}"


def lasting_eio(ctx):
    scenario, expected = (
        "cada lectura de sales-notes.txt falla (EIO)",
        "código 1, una línea; después --resume: [done], 1 copia",
    )
    why = strace_missing()
    if why:
        return unchecked(scenario, expected, why, SECTION)
    with scratch() as w:
        shutil.copy(NOTES, w)
        failed = without_strace(run_prefixed(ctx, w, failing(NOTES_PATH, "EIO")))
        resumed = run(ctx, w, resume=True) if failed.returncode == EXIT_FAILED else None
        state = read_disk_state(w)
    lines = [line for line in failed.stderr.splitlines() if line.strip()]
    problem = None
    if failed.returncode != EXIT_FAILED or len(lines) != 1:
        problem = (
            ended(failed),
            "una falla del entorno que se repite no se le pasa al modelo para siempre: se detiene la corrida con una línea y código 1, retomable",
        )
    elif resumed.returncode != EXIT_DONE or done_text(resumed.stdout) is None or state.report_copies != 1:
        problem = (
            f"--resume: {ended(resumed)}",
            "tras detenerse por una falla del disco, el punto de control queda cargable y --resume termina la tarea",
        )
    got, hint = problem or ("código 1, una línea; --resume: [done]", "")
    return judged(scenario, expected, got, problem is None, hint, (resumed or failed).stderr, SECTION)


ROWS = (lasting_eio,)

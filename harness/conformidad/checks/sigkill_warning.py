"""aviso-sigkill: el aviso de un registro que no se pudo escribir sale en stderr en el momento: si
después llega un SIGKILL (que nadie puede atrapar), el aviso ya está."""

import os
import signal

from harness.contract import EFFECTS_FILE, TMP_SUFFIX
from harness.scenario import TURNS

from ..processes import scratch
from ..rows import judged, unchecked
from .common import SCRIPTED_LOG, needs
from .faults import failing, strace_missing
from .ledger_warning import warning_line
from .waiting import unavailable, waiting_for_model

PIECE, TITLE = "aviso-sigkill", "el aviso del registro, también bajo SIGKILL"
SECTION = "Un disco que falla y sigue fallando"
CHECKS = (
    f"con la escritura de {EFFECTS_FILE} fallando, un SIGKILL después del punto B del turno 1: el aviso de toolu_01 ya está en stderr",
)


@needs(SCRIPTED_LOG)
def warning_before_sigkill(ctx):
    scenario, expected = (
        "el registro no se puede escribir y llega un SIGKILL",
        f"el aviso de {TURNS[1].id} en stderr",
    )
    why = unavailable() or strace_missing()
    if why:
        return unchecked(scenario, expected, why, SECTION)
    with scratch() as w:
        with waiting_for_model(ctx, w, prefix=failing(EFFECTS_FILE + TMP_SUFFIX, "ENOSPC")) as held:
            if held.holder is None:
                return held.not_held(scenario, expected, SECTION)
            os.kill(held.holder, signal.SIGKILL)
            done = held.finish()
    ok = any(line.endswith(warning_line(TURNS[1].id)) for line in done.stderr.splitlines())
    hint = "el aviso se guardó para mostrarlo al final y el SIGKILL se lo llevó: imprímelo en stderr en el momento en que falla save_effect"
    return judged(
        scenario, expected, "el aviso está" if ok else "stderr sin el aviso", ok, hint, done.stderr, SECTION
    )


ROWS = (warning_before_sigkill,)

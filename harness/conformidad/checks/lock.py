"""candado: un segundo agente en la misma carpeta, mientras el primero espera al modelo, se rechaza
con una línea y sin tocar nada."""

import os

from harness.contract import CHECKPOINT_FILE, EXIT_FAILED

from ..processes import run
from ..rows import judged
from .common import SCRIPTED_LOG, needs
from .diagnosis import ended
from .waiting import while_waiting

PIECE, TITLE = "candado", "un solo agente por carpeta"
SECTION = "Dos agentes en la misma carpeta"
CHECKS = (
    f"con un agente esperando al modelo, otro en la misma carpeta: código 1, una línea, {CHECKPOINT_FILE} sin cambios",
)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


@needs(SCRIPTED_LOG)
def second_agent(ctx):
    scenario, expected = (
        "un segundo agente en la misma carpeta",
        f"código 1, una línea en stderr, {CHECKPOINT_FILE} sin cambios",
    )

    def act(w, _held):
        before = _read(os.path.join(w, CHECKPOINT_FILE))
        second = run(ctx, w)
        return before, second, _read(os.path.join(w, CHECKPOINT_FILE))

    def judge(_w, acted):
        before, second, after = acted
        lines = [line for line in second.stderr.splitlines() if line.strip()]
        ok = second.returncode == EXIT_FAILED and len(lines) == 1 and before == after
        hint = (
            "el segundo agente escribió en la carpeta del primero: toma un candado de la carpeta antes de tocar nada, y rechaza la corrida si ya está tomado"
            if before != after or second.returncode == 0
            else "el rechazo es una salida esperada: una línea en español, código 1"
        )
        return judged(scenario, expected, ended(second), ok, hint, second.stderr, SECTION)

    return while_waiting(ctx, scenario, expected, SECTION, act, judge)


ROWS = (second_agent,)

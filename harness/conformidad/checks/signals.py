"""senales: Ctrl-C, SIGTERM o SIGHUP mientras el agente espera al modelo: una línea en stderr, el
código de cada señal (130, 143, 129), y después --resume termina la tarea."""

import signal

from harness.contract import EXIT_DONE, EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_TERMINATED, done_text

from ..processes import run
from ..rows import judged
from .common import SCRIPTED_LOG, needs
from .diagnosis import ended
from .waiting import while_waiting

PIECE, TITLE = "senales", "las señales: una línea y su código"
SECTION = "Ctrl-C o SIGTERM mientras espera al modelo"
CHECKS = (
    "SIGINT, SIGTERM y SIGHUP con el agente esperando su segunda respuesta del modelo: códigos 130, 143 y 129, una línea en stderr, sin traza",
    "después, --resume termina la tarea ([done], código 0)",
)
STOPS = {"SIGINT": EXIT_INTERRUPTED, "SIGTERM": EXIT_TERMINATED, "SIGHUP": EXIT_HANGUP}


def _problem(name, stopped, resumed):
    """(lo que pasó, la pista) si la señal no terminó como se espera; si no, None."""
    code = STOPS[name]
    lines = [line for line in stopped.stderr.splitlines() if line.strip()]
    if stopped.returncode != code:
        return (
            f"{name}: {ended(stopped)}",
            f"{name} termina la corrida con código {code} (128 + el número de la señal), no {stopped.returncode}: atrápala y sal con su código",
        )
    if len(lines) != 1 or "Traceback" in stopped.stderr:
        return (
            f"{len(lines)} líneas en stderr",
            "una señal es una salida esperada: una sola línea que dice qué pasó y cómo seguir, sin traza",
        )
    if resumed.returncode != EXIT_DONE or done_text(resumed.stdout) is None:
        return (
            f"--resume: {ended(resumed)}",
            "tras una señal, el disco queda en el último punto guardado y --resume sigue",
        )
    return None


def _stop_row(name):
    code = STOPS[name]

    def check(ctx):
        scenario = f"{name} mientras espera al modelo"
        expected = f"código {code}, una línea en stderr; después --resume: [done]"

        def act(_w, held):
            held.proc.send_signal(getattr(signal, name))
            return held.finish()

        def judge(w, stopped):
            resumed = run(ctx, w, resume=True) if stopped.returncode == code else None
            ok = (f"código {code}, una línea; --resume: [done]", "")
            got, hint = _problem(name, stopped, resumed) or ok
            return judged(scenario, expected, got, not hint, hint, stopped.stderr, SECTION)

        return while_waiting(ctx, scenario, expected, SECTION, act, judge)

    check.__name__ = name
    return needs(SCRIPTED_LOG)(check)


ROWS = tuple(_stop_row(name) for name in STOPS)

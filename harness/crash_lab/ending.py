"""Cómo terminó un proceso del laboratorio, leído de su código de salida (no de la caída elegida).

- 137 con su línea ``[kill]``: la caída simulada, en la etiqueta que dice esa línea;
- un código negativo (así lo da ``Popen``) o 128 + n sin línea ``[kill]`` (así lo da un shell, o el
  agente que sale por una señal que atrapó): murió por esa señal, de verdad;
- 0: llegó al final;
- cualquier otro: un error, dicho con la última línea que escribió el agente.
Así un error nunca se cuenta como una caída, ni una señal real como la simulada.
"""

import signal
from typing import NamedTuple

from harness.contract import EXIT_KILLED, parse_line
from harness.crash_lab.shown import without_paths

CRASH, SIGNAL, DONE, ERROR = "crash", "signal", "done", "error"
SIGNAL_BASE = 128  # un shell da 128 + n a quien murió por la señal n


class Ending(NamedTuple):
    kind: str  # CRASH, SIGNAL, DONE o ERROR
    code: int  # el código de salida
    label: str = ""  # CRASH: la etiqueta de la caída simulada
    signal: str = ""  # SIGNAL: el nombre de la señal («SIGKILL»)
    line: str = ""  # ERROR: la última línea del agente, sin rutas de la máquina


def ending(run):
    """El ``Ending`` de ``run`` (un ``AgentRun``)."""
    code = run.returncode
    label = _crash_label(run.stdout)
    if code == EXIT_KILLED and label:
        return Ending(CRASH, code, label=label)
    name = _signal_name(-code if code < 0 else code - SIGNAL_BASE)
    if name and (code < 0 or code > SIGNAL_BASE):
        return Ending(SIGNAL, code, signal=name)
    if code == 0:
        return Ending(DONE, code)
    return Ending(ERROR, code, line=last_line(run))


def last_line(run):
    """Lo último que dijo el agente: su última línea de stderr (o de stdout, si stderr quedó vacío)."""
    lines = run.stderr.strip().splitlines() or run.stdout.strip().splitlines()
    return without_paths(lines[-1].strip()) if lines else "sin mensaje de error"


def _crash_label(stdout):
    """La etiqueta de la línea ``[kill]`` que imprimió el proceso ('' si no imprimió ninguna)."""
    kills = [line for line in map(parse_line, stdout.splitlines()) if line and line.kind == "kill"]
    return kills[-1].label if kills and kills[-1].label else ""


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return ""

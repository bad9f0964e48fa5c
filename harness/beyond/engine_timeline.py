"""Qué pasó en cada turno de una corrida sobre DBOS (``harness.beyond.dbos_agent``), leído de su log.

Los mismos cuatro pasos que dibuja el laboratorio, con lo que anota el motor: la salida del paso del
modelo (su punto A), la herramienta, la salida del paso de la herramienta (registro y punto B a la
vez) y el fin del turno, que no escribe nada. Un turno termina cuando el log pasa al siguiente (o
llega a ``[done]``) en el mismo proceso; al reanudar, la línea ``[resume][dbos] turn=N`` dice qué hizo
el motor con el paso que la caída dejó abierto.
"""

import re

from harness.beyond.engine_view import BRANCH_MARKERS, RESUME_PREFIX
from harness.contract import parse_line
from harness.crash_lab import timeline as story
from harness.crash_lab.words import split_label

_MODEL = re.compile(r"\[turn (\d+)\]\[paso modelo\] pending=(\S+)")
_TOOL = re.compile(r"\[turn (\d+)\]\[paso [\w-]+\] salida anotada en la base")
_BRANCH = re.compile(re.escape(RESUME_PREFIX) + r" turn=(\d+) ")
_RESUMED = "[resume] flujo"


def engine_branch(stdout):
    """«hit» si el motor reutilizó la salida anotada del paso abierto, «rerun» si lo volvió a ejecutar,
    o None si esta corrida no reanudó ningún paso abierto."""
    for line in stdout.splitlines():
        if line.startswith(RESUME_PREFIX):
            return next(b for b, marker in BRANCH_MARKERS.items() if marker in line)
    return None


def _read(stdout, who, done, tools, branches):
    """Un proceso: sus pasos, la rama del paso abierto y la caída ((turno, paso), o ())."""
    current = None  # el turno en curso: termina cuando el log pasa a otro o llega a [done]
    for line in stdout.splitlines():
        said = parse_line(line)  # [kill] y [done]: las líneas del contrato de la lección
        if said and said.kind == "kill" and said.label:
            kind, turn = split_label(said.label)
            step = story.STEP_KINDS.index(kind)
            story.mark(done, turn, range(step + 1), who, only_if_new=True)
            return turn, step
        m = _MODEL.match(line) or _TOOL.match(line) or _BRANCH.match(line)
        turn = int(m[1]) if m else None
        if current and ((said and said.kind == "done") or (turn and turn != current)):
            story.mark(done, current, [story.SAVE_B], who, only_if_new=True)
        current = turn or current
        if _MODEL.match(line):
            tools[turn] = m[2]
            story.mark(done, turn, [story.SAVE_A], who)
        elif _TOOL.match(line):
            story.mark(done, turn, [story.TOOL, story.EFFECT], who)
        elif _BRANCH.match(line):
            branches[turn] = engine_branch(line)
    return ()


def build(variant, processes, disk):
    """La historia de una corrida sobre DBOS: ``processes`` es [(acción, AgentRun)] desde el último
    Ejecutar (``disk`` sobra: el motor no tiene un checkpoint.json de donde sacar nombres)."""
    done, tools, branches, crash, resumed = {}, {}, {}, (), False
    for action, run in processes:
        who = story.RUN if action == "run" else story.RESUME
        crash = _read(run.stdout, who, done, tools, branches) or crash
        resumed = resumed or _RESUMED in run.stdout
    return story.assemble(variant, done, tools, branches, crash, resumed)

"""Qué pasó de verdad en cada turno, leído del log de los procesos y del disco (no de lo elegido).

Una «historia» empieza con un Ejecutar (la corrida nueva borra el disco) y sigue con cada Reanudar.
Para cada turno y cada uno de sus cuatro pasos (punto A → herramienta → registro → punto B) dice qué
proceso lo hizo: la corrida, la reanudación, los dos (una herramienta ejecutada dos veces) o ninguno.
"""

from typing import NamedTuple

from harness import scenario
from harness.contract import RERUN, parse_line
from harness.crash_lab.words import split_label

STEP_KINDS = tuple(scenario.KINDS)  # el paso i de un turno termina en la caída STEP_KINDS[i]
SAVE_A, TOOL, EFFECT, SAVE_B = (
    STEP_KINDS.index(k) for k in (scenario.SAVE_A, scenario.TOOL, scenario.EFFECT, scenario.SAVE_B)
)
RUN, RESUME = "corrida", "reanudación"
# El camino feliz del modelo guionado: una herramienta por turno.
TURN_TOOLS = scenario.SCRIPT
WITHOUT_SAVE_A = ("solo-b",)


class Turn(NamedTuple):
    number: int
    tool: str
    done_by: tuple  # por paso: la tupla de procesos que lo hicieron (vacía si nunca ocurrió)
    branch: str  # la rama de reconcile si la reanudación encontró este turno colgando, o ""


class Timeline(NamedTuple):
    variant: str
    turns: tuple
    crash: tuple  # (turno, paso) donde murió el proceso, o ()
    resumed: bool  # alguna reanudación leyó el punto de control

    @property
    def ran(self):
        return bool(self.turns)


def mark(done, turn, steps, who, only_if_new=False):
    """Anota que ``who`` hizo esos pasos del turno (con ``only_if_new``, solo los que nadie hizo aún)."""
    cells = done.setdefault(turn, [[] for _ in STEP_KINDS])
    for step in steps:
        if who not in cells[step] and not (only_if_new and cells[step]):
            cells[step].append(who)


def _read_run(stdout, done, tools):
    """Una corrida nueva: cada save del log, y la caída (la enésima de un tipo es el turno n)."""
    for line in filter(None, map(parse_line, stdout.splitlines())):
        if line.kind == "save" and line.point == "A":
            tools[line.turn] = ",".join(line.pending)
            mark(done, line.turn, [SAVE_A], RUN)
        elif line.kind == "save":
            mark(done, line.turn, [TOOL, EFFECT, SAVE_B], RUN)
        elif line.kind == "kill" and line.label:
            kind, turn = split_label(line.label)
            mark(done, turn, range(STEP_KINDS.index(kind) + 1), RUN)
            return turn, STEP_KINDS.index(kind)
    return ()


def _read_resume(stdout, done, tools, branches):
    """Una reanudación: la rama de reconcile del turno colgante, el punto B rellenado y los turnos nuevos."""
    pending_turn = None
    for line in filter(None, map(parse_line, stdout.splitlines())):
        if line.kind == "resume":
            pending_turn = line.turn
        elif line.kind == "reconcile" and pending_turn and line.branch:
            branches[pending_turn] = line.branch
            if line.branch == RERUN:
                mark(done, pending_turn, [TOOL, EFFECT], RESUME)
        elif line.kind == "save" and line.point == "A":
            tools[line.turn] = ",".join(line.pending)
            mark(done, line.turn, [SAVE_A], RESUME)
        elif line.kind == "save":
            mark(done, line.turn, [SAVE_B] if line.refilled else [TOOL, EFFECT, SAVE_B], RESUME)
    return pending_turn is not None


def _tools_on_disk(checkpoint):
    """Los nombres de herramienta por turno según checkpoint.json (el i-ésimo mensaje del asistente)."""
    messages = checkpoint.get("messages") if isinstance(checkpoint, dict) else None
    names, turn = {}, 0
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            turn += 1
            blocks = message.get("content")
            for block in blocks if isinstance(blocks, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    names.setdefault(turn, block.get("name"))
    return names


def build(variant, processes, disk):
    """La historia: ``processes`` es [(acción, AgentRun)] desde el último Ejecutar; ``disk`` el estado."""
    done, tools, branches, crash, resumed = {}, {}, {}, (), False
    for action, run in processes:
        if action == "run":
            crash = _read_run(run.stdout, done, tools) or crash
        else:
            resumed = _read_resume(run.stdout, done, tools, branches) or resumed
    return assemble(variant, done, tools, branches, crash, resumed, _tools_on_disk(disk.checkpoint))


def assemble(variant, done, tools, branches, crash, resumed, on_disk=None):
    """La Timeline con lo leído de los logs: ``done`` por turno y paso, ``tools`` y ``branches`` por
    turno; ``on_disk`` da el nombre de la herramienta de un turno que ningún log nombró."""
    last = max([len(TURN_TOOLS), *done]) if done else 0
    turns = []
    for n in range(1, last + 1):
        steps = done.get(n) or [[] for _ in STEP_KINDS]
        if variant in WITHOUT_SAVE_A:  # la caída después del registro «pasa» por un punto A que no existe
            steps[SAVE_A] = []
        default = TURN_TOOLS[n - 1] if n <= len(TURN_TOOLS) else "?"
        tool = tools.get(n) or (on_disk or {}).get(n) or default
        turns.append(Turn(n, tool, tuple(tuple(s) for s in steps), branches.get(n, "")))
    return Timeline(variant, tuple(turns), crash, resumed)

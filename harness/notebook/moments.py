"""La familia de momentos del Nivel 1 y de la Práctica: agente × tarea × etiqueta de caída × turno.

Un momento es una corrida que se razona con el código de la lección: el agente de la lección o una
variante suya (un cambio que el enunciado describe en prosa), una tarea, y la etiqueta de
``CRASH_AFTER`` donde muere; después, ``--resume``. Los momentos salen de estas tablas, no de una lista
escrita a mano, y cada uno tiene un id estable mientras las tablas no cambien («M07»: con nota;
«P07»: de práctica). Las tareas con ``notify_team`` son las del Nivel 1 y ningún notebook las corre; la
Práctica usa solo la tarea de la lección: así nunca muestra la respuesta de un momento con nota.

Quedan afuera los momentos que el curso ya muestra o que no ocurren: los del calentamiento (el agente
de la lección en el turno 2), los de la lección y el laboratorio (el agente de la lección, tarea de la
lección, turno 3), el punto A de «solo el punto B» (no existe) y, en «aviso antes», los turnos
anteriores al aviso (la misma corrida que «aviso después» hasta ahí).

La dificultad es la del agente: 1, el de la lección tal cual; 2, «solo el punto B» (le falta un bloque
que la lección explica); 3, «punto A tarde» (hay que juntar el orden de ``run_agent``, lo que
``resume_scene`` rehace y la regla de la API sobre cada ``tool_use`` y su ``tool_result``).
"""

from typing import NamedTuple

from harness.contract import CRASH_VAR
from harness.scenario import KINDS, SAVE_A, call_id, label

NOTIFY = "notify_team"
NOTICES_PATH = "avisos.txt"
NOTICE_TEXT = "Reporte listo en report.txt\n"

LESSON, ONLY_B, LATE_A = "dos-puntos", "solo-b", "punto-a-tarde"
# {agente: (cómo se dice, dificultad)}.
AGENTS = {
    LESSON: ("dos puntos (el agente de la lección tal cual)", 1),
    ONLY_B: ("solo el punto B (sin el bloque del punto A en run_agent)", 2),
    LATE_A: ("punto A tarde (el turno del asistente se agrega a messages antes de guardar el punto A)", 3),
}
REPORT, NOTIFY_AFTER, NOTIFY_FIRST = "reporte", "aviso-despues", "aviso-antes"
# {tarea: (cómo se dice, la herramienta de cada turno)}.
TASKS = {
    REPORT: (
        "la de la lección (un solo efecto secundario: write_report)",
        ("read_notes", "count_words", "write_report"),
    ),
    NOTIFY_AFTER: (
        "con aviso después del reporte (notify_team en el turno 4)",
        ("read_notes", "count_words", "write_report", NOTIFY),
    ),
    NOTIFY_FIRST: (
        "con aviso antes del reporte (notify_team en el turno 3, write_report en el 4)",
        ("read_notes", "count_words", NOTIFY, "write_report"),
    ),
}
# Las tareas de cada familia, y la letra de sus ids.
GRADED_TASKS, PRACTICE_TASKS = (NOTIFY_AFTER, NOTIFY_FIRST), (REPORT,)
GRADED_PREFIX, PRACTICE_PREFIX = "M", "P"


class Moment(NamedTuple):
    id: str
    agent: str
    task: str
    kind: str
    turn: int

    @property
    def label(self):
        """El valor de ``CRASH_AFTER``: «after-tool:3»."""
        return label(self.kind, self.turn)

    @property
    def tool(self):
        return TASKS[self.task][1][self.turn - 1]

    @property
    def tool_use_id(self):
        return call_id(self.turn)

    @property
    def difficulty(self):
        return AGENTS[self.agent][1]

    def describe(self):
        """El momento en una línea, para leer: agente, tarea, etiqueta y la llamada del turno."""
        return (
            f"{self.id}: agente {AGENTS[self.agent][0]}; tarea {TASKS[self.task][0]}; "
            f"{CRASH_VAR}={self.label} ({KINDS[self.kind]}); la llamada del turno es "
            f"{self.tool} ({self.tool_use_id}); dificultad {self.difficulty}"
        )


def _kept(agent, task, kind, turn):
    """¿Entra el momento en la familia? (ver el docstring del módulo)."""
    shown = agent == LESSON and (turn == 2 or (task == REPORT and turn == 3))
    never = agent == ONLY_B and kind == SAVE_A
    same_run = task == NOTIFY_FIRST and turn < TASKS[task][1].index(NOTIFY) + 1
    return not (shown or never or same_run)


def _family(tasks, prefix):
    parts = [
        (agent, task, kind, turn)
        for task in tasks
        for agent in AGENTS
        for turn in range(1, len(TASKS[task][1]) + 1)
        for kind in KINDS
        if _kept(agent, task, kind, turn)
    ]
    return {f"{prefix}{n:02d}": Moment(f"{prefix}{n:02d}", *p) for n, p in enumerate(parts, 1)}


GRADED = _family(GRADED_TASKS, GRADED_PREFIX)
PRACTICE = _family(PRACTICE_TASKS, PRACTICE_PREFIX)
FAMILY = {**GRADED, **PRACTICE}


def find(agent, task, crash_label):
    """El momento de la familia con esas partes (``KeyError`` si no está)."""
    for moment in FAMILY.values():
        if (moment.agent, moment.task, moment.label) == (agent, task, crash_label):
            return moment
    raise KeyError(f"{agent}, {task}, {crash_label}")


# Los tres de siempre: los de quien no está en una lista de la clase (sin ``variantes``).
DEFAULT = tuple(
    find(agent, NOTIFY_AFTER, crash).id
    for agent, crash in ((LATE_A, "after-tool:3"), (LESSON, "after-tool:4"), (ONLY_B, "after-effect-write:4"))
)


# —— Los cambios de cada variante sobre el texto del agente de la lección ——

# Las dos líneas de ``run_agent`` que «punto A tarde» cambia de orden (una sola vez cada una).
ASSISTANT_PUSH = '        messages.append({"role": "assistant", "content": content})\n'
POINT_A = "        # —— Punto A"
# La última línea del bloque del punto A: «solo el punto B» borra desde POINT_A hasta ella, inclusive.
POINT_A_END = '        crash_point("after-save-a")\n'


def _once(source, *lines):
    """Las líneas que un cambio toca están una sola vez en ``source``, o el cambio no se puede hacer."""
    if any(source.count(line) != 1 for line in lines):
        raise ValueError(
            "run_agent ya no tiene la forma que cambian las variantes (harness/notebook/moments.py)"
        )


def point_a_late(source):
    """El texto del agente con el turno del asistente empujado antes de guardar el punto A."""
    _once(source, ASSISTANT_PUSH, POINT_A)
    return source.replace(ASSISTANT_PUSH, "").replace(POINT_A, ASSISTANT_PUSH + POINT_A)


def only_b(source):
    """El texto del agente sin el bloque del punto A: nada guarda la llamada colgante."""
    _once(source, POINT_A, POINT_A_END)
    start = source.index(POINT_A)
    return source[:start] + source[source.index(POINT_A_END, start) + len(POINT_A_END) :]


CHANGES = {LESSON: lambda source: source, ONLY_B: only_b, LATE_A: point_a_late}


def agent_source(agent, lesson_source):
    """El texto del agente ``agent``: el de la lección con su cambio."""
    return CHANGES[agent](lesson_source)

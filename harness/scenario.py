"""La tabla del escenario de la lección, escrita una sola vez: los cuatro tipos de caída, las 12
etiquetas, las herramientas y turnos de la tarea, y lo que se espera en cada etiqueta (qué queda en
disco tras la caída, qué rama toma ``reconcile`` al reanudar, qué queda al final).

La importan los puntos de caída (``harness.crash``), el modelo guionado, la suite de conformidad y
las pruebas; agregar un tipo de caída o una herramienta es cambiar esta tabla y el código que actúa
sobre ella, nada más. Solo importa ``harness.contract`` (abajo de todo) y las herramientas.
"""

from collections import namedtuple

from harness.contract import HIT, IS_ERROR, NO_PENDING, RERUN
from harness.tools import NOTES_PATH, READ_ONLY, REPORT_PATH

# Los cuatro momentos de un turno donde se puede provocar la caída, en el orden en que ocurren.
KINDS = {
    "after-save-a": "① punto A guardado, herramienta sin ejecutar",
    "after-tool": "② herramienta ejecutada, registro sin escribir",
    "after-effect-write": "registro escrito, punto B sin guardar",
    "after-save-b": "③ punto B guardado",
}
SAVE_A, TOOL, EFFECT, SAVE_B = KINDS

# Los textos finales del modelo guionado: la tarea hecha, o el reporte verificado tras un is_error.
FINAL_TEXT = f"Reporte escrito en {REPORT_PATH}, tarea completa."
VERIFIED_TEXT = f"Verifiqué {REPORT_PATH}: el reporte ya estaba escrito, no lo repito. Tarea completa."


# namedtuple y no typing.NamedTuple: cada proceso del agente importa esta tabla, y typing cuesta.
class Call(namedtuple("Call", "id name")):
    """Una llamada del guion: su tool_use_id y el nombre de la herramienta."""

    __slots__ = ()

    @property
    def read_only(self):
        return self.name in READ_ONLY


def call_id(n):
    """El tool_use_id de la enésima llamada del guion: toolu_01, toolu_02…"""
    return f"toolu_{n:02d}"


TASK = f"Convierte {NOTES_PATH} en un reporte breve y escríbelo en {REPORT_PATH}."
# La tarea, una herramienta por turno; después de un is_error de write_report, el modelo verifica
# con check_report y, si el reporte no está, lo escribe otra vez.
SCRIPT = ("read_notes", "count_words", "write_report")
TURNS = {n: Call(call_id(n), name) for n, name in enumerate(SCRIPT, 1)}
VERIFY = "check_report"


def label(kind, turn):
    """La etiqueta de caída «after-tool:3» (el valor de CRASH_AFTER)."""
    return f"{kind}:{turn}"


LABELS = tuple(label(kind, turn) for turn in TURNS for kind in KINDS)  # en el orden en que ocurren


def split(label):
    """(tipo, turno) de una etiqueta «after-tool:3»."""
    kind, _, turn = label.partition(":")
    return kind, int(turn)


def moment(label):
    """«after-tool:3 (② herramienta ejecutada, registro sin escribir)»."""
    return f"{label} ({KINDS[split(label)[0]]})"


class Expected(namedtuple("Expected", "pending ledger copies branch final_ledger final_text")):
    """Lo que el agente de la lección deja en una etiqueta: tras la caída y tras el --resume.
    ``pending``: la ``Call`` de pendingToolUse tras la caída (o None); ``ledger``: las llamadas anotadas
    en effects.json tras la caída; ``copies``: copias del reporte tras la caída; ``branch``: la rama de
    reconcile al reanudar; ``final_ledger``: las llamadas anotadas al terminar; ``final_text``: el texto
    final del modelo."""

    __slots__ = ()


def expected(label):
    kind, turn = split(label)
    call, before = TURNS[turn], tuple(TURNS[n] for n in range(1, turn))
    written = turn == len(SCRIPT) and kind != SAVE_A  # write_report ya corrió
    done = (*before, call)
    if kind == SAVE_B:
        return Expected(None, done, int(written), NO_PENDING, tuple(TURNS.values()), FINAL_TEXT)
    if kind == EFFECT:
        return Expected(call, done, int(written), HIT, tuple(TURNS.values()), FINAL_TEXT)
    if call.read_only:
        return Expected(call, before, 0, RERUN, tuple(TURNS.values()), FINAL_TEXT)
    # write_report sin anotación: is_error; el modelo verifica (toolu_04) y, si falta, lo escribe (toolu_05).
    verify = Call(call_id(len(SCRIPT) + 1), VERIFY)
    if written:
        return Expected(call, before, 1, IS_ERROR, (*before, verify), VERIFIED_TEXT)
    again = Call(call_id(len(SCRIPT) + 2), call.name)
    return Expected(call, before, 0, IS_ERROR, (*before, verify, again), FINAL_TEXT)


EXPECTED = {label: expected(label) for label in LABELS}

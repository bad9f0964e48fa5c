"""Por qué cada clave de un momento de la Práctica vale lo que vale, dicho desde las partes del momento.

Cuando una predicción de la Práctica falla, cada clave equivocada va con la frase del razonamiento que
lleva a su valor: el código de la lección (``run_agent``, ``run_tool_uses``, ``reconcile``,
``resume_scene``) aplicado al agente, la etiqueta y el turno del momento. Cada regla da el valor y su
frase; lo que se muestra como respuesta es siempre lo medido, y una prueba exige que cada valor razonado
sea el medido en cada momento de la Práctica. Solo razona la tarea de la lección: un momento con nota
(las tareas con una segunda herramienta con efectos) no tiene frases aquí.
"""

from harness.contract import BRANCH_WORDS, CHECKPOINT_FILE, EFFECTS_FILE, HIT, IS_ERROR, NO_PENDING, RERUN
from harness.notebook.exercise_feedback import NOT_RESUMED
from harness.notebook.moments import LATE_A, NOTICES_PATH, NOTIFY, ONLY_B, PRACTICE
from harness.scenario import EFFECT, SAVE_A, SAVE_B, TOOL
from harness.tools import READ_ONLY

WRITE = "write_report"


def _saved(m):
    """¿Hay checkpoint.json tras la caída? «Solo el punto B» guarda por primera vez en el punto B del turno 1."""
    return not (m.agent == ONLY_B and m.turn == 1 and m.kind != SAVE_B)


def _hanging(m):
    """¿Queda una llamada colgante? Solo el punto A la guarda, y el punto B la limpia."""
    return m.kind != SAVE_B and m.agent != ONLY_B


def _finishes(m):
    return _saved(m) and not (m.agent == LATE_A and _hanging(m))


def _wrote_before(m):
    """¿write_report escribió el reporte antes de la caída?"""
    return m.tool == WRITE and m.kind != SAVE_A


def pending_tool_use(m):
    if m.kind == SAVE_B:
        return None, f"el punto B del turno {m.turn} guardó su tool_result y dejó pendingToolUse en null"
    if m.agent == ONLY_B and m.turn == 1:
        return (
            None,
            f"sin punto A no hay {CHECKPOINT_FILE} hasta el punto B del turno 1: nada guardó la llamada",
        )
    if m.agent == ONLY_B:
        return None, (
            f"sin punto A nada guarda la llamada colgante: {CHECKPOINT_FILE} es el punto B del turno "
            f"{m.turn - 1}, con pendingToolUse en null"
        )
    return m.tool, (
        f"el punto A del turno {m.turn} guardó la llamada a {m.tool} en pendingToolUse y el punto B, que "
        "la limpia, no llegó a correr"
    )


def tool_result_in_messages(m):
    if m.kind == SAVE_B:
        return True, f"el punto B guarda messages con el tool_result de {m.tool_use_id} al final"
    if not _saved(m):
        return False, f"{CHECKPOINT_FILE} no existe todavía: no hay messages guardados"
    if m.agent == LATE_A:
        return False, (
            "el último mensaje guardado es el turno del asistente con el tool_use (se agregó antes del "
            "punto A), no un tool_result"
        )
    return (
        False,
        f"el tool_result de {m.tool_use_id} entra a {CHECKPOINT_FILE} con el punto B, que no llegó a correr",
    )


def ledger_has_entry(m):
    if m.kind == SAVE_A:
        return False, f"{m.tool} todavía no corrió: save_effect no tiene nada que anotar"
    if m.kind == TOOL:
        return False, f"{m.tool} terminó pero save_effect todavía no corrió"
    if m.kind == EFFECT:
        return (
            True,
            f"save_effect ya anotó {m.tool_use_id}: la caída es justo después de escribir el registro",
        )
    return True, f"save_effect anotó {m.tool_use_id} apenas {m.tool} terminó, antes del punto B"


def reconcile_branch(m):
    if not _saved(m):
        return NOT_RESUMED, f"sin {CHECKPOINT_FILE}, --resume se niega antes de leer ningún estado guardado"
    if m.kind == SAVE_B:
        return BRANCH_WORDS[
            NO_PENDING
        ], "pendingToolUse es null tras el punto B: reconcile no tiene nada que decidir"
    if m.agent == ONLY_B:
        return BRANCH_WORDS[NO_PENDING], (
            f"sin punto A, pendingToolUse es null: reconcile no ve la llamada a {m.tool} que ya empezó"
        )
    if m.kind == EFFECT:
        return BRANCH_WORDS[HIT], (
            f"{EFFECTS_FILE} tiene la anotación de {m.tool_use_id}: reconcile reutiliza su resultado sin "
            f"volver a ejecutar {m.tool}"
        )
    if m.tool in READ_ONLY:
        return BRANCH_WORDS[RERUN], (
            f"sin anotación de {m.tool_use_id} y {m.tool} es de solo lectura: reconcile la vuelve a ejecutar"
        )
    return BRANCH_WORDS[IS_ERROR], (
        f"sin anotación de {m.tool_use_id} y {m.tool} tiene efectos secundarios: reconcile no sabe si corrió "
        "y responde con un is_error"
    )


def resume_finishes(m):
    if not _saved(m):
        return False, "--resume se niega sin estado guardado: sale con código 1, sin [done]"
    if not _finishes(m):
        return False, (
            "resume_scene agrega otra vez el turno del asistente que el punto A ya había guardado: queda un "
            "tool_use sin su tool_result en el mensaje siguiente, el modelo responde con error 400 y el "
            "agente muere"
        )
    return True, "--resume sigue desde el estado guardado hasta [done]"


def report_copies_after_resume(m):
    if not _saved(m):
        return 0, "--resume se niega: nadie llega a write_report"
    if not _finishes(m):
        if _wrote_before(m):
            return 1, "write_report escribió el reporte antes de la caída y --resume muere antes de repetirlo"
        return 0, "--resume muere antes de llegar a write_report: nadie escribe el reporte"
    if m.agent == ONLY_B and _wrote_before(m) and m.kind != SAVE_B:
        return 2, (
            "sin punto A, --resume no sabe que write_report ya corrió: el modelo la pide otra vez y el "
            "reporte se escribe dos veces"
        )
    if _wrote_before(m):
        return 1, "el punto B ya guardó el resultado de write_report: --resume sigue sin volver a escribirlo"
    return 1, "write_report corre una sola vez, después de reanudar"


def notices_after_resume(m):
    return 0, f"la tarea de la lección no tiene {NOTIFY}: nadie escribe en {NOTICES_PATH}"


RULES = {
    rule.__name__: rule
    for rule in (
        pending_tool_use,
        tool_result_in_messages,
        ledger_has_entry,
        reconcile_branch,
        resume_finishes,
        report_copies_after_resume,
        notices_after_resume,
    )
}


def reasoned(moment):
    """{clave: (valor razonado, su frase)} de un momento de la Práctica."""
    if moment.id not in PRACTICE:
        raise KeyError(f"{moment.id} no es un momento de la Práctica: aquí solo se razonan esos")
    return {key: rule(moment) for key, rule in RULES.items()}

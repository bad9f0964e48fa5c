"""puntos: el punto A (la llamada colgante, antes de ejecutar) y el punto B (su resultado en messages,
pendingToolUse en null) en disco, justo después de cada uno, en los tres turnos."""

from harness.contract import EFFECTS_FILE
from harness.scenario import EXPECTED, LABELS, SAVE_A, SAVE_B, split
from harness.text import plural

from .labels import label_row, scenario_of

PIECE, TITLE = "puntos", "run_agent: el punto A y el punto B"
CHECKS = (
    "tras ① (after-save-a:N): pendingToolUse = la llamada del turno N, sin su turno en messages, turns = N",
    "tras ③ (after-save-b:N): pendingToolUse = null y el tool_result del turno N al final de messages",
    f"en ambos: {EFFECTS_FILE} con exactamente las llamadas ya hechas (ids, nombres, resultados)",
    "tokensUsed: cada punto A guarda más que el punto B anterior (suma la respuesta que abrió su turno), y el punto B, lo mismo que su punto A",
)


def _expected(label):
    exp = EXPECTED[label]
    if exp.pending:
        return f"pendingToolUse = {exp.pending.name} ({exp.pending.id}); registro: {plural(len(exp.ledger), 'anotación', 'anotaciones')}"
    return f"pendingToolUse = null, tool_result de {exp.ledger[-1].id} en messages; registro: {plural(len(exp.ledger), 'anotación', 'anotaciones')}"


ROWS = tuple(
    label_row(
        label, ("crash", "tokens"), scenario_of(label), _expected(label), "el disco como lo deja la lección"
    )
    for label in LABELS
    if split(label)[0] in (SAVE_A, SAVE_B)
)

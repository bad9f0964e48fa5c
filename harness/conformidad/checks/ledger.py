"""registro: ejecutar primero, anotar después; en ② (after-tool) la herramienta corrió y no hay
anotación, tras after-effect-write sí, con el resultado real, y las anteriores siguen ahí."""

from harness.contract import EFFECTS_FILE
from harness.scenario import EFFECT, EXPECTED, LABELS, TOOL, split
from harness.text import plural

from .labels import label_row, scenario_of

PIECE, TITLE = "registro", "run_tool_uses: ejecutar primero, anotar después"
CHECKS = (
    "tras ② (after-tool:N): sin anotación del turno N; las anteriores intactas; el reporte, si ya se escribió",
    "tras after-effect-write:N: la anotación del turno N con su resultado real, y las anteriores",
)


def _expected(label):
    exp = EXPECTED[label]
    return f"{EFFECTS_FILE}: {', '.join(c.id for c in exp.ledger) or 'vacío'}; {plural(exp.copies, 'copia', 'copias')} del reporte"


ROWS = tuple(
    label_row(label, ("crash",), scenario_of(label), _expected(label), "el registro como lo deja la lección")
    for label in LABELS
    if split(label)[0] in (TOOL, EFFECT)
)

"""reconcile: la rama que toma al reanudar en cada etiqueta (acierto, volver a ejecutar, is_error, o
nada si no hay colgante), el punto B rellenado guardado de verdad y el registro exacto al terminar."""

from harness.contract import BRANCH_WORDS, EFFECTS_FILE
from harness.scenario import EXPECTED, LABELS

from .labels import label_row, scenario_of

PIECE, TITLE = "reconcile", "reconcile: las tres ramas, en cada etiqueta"
CHECKS = (
    "la rama que dice la línea de reconcile (o ninguna línea, con pendingToolUse en null)",
    "el punto B rellenado: guardado (un --resume que muere justo después lo deja en disco), con el tool_result de la colgante; is_error con el texto de la lección",
    f"al terminar: [done] con el texto esperado, {EFFECTS_FILE} exacto (también la re-ejecución anotada), 1 copia del reporte",
)


def _expected(label):
    exp = EXPECTED[label]
    return f"rama «{BRANCH_WORDS[exp.branch]}»; al final: {', '.join(c.id for c in exp.final_ledger)} anotadas, 1 copia"


ROWS = tuple(
    label_row(
        label,
        ("branch", "refill", "final"),
        f"{scenario_of(label)} y --resume",
        _expected(label),
        "la rama y el final de la lección",
    )
    for label in LABELS
)

"""reconcile: la rama que toma al reanudar en cada etiqueta (acierto, volver a ejecutar, is_error, o
nada si no hay colgante), el punto B rellenado guardado de verdad y el registro exacto al terminar."""

import os

from harness.contract import BRANCH_WORDS, EFFECTS_FILE, EXIT_FAILED
from harness.scenario import EFFECT, EXPECTED, LABELS

from ..processes import run, scratch
from ..rows import judged
from .common import crash_first, write
from .diagnosis import ended
from .labels import label_row, scenario_of

PIECE, TITLE = "reconcile", "reconcile: las tres ramas, en cada etiqueta"
CHECKS = (
    "la rama que dice la línea de reconcile (o ninguna línea, con pendingToolUse en null)",
    "el punto B rellenado: guardado (un --resume que muere justo después lo deja en disco), con el turns leído, la llamada colgante entera (id, name, input) y el tool_result de la colgante: is_error con el texto de la lección, o sin is_error y con el resultado anotado",
    "los números de turno tras cada --resume (también tras una segunda caída): siguen desde el turns guardado; el punto de control final guarda el último",
    "tokensUsed tras cada --resume: el punto B rellenado guarda el leído, y el final es el de una corrida sin caída",
    f"al terminar: [done] con el texto esperado, {EFFECTS_FILE} exacto (también la re-ejecución anotada), 1 copia del reporte",
    f"--resume con {EFFECTS_FILE} cortado: una línea que lo nombra, código 1, sin tratarlo como vacío",
)


def _expected(label):
    exp = EXPECTED[label]
    return f"rama «{BRANCH_WORDS[exp.branch]}»; al final: {', '.join(c.id for c in exp.final_ledger)} anotadas, 1 copia"


def unreadable_ledger(ctx):
    """Un registro cortado nunca se trata como vacío: eso volvería a ejecutar lo que ya corrió."""
    label = f"{EFFECT}:1"
    scenario = f"--resume con {EFFECTS_FILE} cortado a la mitad"
    expected = f"código {EXIT_FAILED}, una línea que nombra {EFFECTS_FILE}; el registro sin tocar"
    with scratch() as w:
        crashed, failed = crash_first(ctx, w, label, scenario, expected)
        if failed:
            return failed
        path = os.path.join(w, EFFECTS_FILE)
        with open(path, "rb") as f:
            cut = f.read()[: os.path.getsize(path) // 2]
        write(path, cut)
        resumed = run(ctx, w, resume=True)
        with open(path, "rb") as f:
            same = f.read() == cut
    lines = [line for line in resumed.stderr.splitlines() if line.strip()]
    ok = (
        resumed.returncode == EXIT_FAILED
        and len(lines) == 1
        and EFFECTS_FILE in lines[0]
        and "Traceback" not in resumed.stderr
        and same
    )
    if resumed.returncode == 0 or not same:
        hint = f"un {EFFECTS_FILE} que no se puede leer no es un registro vacío: tratarlo así vuelve a ejecutar efectos que ya ocurrieron; load_effects lanza su error"
    else:
        hint = f"el rechazo es una salida esperada: una línea en español que nombra {EFFECTS_FILE}, código {EXIT_FAILED}, sin traza"
    return judged(scenario, expected, ended(resumed), ok, hint, resumed.stderr)


ROWS = (
    *(
        label_row(
            label,
            ("branch", "refill", "final", "turns"),
            f"{scenario_of(label)} y --resume",
            _expected(label),
            "la rama y el final de la lección",
        )
        for label in LABELS
    ),
    unreadable_ledger,
)

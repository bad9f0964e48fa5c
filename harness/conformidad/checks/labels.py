"""Las filas que juzgan una etiqueta de caída: cada capacidad pide las etiquetas y los aspectos que
decide (el disco tras la caída, la rama de reconcile, el punto B rellenado, el final), y todas
comparten la misma corrida de cada etiqueta (``common.Runs``)."""

from harness.scenario import moment

from ..rows import judged, not_yet
from .diagnosis import aspects


def label_row(label, names, scenario, expected, ok_text):
    """Una fila que juzga los aspectos ``names`` de la corrida de ``label``."""

    def check(ctx, runs):
        record = runs.label(label)
        piece = record.missing_piece()
        if piece:
            return not_yet(scenario, expected, piece)
        problems = aspects(record, *names, runs=runs)
        got, hint = problems[0] if problems else (ok_text, "")
        return judged(scenario, expected, got, not problems, hint, record.stderr())

    check.__name__ = f"{label} {' '.join(names)}"
    check.label = label
    return check


def scenario_of(label):
    return f"caída en {moment(label)}"

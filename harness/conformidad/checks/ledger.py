"""registro: ejecutar primero, anotar después; en ② (after-tool) la herramienta corrió y no hay
anotación, tras after-effect-write sí, con el resultado real, y las anteriores siguen ahí."""

from harness.contract import EFFECTS_FILE
from harness.notebook.disk_state import read_disk_state
from harness.scenario import EFFECT, EXPECTED, LABELS, TOOL, call_id, split
from harness.text import plural
from harness.tools import REPORT_PATH, REPORT_TITLE

from ..processes import call, scratch
from .common import PYTHON_DRIVER, needs, row_or_not_yet, said
from .labels import label_row, scenario_of

PIECE, TITLE = "registro", "run_tool_uses: ejecutar primero, anotar después"
CHECKS = (
    "tras ② (after-tool:N): sin anotación del turno N; las anteriores intactas; el reporte, si ya se escribió",
    "tras after-effect-write:N: la anotación del turno N con su resultado real, y las anteriores",
    "una respuesta con dos tool_use: cada uno corre una vez, con su tool_result en orden, y queda anotado",
)


def _expected(label):
    exp = EXPECTED[label]
    return f"{EFFECTS_FILE}: {', '.join(c.id for c in exp.ledger) or 'vacío'}; {plural(exp.copies, 'copia', 'copias')} del reporte"


# Una respuesta con dos tool_use: el guion pide una llamada por turno, pero run_tool_uses recorre todas.
TWO_CALLS = (
    {
        "type": "tool_use",
        "id": call_id(1),
        "name": "write_report",
        "input": {"path": REPORT_PATH, "content": f"{REPORT_TITLE}\n\nDos llamadas en un turno.\n"},
    },
    {"type": "tool_use", "id": call_id(2), "name": "check_report", "input": {"path": REPORT_PATH}},
)


def _two_calls_problem(result, entries, copies):
    """(lo que pasó, la pista) si run_tool_uses no corrió y anotó cada bloque una vez, o None."""
    ids = [c["id"] for c in TWO_CALLS]
    value = result.get("value")
    got = [r.get("tool_use_id") for r in value if isinstance(r, dict)] if isinstance(value, list) else []
    if got != ids:
        return (
            f"tool_result de {', '.join(map(str, got)) or 'ninguna'}",
            "run_tool_uses recorre todos los bloques tool_use de la respuesta, no solo el primero: cada uno con su tool_result, en orden",
        )
    if {i: e.get("name") if isinstance(e, dict) else e for i, e in entries.items()} != {
        c["id"]: c["name"] for c in TWO_CALLS
    }:
        return (
            f"{EFFECTS_FILE}: {', '.join(entries) or 'vacío'}",
            "cada herramienta que corre se anota en el registro, con su tool_use_id: también la segunda de la respuesta",
        )
    if copies != 1 or any(r.get("is_error") for r in value):
        return (
            f"{plural(copies, 'copia', 'copias')} del reporte, is_error: {[r.get('is_error') for r in value]}",
            "cada bloque corre una vez, y el resultado de una herramienta que anduvo va sin is_error",
        )
    if [r.get("content") for r in value] != [entries[i].get("result") for i in ids]:
        return (
            "el contenido de los tool_result no es el anotado",
            "se anota el resultado real de la herramienta, el mismo que va en su tool_result",
        )
    return None


@needs(PYTHON_DRIVER)
def two_tool_uses(ctx):
    scenario = "run_tool_uses con una respuesta de dos tool_use (write_report y check_report)"
    expected = f"dos tool_result en orden, las dos anotadas en {EFFECTS_FILE}, 1 copia del reporte"
    with scratch() as w:
        result = call(ctx, w, "run_tool_uses", list(TWO_CALLS))
        state = read_disk_state(w)
    problem = None if "error" in result else _two_calls_problem(result, state.entries, state.report_copies)
    got, hint = problem or (said(result), "run_tool_uses corre cada bloque una vez, sin is_error")
    return row_or_not_yet(result, scenario, expected, "error" not in result and not problem, got, hint)


ROWS = (
    *(
        label_row(
            label, ("crash",), scenario_of(label), _expected(label), "el registro como lo deja la lección"
        )
        for label in LABELS
        if split(label)[0] in (TOOL, EFFECT)
    ),
    two_tool_uses,
)

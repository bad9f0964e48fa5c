"""El agente escribe con sus propios literales (los de la lección) la gramática de ``harness.contract``:
cada línea que imprime, en una caída de cada tipo y cada rama de reconcile y su reanudación, se lee y
se vuelve a escribir igual. La matriz de las 12 etiquetas la afirma la suite (``test_conformidad.py``)."""

import pytest

from harness import contract
from harness.contract import format_line, parse_line

# Cada tipo de caída y cada camino de la reanudación: re-ejecución, acierto, is_error que vuelve a
# escribir el reporte, is_error que verifica que ya estaba, y ninguna llamada colgante.
LABELS = ["after-save-a:1", "after-effect-write:2", "after-save-a:3", "after-tool:3", "after-save-b:3"]


def test_the_lessons_names_are_the_contracts(agent_module):
    lesson = agent_module
    assert (lesson.CHECKPOINT_PATH, lesson.EFFECTS_PATH) == (contract.CHECKPOINT_FILE, contract.EFFECTS_FILE)
    assert lesson.USAGE.endswith(" ".join(f"[{flag}]" for flag in contract.FLAGS))
    cp = lesson.checkpoint("t", 1, 0, [], None)
    assert tuple(cp) == contract.CHECKPOINT_KEYS and cp["version"] == contract.VERSION


@pytest.mark.parametrize("label", LABELS)
def test_every_line_the_lesson_prints_is_the_contracts(run, workdir, label):
    crashed, resumed = run(workdir, crash_after=label), run(workdir, resume=True)
    assert crashed.stdout.splitlines()[-1] == contract.kill_line(contract.crash_message(label))
    assert resumed.returncode == contract.EXIT_DONE, resumed.stderr
    for line in (crashed.stdout + resumed.stdout).splitlines():
        parsed = parse_line(line)
        assert parsed is not None and format_line(parsed) == line, line
    assert resumed.branch == contract.reconcile_branch(resumed.stdout)

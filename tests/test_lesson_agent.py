"""El agente de la lección a su tamaño (``solutions/agent_leccion.py``): imprime las dos transcripciones
de la lección al pie de la letra, pasa el nivel de la lección de la suite de conformidad, y el nivel de
producción lo falla en las secciones de «De la lección a producción» (las defensas que no tiene)."""

import pytest
from seed_text import transcript

from harness.conformidad.checks import LESSON_PIECES, PRODUCTION_PIECES
from harness.conformidad.processes import Context
from harness.conformidad.rows import FAILED, OK
from harness.conformidad.suite import run_suite
from harness.runs.launcher import run_agent_process
from maintainer.paths import LESSON_AGENT

MIN_MISSING_DEFENCES = 6


def rows_of(pieces):
    return [row for _, rows in run_suite(Context(LESSON_AGENT, {}), pieces) for row in rows]


def test_the_lessons_agent_prints_the_lessons_transcripts(tmp_path):
    crash = run_agent_process(tmp_path, agent=LESSON_AGENT, crash_after="after-effect-write:3")
    crashed = "".join(crash.stdout.splitlines()) + f"EXIT={crash.returncode}"
    assert crashed == transcript("CRASH_AFTER=after-effect-write:3 node agent.js") and crash.stderr == ""
    resume = run_agent_process(tmp_path, agent=LESSON_AGENT, resume=True)
    assert "".join(resume.stdout.splitlines()) == transcript("node agent.js --resume")
    assert (resume.returncode, resume.stderr) == (0, "")


@pytest.mark.slow
def test_the_lessons_agent_passes_the_lesson_tier():
    rows = rows_of(LESSON_PIECES)
    assert rows and [row for row in rows if row.status != OK] == []


@pytest.mark.slow
def test_the_production_tier_names_the_defences_the_lessons_agent_lacks():
    failed = {row.section for row in rows_of(PRODUCTION_PIECES) if row.status == FAILED}
    assert "" not in failed  # cada fila de producción nombra su sección
    assert len(failed) >= MIN_MISSING_DEFENCES, failed

"""La suite que se instala con el paquete (``harness.conformidad``), sobre cada agente: la misma que
corre ``python -m harness.conformidad RUTA`` y el taller. Aquí, cada fila de los dos niveles tiene que
pasar; la matriz de las 12 etiquetas se afirma solo aquí (las demás pruebas la llaman). Cada nivel corre
una vez: de la misma corrida salen las filas y el informe que imprime la línea de comandos
(``tests/test_conformidad_cli.py`` prueba la línea de comandos con piezas sueltas)."""

import pytest

from harness.conformidad.checks import CAPABILITIES, LESSON_PIECES, PRODUCTION_PIECES
from harness.conformidad.checks.production import SECTIONS
from harness.conformidad.processes import Context
from harness.conformidad.report import report_text
from harness.conformidad.rows import FAILED, NOT_YET, OK
from harness.conformidad.suite import run_suite
from harness.scenario import LABELS

# El aviso del registro bajo un SIGKILL: su propia prueba, que nombra la fila.
HELD_WARNING = "aviso-sigkill"


def rows_of(agent, pieces):
    return [row for _, rows in run_suite(Context(agent, {}), pieces) for row in rows]


@pytest.mark.slow
def test_every_row_of_the_lesson_tier_passes_at_every_label(agent):
    results = list(run_suite(Context(agent, {}), LESSON_PIECES))
    rows = [row for _, piece_rows in results for row in piece_rows]
    assert [row for row in rows if row.status != OK] == []
    crash_rows = [row for row in rows if row.scenario.startswith("caída en ")]
    # Cada etiqueta, en puntos o registro, en reconcile y en caidas.
    assert {label for label in LABELS if sum(label in row.scenario for row in crash_rows) >= 3} == set(LABELS)
    # El informe dice qué comprobó cada pieza, solo del nivel de la lección, y termina en todo ✓.
    text = report_text(results)
    assert text.count("comprueba: ") >= len(LESSON_PIECES) and "✗" not in text
    assert "(nivel producción)" not in text and text.splitlines()[-1].endswith("✓")


@pytest.mark.slow
def test_every_row_of_the_production_tier_passes_and_names_its_section(agent):
    pieces = [p for p in PRODUCTION_PIECES if p != HELD_WARNING]
    rows = rows_of(agent, pieces)
    assert rows and [row for row in rows if row.status != OK] == []
    # Cada fila nombra una sección de «De la lección a producción» (tests/test_conformidad_cli.py: los
    # títulos del notebook).
    assert all(row.section in SECTIONS for row in rows)


@pytest.mark.slow
def test_the_ledger_warning_survives_a_sigkill(agent):
    assert [row.status for row in rows_of(agent, [HELD_WARNING])] == [OK]


def test_every_capability_lists_what_it_checks_and_has_rows():
    assert all(c.checks and c.rows for c in CAPABILITIES.values())


def test_a_capability_that_yields_no_rows_fails(monkeypatch, agent):
    from harness.conformidad import suite

    monkeypatch.setattr(suite, "rows_of", lambda piece, ctx: ())
    [(_, rows)] = run_suite(Context(agent, {}), ["terminal"])
    assert [row.status for row in rows] == [FAILED]


def test_a_half_written_agent_is_not_yet_never_failed(tmp_path, agent):
    """Lo que el agente dice que todavía no escribió sale «todavía no», nunca ✗."""
    from harness.contract import NOT_WRITTEN

    source = (
        open(agent, encoding="utf-8")
        .read()
        .replace(
            "def load_checkpoint():  # tu turno\n",
            f"def load_checkpoint():  # tu turno\n    raise NotImplementedError('{NOT_WRITTEN} load_checkpoint')\n",
        )
    )
    half = tmp_path / "agent.py"
    half.write_text(source, encoding="utf-8")
    rows = rows_of(str(half), ["lectura"])
    assert {row.status for row in rows} == {NOT_YET}

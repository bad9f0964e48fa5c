"""Cortes de luz: los estados que POSIX permite dejar en disco, y que el agente los carga y reanuda.

Los cuatro estados que el estudio encontró alcanzables (un reporte cortado con su título, un reporte
en ceros, ningún report.txt tras ``[done]``, dos copias en una corrida nueva sobre una terminada) ya no
lo son: cada prueba los busca entre todos los estados del modelo (``harness/runs/power_cut.py``) de
la corrida real, y comprueba que el modelo sí los encuentra en la forma de escribir de antes. La
cuenta completa: ``python -m benchmarks.power_cut``.
"""

import json

import pytest

from harness.contract import FINISHED
from harness.runs.power_cut import Op, crash_states
from harness.tools import REPORT_DAMAGED, REPORT_TITLE, run_tool
from maintainer import faults
from maintainer.crash_states import check_state, scenario_states

pytestmark = [pytest.mark.needs_strace, pytest.mark.slow]

FRESH, OVER_DONE = faults.scenarios()[0], faults.scenarios()[1]
RESUME_BEFORE_WRITE = faults.Scenario("--resume tras after-save-a:3", "after-save-a:3", True)


@pytest.fixture(scope="module")
def states(agent, tmp_path_factory):
    """{escenario: estados} de la corrida nueva, la nueva sobre una terminada y el --resume que
    escribe el reporte."""
    base = str(tmp_path_factory.mktemp("cortes"))
    chosen = [FRESH, OVER_DONE, RESUME_BEFORE_WRITE]
    return {s: scenario_states(s, d, agent)[0] for s, d in faults.templates(base, agent, chosen).items()}


def reports(found):
    return [s["report.txt"] for s in found if "report.txt" in s]


def complete_copies(report):
    text = report.decode("utf-8")
    return text.count(REPORT_TITLE) if text and not text.replace(REPORT_TITLE, "").startswith("\0") else -1


def test_no_state_has_a_torn_or_zero_filled_report(states, agent):
    expected = faults.expected_report(agent)
    for found in states.values():
        for report in reports(found):
            # El reporte se escribe entero de forma atómica: o el de antes, o el nuevo completo.
            assert report in (b"", expected, expected * 2) and b"\0" not in report


def test_no_state_is_done_without_its_report(states):
    for found in states.values():
        for state in found:
            cp = json.loads(state.get("checkpoint.json") or b"null")
            if cp and FINISHED in cp:
                assert state.get("report.txt", b"").count(REPORT_TITLE.encode()) == 1


def test_no_fresh_run_over_a_finished_one_keeps_the_old_report_with_a_new_checkpoint(states):
    """Antes de que la corrida nueva llegue a write_report (turnos 1 y 2), el reporte viejo ya no
    está: si quedara, reanudar escribiría una segunda copia."""
    for state in states[OVER_DONE]:
        cp = json.loads(state.get("checkpoint.json") or b"null")
        report = state.get("report.txt", b"")
        assert report.count(REPORT_TITLE.encode()) <= 1
        if cp and FINISHED not in cp and cp["turns"] < 3:
            assert "report.txt" not in state


def test_a_sample_of_states_loads_and_resumes_to_exactly_one_report(states, agent):
    expected = faults.expected_report(agent)
    for found in states.values():
        assert len(found) > 10
        for state in found[:: max(1, len(found) // 6)]:
            assert check_state(state, agent, expected) == [], sorted(state)


# —— El modelo sí encuentra esos estados en la forma de escribir de antes ——


def test_the_model_finds_two_copies_when_unlinks_are_not_synced():
    """La corrida nueva de antes: borrar el reporte viejo sin fsync del directorio y guardar el punto A."""
    initial = {"report.txt": b"viejo", "checkpoint.json": b"{}"}
    ops = [
        Op("unlink", "checkpoint.json"),
        Op("unlink", "report.txt"),
        Op("link", "checkpoint.json.tmp", inode=2),
        Op("write", inode=2, data=b"nuevo"),
        Op("fsync", inode=2),
        Op("rename", "checkpoint.json.tmp", "checkpoint.json"),
        Op("dirsync"),
    ]
    found, _ = crash_states(ops, initial)
    assert {"report.txt": b"viejo", "checkpoint.json": b"nuevo"} in found  # el borrado perdido
    synced = ops[:2] + [Op("dirsync")] + ops[2:]
    assert not any(
        s.get("report.txt") == b"viejo" and s.get("checkpoint.json") == b"nuevo"
        for s in crash_states(synced, initial)[0]
    )


def test_the_model_finds_torn_and_zero_filled_appends_and_a_missing_entry():
    """El write_report de antes: agregar al final con fsync del archivo, sin fsync del directorio."""
    ops = [Op("link", "report.txt", inode=0), Op("write", inode=0, data=b"# Reporte de ventas\nabc\n")]
    found, _ = crash_states(ops, {})
    text = b"# Reporte de ventas\nabc\n"
    assert {"report.txt": text[:12]} in found  # cortado, con su título
    assert {"report.txt": text[:12] + bytes(12)} in found  # la mitad y el resto en ceros
    assert {"report.txt": bytes(24)} in found  # el tamaño nuevo en ceros
    synced_file = ops + [Op("fsync", inode=0)]
    assert {} in crash_states(synced_file, {})[0]  # sin fsync del directorio, la entrada puede faltar


@pytest.mark.parametrize(
    "text",
    [
        "# Reporte de ventas\n\nFuente: x.\nClientes con novedades: 2.\n- A\n",
        "\0" * 40,
        "# Reporte de ventas\n\nFuen",
    ],
)
def test_check_report_does_not_accept_a_torn_or_zero_filled_report(tmp_path, monkeypatch, text):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.txt").write_text(text, encoding="utf-8")
    assert run_tool("check_report", {"path": "report.txt"}).endswith(REPORT_DAMAGED)

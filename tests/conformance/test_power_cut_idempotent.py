"""Cortes de luz en la variante idempotente (``AGENT_VARIANT=idempotente``): cumple las promesas de la
variante por omisión (issue 26). Sus estados entran al mismo modelo POSIX (``harness/runs/power_cut.py``)
que los de ``test_power_cut.py``: ninguno tiene un reporte cortado o en ceros, ninguno dice «terminada»
sin su reporte, y todos cargan y se reanudan a una sola copia. Y un reporte que un corte dejó dañado
donde iba lo de la clave (el tamaño llegó al disco, los datos no) se repara; uno con texto ajeno se
informa con una salida clara, nunca un bucle de salida 1.
"""

import json

import pytest

from harness.contract import FINISHED
from harness.tools import REPORT_TITLE, report_copies
from maintainer import faults
from maintainer.crash_states import check_state, scenario_states

VARIANT = {"AGENT_VARIANT": "idempotente"}
FRESH = faults.scenarios()[0]
RESUME_BEFORE_WRITE = faults.Scenario("--resume tras after-save-a:3", "after-save-a:3", True)


@pytest.fixture(scope="module")
def idempotent_env():
    """Cada corrida de ``maintainer.faults`` (preparar, grabar, reanudar) con la variante idempotente."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(faults.STABLE_ENV, "AGENT_VARIANT", VARIANT["AGENT_VARIANT"])
        yield


@pytest.fixture(scope="module")
def states(agent, tmp_path_factory, idempotent_env):
    base = str(tmp_path_factory.mktemp("cortes-idem"))
    chosen = [FRESH, RESUME_BEFORE_WRITE]
    return {s: scenario_states(s, d, agent)[0] for s, d in faults.templates(base, agent, chosen).items()}


@pytest.mark.needs_strace
@pytest.mark.slow
def test_no_power_cut_state_violates_the_contract(states, agent, idempotent_env):
    expected = faults.expected_report(agent)
    for found in states.values():
        assert len(found) > 10
        for state in found:
            report = state.get("report.txt")
            if report is not None:  # entero, de forma atómica: o el de antes, o el nuevo completo
                assert report in (b"", expected) and b"\0" not in report
            cp = json.loads(state.get("checkpoint.json") or b"null")
            if cp and FINISHED in cp:  # una tarea terminada tiene su reporte en disco
                assert state.get("report.txt", b"").count(REPORT_TITLE.encode()) == 1
        for state in found[:: max(1, len(found) // 6)]:
            assert check_state(state, agent, expected) == [], sorted(state)


def crashed_before_write(run, workdir):
    """Una corrida idempotente muerta en el punto A de write_report (la clave sin reservar todavía)."""
    assert run(workdir, crash_after="after-save-a:3", variant="idempotente").killed
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    return cp["pendingToolUse"]["id"]


def test_a_zero_filled_report_after_a_power_cut_is_repaired(run, workdir, agent):
    """La forma de escribir de antes (en su lugar): el tamaño nuevo llegó al disco, los datos no."""
    key = crashed_before_write(run, workdir)
    expected = faults.expected_report(agent)
    (workdir / "report.txt.claves.json").write_text(
        json.dumps({key: {"offset": 0, "bytes": len(expected)}}), encoding="utf-8"
    )
    (workdir / "report.txt").write_bytes(bytes(len(expected)))
    done = run(workdir, resume=True, variant="idempotente")
    assert done.returncode == 0, done.stderr
    assert (workdir / "report.txt").read_bytes() == expected


def test_a_report_with_foreign_text_is_one_line_with_a_way_out(run, workdir):
    key = crashed_before_write(run, workdir)
    (workdir / "report.txt.claves.json").write_text(
        json.dumps({key: {"offset": 0, "bytes": 10}}), encoding="utf-8"
    )
    (workdir / "report.txt").write_text("texto de otra persona que no es el reporte\n", encoding="utf-8")
    done = run(workdir, resume=True, variant="idempotente")
    # El modelo recibe el error y verifica; lo que no hace es escribir encima del texto ajeno.
    assert "texto de otra persona" in (workdir / "report.txt").read_text(encoding="utf-8")
    if done.returncode != 0:
        assert done.stderr.count("\n") == 1 and "sin --resume" in done.stderr, done.stderr
    fresh = run(workdir, variant="idempotente")  # la salida que da la línea: empezar de nuevo
    assert fresh.returncode == 0 and report_copies(workdir / "report.txt") == 1

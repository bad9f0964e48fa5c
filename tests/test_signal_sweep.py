"""Una señal antes de cada llamada al sistema (issue 34): ninguna corrida muere en silencio.

Una muestra del barrido de ``maintainer.signal_sweep`` en cada prueba: SIGTERM antes de llamadas
elegidas de una corrida nueva del agente de referencia, desde que la sesión pone sus manejadores hasta
la última llamada del proceso, con más densidad en el final (donde antes morían sin línea: tras
devolver los manejadores, alrededor del ``[done]``). El barrido completo: ``python -m
benchmarks.signal_sweep``.
"""

import pytest

from harness.beyond import dbos_agent
from harness.beyond.engine_view import DATABASE
from harness.contract import EXIT_TERMINATED
from maintainer import signal_sweep
from maintainer.paths import REFERENCE_AGENT

pytestmark = pytest.mark.needs_strace


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    base = tmp_path_factory.mktemp("senales")
    scenario = signal_sweep.scenario_named("nueva")
    template = signal_sweep.template_for(str(base), scenario, REFERENCE_AGENT)
    before, points = signal_sweep.kill_points(template, REFERENCE_AGENT, scenario.resume)
    return template, scenario, before, points


def sample(points):
    """Las primeras, una de cada tanto en el medio, y las últimas 12 (el [done] y la salida)."""
    return sorted({*points[:3], *points[3:-12:60], *points[-12:]}, key=lambda p: p.index)


def test_the_run_is_protected_from_its_session_to_its_last_syscall(plan):
    _, _, before, points = plan
    assert points and points[-1].syscall == "exit_group"  # la última llamada del proceso también cuenta
    assert len(points) > 100 and before > 0


@pytest.mark.slow
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_before_sampled_syscalls_always_ends_with_a_line(plan, signame):
    template, scenario, _, points = plan
    found = {}
    for point in sample(points) if signame == "SIGTERM" else points[-12:]:
        result = signal_sweep.signalled(template, REFERENCE_AGENT, scenario.resume, point, signame)
        problems = signal_sweep.problems(result, signame)
        if problems:
            found[point] = problems
    assert found == {}


def test_a_sigterm_in_the_last_syscalls_ends_with_a_line(plan):
    template, scenario, _, points = plan
    for point in points[-6:]:
        result = signal_sweep.signalled(template, REFERENCE_AGENT, scenario.resume, point)
        assert signal_sweep.problems(result) == [], (point, result)


@pytest.mark.slow  # seis corridas del agente de DBOS bajo strace
def test_a_signal_while_the_engine_closes_its_database_is_one_line(tmp_path):
    """El agente de DBOS, corrida nueva: SIGTERM antes de cada ``close`` de su base (el motor, y SQLAlchemy
    debajo, cierran sus conexiones al preparar la base y al terminar). SQLAlchemy anotaba en stderr la
    traza de la señal que interrumpía el cierre; ahora, cada corrida termina con su línea o con [done]."""
    scenario = signal_sweep.scenario_named("nueva")
    template = signal_sweep.template_for(str(tmp_path), scenario, dbos_agent.__file__)
    codes = []
    for when in range(1, 7):
        point = signal_sweep.Point(0, "close", when)
        result = signal_sweep.signalled(template, dbos_agent.__file__, scenario.resume, point, path=DATABASE)
        assert signal_sweep.problems(result) == [], (when, result[2][-2000:])
        codes.append(result[0])
    assert codes.count(EXIT_TERMINATED) >= 3, codes  # la señal llegó de verdad durante esos cierres

"""El aviso de un registro que no se pudo escribir sale en el acto, como el ``console.error`` de la
lección: con ENOSPC en la primera escritura del registro y un SIGKILL de verdad en el turno 2, la línea
ya está en stderr. Guardarla para el final la perdería en la misma caída para la que existe el registro.
Vale para los dos agentes del curso."""

import os
import signal

import pytest

from harness.runs.launcher import start_agent_process
from harness.runs.strace_log import strace_prefix
from maintainer.paths import LESSON_AGENT, REFERENCE_AGENT

WARNING = "[falló la escritura del registro] tool_use_id=toolu_01: el efecto secundario ya ocurrió"


def traced_child(pid):
    """El pid del agente que corre bajo strace (su único hijo)."""
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
        children = f.read().split()
    return int(children[0]) if children else None


@pytest.mark.needs_strace
@pytest.mark.parametrize("agent_path", [LESSON_AGENT, REFERENCE_AGENT], ids=["leccion", "referencia"])
def test_the_warning_is_on_stderr_before_a_sigkill_at_turn_2(tmp_path, agent_path):
    # La primera apertura del temporal del registro falla como con el disco lleno.
    # (-P con el nombre relativo, como lo abre el agente, y con el absoluto)
    inject = ["-P", "effects.json.tmp", "-P", os.fspath(tmp_path / "effects.json.tmp"), "-e", "trace=openat"]
    inject += ["-e", "inject=openat:error=ENOSPC:when=1"]
    proc = start_agent_process(tmp_path, agent=agent_path, prefix=strace_prefix(os.devnull, inject))
    try:
        # El SIGKILL llega cuando el agente anuncia el punto A del turno 2: un evento, no un tiempo.
        for line in proc.stdout:
            if line.startswith("[turn 2][save A]"):
                os.kill(traced_child(proc.pid), signal.SIGKILL)
                break
        else:
            pytest.fail(f"el agente terminó sin llegar al turno 2: {proc.stderr.read()}")
        stderr = proc.stderr.read()
    finally:
        proc.kill()
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    assert WARNING in stderr, stderr
    assert "[done]" not in stderr and "Traceback" not in stderr

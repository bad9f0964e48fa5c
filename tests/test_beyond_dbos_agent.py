"""El agente sobre DBOS, muerto de verdad (código 137) en cada punto de caída y retomado en otro proceso.

Las caídas en cada punto corren como en el notebook, cada proceso nacido del servidor que ya importó DBOS
(``dbos_preload``: sin pagar el import en cada una); las demás pruebas, como las lanza quien no tiene el
servidor. Que las dos formas se comportan igual lo prueba ``tests/test_beyond_preload.py``."""

import os

import pytest

from harness.beyond import dbos_agent
from harness.runs.launcher import run_agent_process
from harness.tools import report_copies

AGENT = dbos_agent.__file__
KINDS = ("after-save-a", "after-tool", "after-effect-write", "after-save-b")
EVERY_POINT = [f"{kind}:{n}" for n in (1, 2, 3) for kind in KINDS]
# Qué hace el motor con el paso que la caída dejó abierto (BRANCH_MARKERS del agente).
EXPECTED = {
    "after-save-a": "rerun",
    "after-tool": "rerun",
    "after-effect-write": "hit",
    "after-save-b": "hit",
}


def branch(stdout):
    return next((b for b, marker in dbos_agent.BRANCH_MARKERS.items() if marker in stdout), None)


def crash_and_resume(workdir, label, variant, env):
    crashed = run_agent_process(workdir, agent=AGENT, crash_after=label, variant=variant, env=env)
    assert crashed.returncode == 137, crashed.stderr
    assert f"[kill] caída simulada en {label}" in crashed.stdout
    resumed = run_agent_process(workdir, agent=AGENT, resume=True, variant=variant, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "[done] Reporte escrito en report.txt, tarea completa." in resumed.stdout
    return resumed, report_copies(os.path.join(workdir, "report.txt"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_at_least_once_write_report(tmp_path, kind, dbos_preload):
    """Sin clave, la ventana ② del tercer turno deja dos copias: el motor vuelve a ejecutar el paso."""
    resumed, copies = crash_and_resume(tmp_path, f"{kind}:3", "al-menos-una-vez", dbos_preload)
    assert branch(resumed.stdout) == EXPECTED[kind]
    assert copies == (2 if kind == "after-tool" else 1)


@pytest.mark.slow
@pytest.mark.parametrize("label", EVERY_POINT)
def test_idempotent_write_report_one_copy_after_every_point(tmp_path, label, dbos_preload):
    resumed, copies = crash_and_resume(tmp_path, label, "idempotente", dbos_preload)
    assert branch(resumed.stdout) == EXPECTED[label.split(":")[0]]
    # La línea del motor nombra el turno de la caída (el laboratorio la dibuja en ese turno).
    assert f"[resume][dbos] turn={label.split(':')[1]} " in resumed.stdout
    assert copies == 1


def test_fresh_run_and_resume_of_a_finished_flow(tmp_path):
    done = run_agent_process(tmp_path, agent=AGENT)
    assert done.returncode == 0 and report_copies(os.path.join(tmp_path, "report.txt")) == 1
    again = run_agent_process(tmp_path, agent=AGENT, resume=True)
    assert again.returncode == 0 and "ya había terminado" in again.stdout
    assert report_copies(os.path.join(tmp_path, "report.txt")) == 1


def test_resume_without_a_flow_is_one_clear_line(tmp_path):
    run = run_agent_process(tmp_path, agent=AGENT, resume=True)
    assert run.returncode == 1
    assert (
        run.stderr.strip() == "No se encuentra dbos-flujo.txt; no hay ningún flujo desde donde hacer --resume"
    )

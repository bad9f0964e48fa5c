"""Varias llamadas por turno: una caída en cada punto de cada lote deja una copia de cada efecto."""

import json
import os

import pytest

from harness.beyond import batch_agent
from harness.contract import LESSON_AGENT_VAR
from harness.protocol import pairing_error
from harness.runs.launcher import run_agent_process
from harness.tools import report_copies
from maintainer.paths import REFERENCE_AGENT

AGENT = batch_agent.__file__
# El agente de lotes reúsa las piezas del de la lección: el de referencia.
LESSON = {LESSON_AGENT_VAR: REFERENCE_AGENT}
# Turno 1: read_notes + count_words; turno 2: write_report ×2 (llamadas 3 y 4).
EVERY_POINT = ["after-save-a:1", "after-save-a:2", "after-save-b:1", "after-save-b:2"]
EVERY_POINT += [f"{kind}:{n}" for kind in ("after-tool", "after-effect-write") for n in (1, 2, 3, 4)]


def copies(workdir):
    return [report_copies(os.path.join(workdir, name)) for name in ("report.txt", "resumen.txt")]


def test_fresh_run_asks_for_two_tools_per_turn(tmp_path):
    run = run_agent_process(tmp_path, agent=AGENT, env=LESSON)
    assert run.returncode == 0, run.stderr
    assert "[turn 1][save A] pending=read_notes,count_words" in run.stdout
    assert "[turn 2][save A] pending=write_report,write_report" in run.stdout
    assert copies(tmp_path) == [1, 1]


@pytest.mark.parametrize("variant", batch_agent.VARIANTS)
@pytest.mark.parametrize("label", EVERY_POINT)
def test_one_copy_of_each_side_effect_after_every_point(tmp_path, label, variant):
    crashed = run_agent_process(tmp_path, agent=AGENT, crash_after=label, variant=variant, env=LESSON)
    assert crashed.returncode == 137 and f"[kill] caída simulada en {label}" in crashed.stdout
    resumed = run_agent_process(tmp_path, agent=AGENT, resume=True, variant=variant, env=LESSON)
    assert resumed.returncode == 0, resumed.stderr
    assert copies(tmp_path) == [1, 1]
    cp = json.loads((tmp_path / "checkpoint.json").read_text(encoding="utf-8"))
    assert cp["pendingToolUse"] == [] and pairing_error(cp["messages"]) is None
    # Con clave, una escritura sin anotación se vuelve a ejecutar: nunca hace falta is_error.
    if variant == "idempotente":
        assert "agregando is_error" not in resumed.stdout


def test_a_crash_mid_batch_reconciles_each_call(tmp_path):
    """Muere tras escribir report.txt (anotado) y resumen.txt (sin anotar): una rama por llamada."""
    run_agent_process(tmp_path, agent=AGENT, crash_after="after-tool:4", env=LESSON)
    resumed = run_agent_process(tmp_path, agent=AGENT, resume=True, env=LESSON)
    lines = [line for line in resumed.stdout.splitlines() if line.startswith("[resume][reconcile]")]
    assert lines == [
        "[resume][reconcile] tool_use_id=toolu_03 name=write_report acierto en el registro, reutilizando "
        "resultado, sin volver a ejecutar",
        "[resume][reconcile] tool_use_id=toolu_04 name=write_report fallo en el registro con efectos "
        "secundarios, no resoluble, agregando is_error",
    ]


def test_a_lesson_checkpoint_is_refused(tmp_path):
    (tmp_path / "checkpoint.json").write_text(json.dumps({"version": 1}), encoding="utf-8")
    run = run_agent_process(tmp_path, agent=AGENT, resume=True, env=LESSON)
    assert run.returncode == 1 and "solo acepta version=2" in run.stderr


def test_the_turn_limit_is_exit_1_and_resume_goes_on(tmp_path):
    """Como en la lección (issue 26): el tope de turnos no es un final del modelo; cada corrida tiene el
    suyo y --resume termina la tarea."""
    stopped = run_agent_process(tmp_path, agent=AGENT, env={**LESSON, "AGENT_MAX_TURNS": "1"})
    assert stopped.returncode == 1 and stopped.stderr.count("\n") == 1, stopped.stderr
    assert stopped.stderr.startswith("Se alcanzó el máximo de 1 turnos, deteniéndonos por nuestra cuenta")
    assert "[done]" not in stopped.stdout
    resumed = run_agent_process(tmp_path, agent=AGENT, resume=True, env=LESSON)
    assert resumed.returncode == 0 and "[done]" in resumed.stdout, resumed.stderr

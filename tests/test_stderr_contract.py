"""Un evento, una línea (issue 47): el contrato de stderr de ``docs/agente.md``, comprobado sobre las
clases del barrido de fallas (SIGKILL, ENOSPC, EIO, EACCES en una llamada que toca el directorio) y
sobre los avisos del agente (el del registro, el de las credenciales) seguidos de un error."""

import os

import pytest

from harness.defenses.session import stderr_problems
from harness.runs.launcher import run_agent_process
from maintainer import faults
from maintainer.paths import REFERENCE_AGENT

WARNING = "[falló la escritura del registro] tool_use_id=toolu_01: el efecto secundario ya ocurrió\n"
FINAL = "No se pudo escribir en checkpoint.json.tmp: el disco está lleno.\n"


@pytest.mark.parametrize(
    ("stderr", "ok"),
    [
        ("", True),
        (FINAL, True),
        (WARNING, True),
        (WARNING + FINAL, True),
        ("[credenciales] las dos definidas\n" + WARNING + FINAL, True),
        (FINAL + FINAL, False),  # dos líneas finales
        (FINAL + WARNING, False),  # un aviso después del final
        (FINAL.rstrip("\n"), False),
        ("Traceback (most recent call last):\n  File x\nValueError: y\n", False),
        ("Exception ignored in: <x>\n" + FINAL, False),
    ],
)
def test_the_contract_accepts_warnings_then_at_most_one_final_line(stderr, ok):
    assert (stderr_problems(stderr) == []) == ok, stderr_problems(stderr)


# Dos escenarios del barrido: una corrida nueva (crea, escribe, borra) y un --resume que rellena el
# punto B; de cada uno, unas pocas fallas de cada clase (la cuenta completa: benchmarks.fault_sweep).
SCENARIOS = ("nueva", "--resume tras after-tool:2")
PER_FAULT = 3


@pytest.mark.slow
@pytest.mark.needs_strace
@pytest.mark.parametrize(
    "scenario", [s for s in faults.scenarios() if s.name in SCENARIOS], ids=lambda s: s.name
)
def test_every_fault_class_of_the_sweep_keeps_the_stderr_contract(scenario, tmp_path):
    """``faults.run_trial`` ya exige el contrato (``output_problems``) en la corrida con la falla y en
    cada reanudación; aquí, además, que la muestra cubre cada clase de falla y que hubo algún error."""
    agent = REFERENCE_AGENT
    expected = faults.expected_report(agent)
    template = faults.templates(str(tmp_path), agent, [scenario])[scenario]
    trials = faults.plan(scenario, template, agent)
    sample = []
    for fault in faults.FAULTS:
        of_fault = [t for t in trials if t.fault == fault]
        sample += of_fault[:: max(1, len(of_fault) // PER_FAULT)][:PER_FAULT]
    assert {t.fault for t in sample} == set(faults.FAULTS)
    for trial in sample:
        assert faults.run_trial(trial, template, agent, expected) == [], trial


def test_both_credentials_and_a_failure_are_a_notice_then_one_line(tmp_path, monkeypatch):
    """Con las dos credenciales definidas, el aviso sale cuando ocurre; la falla que sigue (una API que
    no responde) es la única línea final."""
    pytest.importorskip("anthropic")
    for name in [k for k in os.environ if k.startswith("ANTHROPIC_")]:
        monkeypatch.delenv(name)
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-prueba",
        "ANTHROPIC_AUTH_TOKEN": "token-prueba",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # el puerto discard: nadie escucha
        "ANTHROPIC_MAX_RETRIES": "0",
        "ANTHROPIC_TIMEOUT": "5",
    }
    done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, live=True, env=env)
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and stderr_problems(done.stderr) == [], done.stderr
    assert len(lines) == 2 and lines[0].startswith("[credenciales]"), done.stderr


@pytest.mark.parametrize("saved", [True, False], ids=["con-punto-de-control", "sin-nada-guardado"])
def test_the_lines_name_live_only_when_the_run_used_it(tmp_path, monkeypatch, saved):
    """Una corrida guionada no dice «--live» en su línea; una con el modelo real, sí."""
    from harness.defenses.clients import make_client
    from harness.defenses.replies import interrupted, resume_hint

    monkeypatch.chdir(tmp_path)
    if saved:
        (tmp_path / "checkpoint.json").write_text("{}", encoding="utf-8")
    make_client(False)
    lines = (resume_hint(), interrupted())
    assert all("--live" not in line for line in lines), lines
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-prueba")
    pytest.importorskip("anthropic")
    make_client(True)
    assert "--live" in resume_hint() and ("--live --resume" in interrupted()) == saved
    make_client(False)

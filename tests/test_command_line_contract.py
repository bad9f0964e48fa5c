"""Una sola línea de comandos: el agente de la lección, el de lotes y el de DBOS aceptan las mismas
banderas, eligen la variante en ``AGENT_VARIANT`` y salen con los mismos códigos (``harness.contract``):
2 con una línea mal escrita, 137 en una caída, 130 con Ctrl-C, 143 con SIGTERM, 129 con SIGHUP, 1 con
un problema esperado, 0 con ``[done]``; cada problema, una sola línea en español y sin tocar el disco si no hacía falta."""

import os
import subprocess
import sys

import pytest

from harness import contract
from harness.beyond import batch_agent, dbos_agent
from harness.beyond.parallel_model import ParallelScriptedModel
from harness.contract import LESSON_AGENT_VAR
from harness.runs.launcher import run_agent_process
from harness.scripted_model import ScriptedModel
from maintainer.paths import REFERENCE_AGENT
from tests.fake_messages_api import TEST_KEY, FakeMessagesAPI, signal_while_waiting

AGENTS = {
    "leccion": (REFERENCE_AGENT, {}),
    "lote": (batch_agent.__file__, {LESSON_AGENT_VAR: REFERENCE_AGENT}),
    "dbos": (dbos_agent.__file__, {}),
}


@pytest.fixture(params=list(AGENTS))
def runnable(request):
    return AGENTS[request.param]


def one_line(text):
    return text.endswith("\n") and text.count("\n") == 1 and "Traceback" not in text


@pytest.mark.parametrize(
    "args, variant, start",
    [
        (["--reanudar"], None, "Argumento desconocido: --reanudar. uso: "),
        (["--resume", "-x"], None, "Argumento desconocido: -x. uso: "),
        ([], "otra", "AGENT_VARIANT=otra no es una variante conocida: usa "),
    ],
)
def test_a_bad_command_line_is_one_line_and_exit_2(tmp_path, runnable, args, variant, start):
    path, env = runnable
    env = {
        **os.environ,
        **env,
        "AGENT_WORKDIR": str(tmp_path),
        **({"AGENT_VARIANT": variant} if variant else {}),
    }
    done = subprocess.run([sys.executable, path, *args], env=env, capture_output=True, text=True)
    assert done.returncode == contract.EXIT_USAGE and done.stderr.startswith(start) and one_line(done.stderr)
    assert os.listdir(tmp_path) == []  # nada se tocó


def test_a_crash_is_137_and_its_kill_line(tmp_path, runnable):
    path, env = runnable
    run = run_agent_process(tmp_path, agent=path, env=env, crash_after="after-save-a:1")
    assert run.returncode == contract.EXIT_KILLED
    assert run.stdout.splitlines()[-1] == contract.kill_line(contract.crash_message("after-save-a:1"))
    done = run_agent_process(tmp_path, agent=path, env=env, resume=True)
    assert done.returncode == contract.EXIT_DONE and contract.done_text(done.stdout), done.stderr


def test_nothing_to_resume_is_one_line_and_exit_1(tmp_path, runnable):
    path, env = runnable
    run = run_agent_process(tmp_path, agent=path, env=env, resume=True)
    assert run.returncode == contract.EXIT_FAILED and one_line(run.stderr) and run.stdout == ""


STOPS = {
    "SIGINT": (contract.EXIT_INTERRUPTED, "Ctrl-C"),
    "SIGTERM": (contract.EXIT_TERMINATED, "SIGTERM"),
    "SIGHUP": (contract.EXIT_HANGUP, "SIGHUP"),
}


# Cada agente con una señal y cada señal una vez (con el SDK real, cada corrida tarda): las tres señales
# comparten el manejo (harness.defenses.early_signals, harness.defenses.session); las tres sobre el agente de referencia,
# esperando al modelo, las afirma la suite (nivel de producción, «senales»: test_conformidad.py).
AGENT_AND_STOP = [("leccion", "SIGINT"), ("lote", "SIGTERM"), ("dbos", "SIGHUP")]


@pytest.mark.slow  # el SDK real, dos corridas y la espera al modelo
@pytest.mark.parametrize("agent_name, stop", AGENT_AND_STOP)
def test_a_stop_signal_while_waiting_for_the_model_is_one_line_and_its_code(
    tmp_path, monkeypatch, agent_name, stop
):
    """Con el SDK real contra una API local que no contesta la segunda llamada: la señal (Ctrl-C,
    SIGTERM de kill o de systemd, SIGHUP de una terminal que se cierra) cuando el agente ya espera (un
    evento, no una demora): una línea, 130 / 143 / 129, y después --resume termina la tarea."""
    code, named = STOPS[stop]
    path, env = AGENTS[agent_name]
    for name in [n for n in os.environ if n.startswith("ANTHROPIC_")]:
        monkeypatch.delenv(name)
    # El agente de lotes pide su tarea de dos archivos: responde su guion, que los escribe.
    script = ParallelScriptedModel if path == batch_agent.__file__ else ScriptedModel
    with FakeMessagesAPI(script=script) as api:
        live = {**env, "ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": api.base_url}
        run = signal_while_waiting(api, tmp_path, path, stop, env=live)
        assert run.returncode == code and one_line(run.stderr), run.stderr
        assert named in run.stderr and "Traceback" not in run.stdout
        api.release()
        resumed = run_agent_process(tmp_path, agent=path, env=live, resume=True, live=True, timeout=120)
        assert resumed.returncode == contract.EXIT_DONE, resumed.stderr

"""Los bordes del SDK real (issue 26), con procesos reales contra la API de mensajes local: ningún aviso
de una biblioteca llega a quien usa el agente, un ``retry-after`` largo dice lo que pidió la API y lo que
hizo el agente, SIGTERM y SIGHUP se portan como Ctrl-C, un proxy que falla se nombra como proxy, y un
``ANTHROPIC_AUTH_TOKEN`` solo (lo que el SDK acepta) alcanza; ninguna credencial se imprime."""

import json
import os
import socket

import pytest

from harness import contract
from harness.runs.launcher import run_agent_process
from harness.tools import report_copies
from maintainer.paths import REFERENCE_AGENT
from tests.fake_messages_api import TEST_KEY, FakeMessagesAPI, signal_while_waiting, with_tool_use

DONE = "[done] Reporte escrito en report.txt, tarea completa.\n"
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture
def api(monkeypatch):
    """La API local, y un entorno sin ANTHROPIC_* ni proxies de quien corre las pruebas."""
    for name in [n for n in os.environ if n.startswith("ANTHROPIC_") or n.upper() in PROXIES]:
        monkeypatch.delenv(name)
    with FakeMessagesAPI() as server:
        yield server


def live(api, **extra):
    return {"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": api.base_url, **extra}


def one_line(text):
    return text.endswith("\n") and text.count("\n") == 1 and "Traceback" not in text


def resumes(tmp_path, env):
    done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, env=env, resume=True, live=True, timeout=120)
    assert done.returncode == 0 and done.stdout.endswith(DONE), done.stderr
    assert report_copies(tmp_path / "report.txt") == 1
    return done


def test_an_input_that_is_not_an_object_is_one_spanish_line_and_no_warning(tmp_path, api):
    api.reply_hook = with_tool_use(input=["notes.txt"])
    done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, env=live(api), live=True, timeout=120)
    assert done.returncode == 1 and one_line(done.stderr), done.stderr
    assert "no es un objeto" in done.stderr and "Warning" not in done.stderr and "pydantic" not in done.stderr
    api.reply_hook = None
    resumes(tmp_path, live(api))


def test_a_retry_after_of_an_hour_names_what_the_api_asked(tmp_path, api):
    """La API contesta enseguida «429, reintenta en 3600 s» cada vez: el agente no espera una hora ni
    dice «sin respuesta»; su línea dice lo que pidió la API, lo que hizo y cuándo volver a intentar."""
    api.fail(429, times=10, after=1, headers={"retry-after": "3600"})
    env = live(api, ANTHROPIC_MAX_RETRIES="0")
    done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, env=env, live=True, timeout=120)
    assert done.returncode == 1 and one_line(done.stderr), done.stderr
    assert "La API pidió esperar 3600 s antes de reintentar (retry-after)" in done.stderr
    assert "vuelve a intentarlo después de las" in done.stderr and "sin respuesta" not in done.stderr
    api.fail(200, times=0)
    resumes(tmp_path, env)


@pytest.mark.parametrize(
    ("stop", "code"), [("SIGTERM", contract.EXIT_TERMINATED), ("SIGHUP", contract.EXIT_HANGUP)]
)
def test_sigterm_and_sighup_while_waiting_are_one_line_and_resumable(tmp_path, api, stop, code):
    run = signal_while_waiting(api, tmp_path, REFERENCE_AGENT, stop, env=live(api))
    assert run.returncode == code and one_line(run.stderr), run.stderr
    assert run.stderr.startswith(f"Interrumpido con {stop}.") and "--resume" in run.stderr
    cp = json.loads((tmp_path / "checkpoint.json").read_text(encoding="utf-8"))
    assert (cp["turns"], cp["pendingToolUse"]) == (1, None)  # cargable: el último punto B
    api.release()
    resumes(tmp_path, live(api))


def test_a_dead_proxy_is_named_as_the_proxy(tmp_path, api):
    with socket.socket() as closed:  # un puerto que nadie escucha
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = live(api, HTTP_PROXY=f"http://usuario:secreto@127.0.0.1:{port}", ANTHROPIC_MAX_RETRIES="0")
    done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, env=env, live=True, timeout=120)
    assert done.returncode == 1 and one_line(done.stderr), done.stderr
    assert f"a través del proxy http://127.0.0.1:{port} (HTTP_PROXY)" in done.stderr
    assert "secreto" not in done.stderr and "usuario" not in done.stderr


def test_an_auth_token_alone_is_accepted_and_never_printed(tmp_path, api):
    env = {"ANTHROPIC_AUTH_TOKEN": TEST_KEY, "ANTHROPIC_BASE_URL": api.base_url}
    done = run_agent_process(tmp_path, agent=REFERENCE_AGENT, env=env, live=True, timeout=120)
    assert done.returncode == 0 and done.stdout.endswith(DONE), done.stderr
    assert TEST_KEY not in done.stdout + done.stderr
    for path in tmp_path.iterdir():
        assert TEST_KEY.encode() not in path.read_bytes(), path.name

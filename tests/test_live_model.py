"""--live: el mismo bucle con el SDK real de anthropic, probado contra una API de mensajes local.

El cliente es el ``anthropic.Anthropic()`` de verdad, apuntado con ANTHROPIC_BASE_URL al servidor de
``tests/fake_messages_api.py``, que responde el guion y rechaza lo que la API real rechaza. La corrida
completa y una caída con su reanudación son procesos reales; la matriz de caídas y los errores corren
``main()`` en este mismo proceso (importar el SDK cuesta ~1 s por proceso), con el mismo cliente real.
"""

import io
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

import pytest
from course_files import snapshot

from harness.base_loop import MAX_TOKENS, MODEL
from harness.clients import make_client
from harness.crash import KINDS, reset_crash_points
from harness.live_model import ONE_TOOL_PER_TURN, LiveModelError
from harness.protocol import pairing_error
from harness.runner import AgentRun, run_agent_process
from maintainer.paths import ROOT as REPO_ROOT
from harness.tools import TOOLS, report_copies
from solutions import agent
from tests.fake_messages_api import TEST_KEY, FakeMessagesAPI, with_preamble, with_second_tool_use

LABELS = [f"{kind}:{n}" for kind in KINDS for n in (1, 2, 3)]
SEED_KEYS = {"version", "task", "turns", "tokensUsed", "messages", "pendingToolUse"}
DONE = "[done] Reporte escrito en report.txt, tarea completa.\n"


@pytest.fixture
def api():
    with FakeMessagesAPI() as server:
        yield server


@pytest.fixture
def live_env(monkeypatch, api):
    """Solo las variables de esta prueba: nada de ANTHROPIC_* del entorno de quien corre las pruebas."""
    for name in [n for n in os.environ if n.startswith("ANTHROPIC_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
    monkeypatch.delenv("CRASH_AFTER", raising=False)
    return api


def run_main(workdir, *args, crash_after=None):
    """``agent.main(args)`` como si fuera un proceso nuevo: contadores de caída en cero, su propio
    directorio de trabajo y CRASH_AFTER, y lo que imprime capturado."""
    reset_crash_points()
    out, err, cwd = io.StringIO(), io.StringIO(), os.getcwd()
    with mock.patch.dict(os.environ, {"AGENT_WORKDIR": os.fspath(workdir)}):
        os.environ.pop("CRASH_AFTER", None)
        if crash_after:
            os.environ["CRASH_AFTER"] = crash_after
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = agent.main(list(args))
        finally:
            os.chdir(cwd)
    return AgentRun(code, out.getvalue(), err.getvalue())


def workdir(tmp_path, name):
    path = tmp_path / name
    path.mkdir()
    return path


def read_json(path):
    return json.loads(path.read_bytes()) if path.exists() else None


def disk(wd):
    """Punto de control, registro y reporte, comparables entre corridas (``at`` cambia siempre)."""
    ledger = read_json(wd / "effects.json") or {}
    report = wd / "report.txt"
    return (
        read_json(wd / "checkpoint.json"),
        {tid: {**entry, "at": None} for tid, entry in ledger.items()},
        report.read_text(encoding="utf-8") if report.exists() else None,
    )


def assert_key_hidden(wd, *runs):
    """La clave no llega a ningún archivo del directorio de trabajo ni a ninguna línea impresa."""
    for run in runs:
        assert TEST_KEY not in run.stdout + run.stderr
    for name, data in snapshot(wd).items():
        assert TEST_KEY.encode() not in data, name


def assert_one_line(text):
    assert text.endswith("\n") and text.count("\n") == 1 and "Traceback" not in text, text


# —— Procesos reales: la corrida completa y la caída de la lección con su reanudación ——


def test_full_live_run_is_the_scripted_run(tmp_path, live_env):
    scripted_wd, live_wd = workdir(tmp_path, "guionado"), workdir(tmp_path, "live")
    scripted = run_agent_process(scripted_wd)
    live = run_agent_process(live_wd, live=True)

    assert live.returncode == 0, live.stderr
    assert live == scripted
    assert disk(live_wd) == disk(scripted_wd)
    assert live_env.statuses == [200] * 4
    for _, body in live_env.requests:
        assert (body["model"], body["max_tokens"]) == (MODEL, MAX_TOKENS)
        assert body["tools"] == TOOLS
        assert body["tool_choice"] == ONE_TOOL_PER_TURN
    assert_key_hidden(live_wd, live)


def test_lesson_crash_and_resume_as_live_processes(tmp_path, live_env):
    runs = {}
    for mode, live in (("guionado", False), ("live", True)):
        wd = workdir(tmp_path, mode)
        crash = run_agent_process(wd, live=live, crash_after="after-effect-write:3")
        resume = run_agent_process(wd, live=live, resume=True)
        runs[mode] = (crash, resume, disk(wd))

    crash, resume, _ = runs["live"]
    assert crash.killed and resume.returncode == 0, resume.stderr
    assert resume.branch == "hit"
    # Un error de la API en un proceso real: una línea en stderr, sin traza, código 1.
    refused = run_agent_process(
        workdir(tmp_path, "clave"), live=True, env={"ANTHROPIC_API_KEY": "sk-ant-" + "0" * 30}
    )
    assert (refused.returncode, refused.stdout) == (1, "")
    assert_one_line(refused.stderr)
    assert "401" in refused.stderr and "ANTHROPIC_API_KEY" in refused.stderr
    assert runs["live"] == runs["guionado"]
    assert report_copies(tmp_path / "live" / "report.txt") == 1
    assert_key_hidden(tmp_path / "live", crash, resume)


def test_scripted_agent_does_not_import_the_sdk(tmp_path):
    code = (
        "import sys; from solutions import agent; code = agent.main([]); "
        "assert 'anthropic' not in sys.modules, 'el camino guionado importó anthropic'; sys.exit(code)"
    )
    env = {**os.environ, "AGENT_WORKDIR": os.fspath(tmp_path), "PYTHONIOENCODING": "utf-8"}
    env.pop("CRASH_AFTER", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(DONE)


# —— En este proceso, con el cliente real: cada punto de caída, igual que el guionado ——


@pytest.mark.parametrize("label", LABELS)
def test_every_crash_point_resumes_like_the_scripted_agent(label, tmp_path, live_env):
    runs = {}
    for mode, flags in (("guionado", ()), ("live", ("--live",))):
        wd = workdir(tmp_path, mode)
        crash = run_main(wd, *flags, crash_after=label)
        crashed_disk = disk(wd)
        resume = run_main(wd, *flags, "--resume")
        runs[mode] = (crash, crashed_disk, resume, disk(wd))

    crash, crashed_disk, resume, _ = runs["live"]
    assert crash.killed and resume.returncode == 0, resume.stderr
    assert set(crashed_disk[0]) == SEED_KEYS  # el turno del guion no necesita la clave opcional
    assert runs["live"] == runs["guionado"]
    assert set(live_env.statuses) == {200}
    assert_key_hidden(tmp_path / "live", crash, resume)


@pytest.mark.parametrize("label", LABELS)
def test_text_before_tool_use_is_sent_back_after_resume(label, tmp_path, live_env):
    """Un modelo real escribe un texto antes del tool_use: reanudar no puede perderlo."""
    live_env.reply_hook = with_preamble
    straight = run_main(workdir(tmp_path, "seguida"), "--live")
    assert straight.returncode == 0, straight.stderr
    uninterrupted = live_env.requests[-1][1]["messages"]
    live_env.requests.clear()

    wd, turn = workdir(tmp_path, "reanudada"), int(label.split(":")[1])
    crash = run_main(wd, "--live", crash_after=label)
    cp = read_json(wd / "checkpoint.json")
    resume = run_main(wd, "--live", "--resume")

    assert crash.killed and resume.returncode == 0, resume.stderr
    if cp["pendingToolUse"]:
        saved = cp[agent.PENDING_CONTENT]
        assert [b["type"] for b in saved] == ["text", "tool_use"]
        assert saved[1]["id"] == cp["pendingToolUse"]["id"]
    # Hasta el turno de la caída, la API recibe lo mismo que sin caída, texto incluido; después
    # reconcile puede cambiar el rumbo (is_error), pero ningún turno pierde su texto.
    sent = live_env.requests[-1][1]["messages"]
    assert sent[: 2 * turn] == uninterrupted[: 2 * turn]
    assert all(m["content"][0]["type"] == "text" for m in sent if m["role"] == "assistant")
    assert set(live_env.statuses) == {200}


def test_requests_use_anthropic_model_and_one_tool_per_turn(tmp_path, live_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")
    run = run_main(tmp_path, "--live")
    assert run.returncode == 0, run.stderr
    models = {body["model"] for _, body in live_env.requests}
    assert models == {"claude-haiku-4-5"}
    assert all(body["tool_choice"] == ONE_TOOL_PER_TURN for _, body in live_env.requests)


# —— Varias llamadas en un turno: se rechaza entero, antes del punto A ——


def test_two_tool_uses_in_one_turn_are_refused_and_resumable(tmp_path, live_env):
    def on_second_request(reply, body):
        return with_second_tool_use(reply, body) if len(body["messages"]) == 3 else reply

    live_env.reply_hook = on_second_request
    run = run_main(tmp_path, "--live")

    assert run.returncode == 1
    assert_one_line(run.stderr)
    assert "count_words" in run.stderr and "check_report" in run.stderr  # nombra las dos llamadas
    assert run.stdout == "[turn 1][save A] pending=read_notes\n[turn 1][save B]\n"
    cp = read_json(tmp_path / "checkpoint.json")
    assert (cp["turns"], cp["pendingToolUse"]) == (1, None)
    assert set(read_json(tmp_path / "effects.json")) == {"toolu_01"}  # no se ejecutó ninguna de las dos

    live_env.reply_hook = None
    resume = run_main(tmp_path, "--live", "--resume")
    assert resume.returncode == 0, resume.stderr
    assert resume.stdout.startswith(
        "[resume] leído turn=1 pending=null\n[turn 2][save A] pending=count_words\n"
    )
    assert resume.stdout.endswith(DONE)
    assert report_copies(tmp_path / "report.txt") == 1


def test_a_cut_reply_is_an_error_not_a_final_answer(tmp_path, live_env):
    def cut_second(reply, body):
        return {**reply, "stop_reason": "max_tokens"} if len(body["messages"]) == 3 else reply

    live_env.reply_hook = cut_second
    run = run_main(tmp_path, "--live")
    assert run.returncode == 1 and "[done]" not in run.stdout
    assert_one_line(run.stderr)
    assert f"se cortó al llegar a max_tokens={MAX_TOKENS}" in run.stderr

    live_env.reply_hook = None
    resume = run_main(tmp_path, "--live", "--resume")
    assert resume.returncode == 0 and resume.stdout.endswith(DONE)


# —— Errores que una persona va a ver: una línea en español, y el punto de control sigue sirviendo ——


def test_missing_key_touches_nothing(tmp_path, live_env, monkeypatch):
    assert run_main(tmp_path, "--live", crash_after="after-effect-write:3").killed
    before = snapshot(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    for flags in (("--live", "--resume"), ("--live",)):
        run = run_main(tmp_path, *flags)
        assert (run.returncode, run.stdout) == (1, "")
        assert_one_line(run.stderr)
        assert "ANTHROPIC_API_KEY" in run.stderr  # nombra la variable que falta
        assert snapshot(tmp_path) == before  # ni siquiera la corrida nueva borró nada

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    resume = run_main(tmp_path, "--live", "--resume")
    assert resume.branch == "hit" and resume.stdout.endswith(DONE)
    assert report_copies(tmp_path / "report.txt") == 1


def test_rejected_key_401(tmp_path, live_env, monkeypatch):
    assert run_main(tmp_path, "--live", crash_after="after-save-b:2").killed
    before = snapshot(tmp_path)
    wrong = "sk-ant-clave-equivocada-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", wrong)
    run = run_main(tmp_path, "--live", "--resume")

    assert run.returncode == 1
    assert run.stdout == "[resume] leído turn=2 pending=null\n"
    assert_one_line(run.stderr)
    assert "401" in run.stderr and "ANTHROPIC_API_KEY" in run.stderr
    assert "retoma con --live --resume" in run.stderr and wrong not in run.stderr
    assert snapshot(tmp_path) == before
    assert live_env.statuses[-1] == 401

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    resume = run_main(tmp_path, "--live", "--resume")
    assert resume.returncode == 0 and resume.stdout.endswith(DONE)
    assert report_copies(tmp_path / "report.txt") == 1


@pytest.mark.parametrize("status", [429, 500, 529])
def test_transient_errors_are_retried_by_the_sdk(status, tmp_path, live_env):
    expected = run_main(workdir(tmp_path, "guionado"))
    live_env.fail(status, times=2, after=1)  # el 2.º pedido falla dos veces; el SDK reintenta 2
    run = run_main(workdir(tmp_path, "live"), "--live")

    assert run.returncode == 0, run.stderr
    assert run.stdout == expected.stdout
    assert live_env.statuses == [200, status, status, 200, 200, 200]
    bodies = [body for _, body in live_env.requests[1:4]]
    assert bodies[0] == bodies[1] == bodies[2]  # el reintento manda lo mismo


@pytest.mark.parametrize("status", [429, 500, 529])
def test_persistent_errors_keep_the_checkpoint_resumable(status, tmp_path, live_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "1")
    live_env.fail(status, times=2, after=2)  # el 3.er pedido, tras el punto B del turno 2
    run = run_main(tmp_path, "--live")

    assert run.returncode == 1
    assert_one_line(run.stderr)
    assert str(status) in run.stderr and "retoma con --live --resume" in run.stderr
    assert run.stdout.endswith("[turn 2][save B]\n")
    assert live_env.statuses == [200, 200, status, status]
    cp = read_json(tmp_path / "checkpoint.json")
    assert (cp["turns"], cp["pendingToolUse"]) == (2, None)

    resume = run_main(tmp_path, "--live", "--resume")
    assert resume.returncode == 0, resume.stderr
    assert resume.stdout.startswith("[resume] leído turn=2 pending=null\n") and resume.stdout.endswith(DONE)
    assert report_copies(tmp_path / "report.txt") == 1
    assert_key_hidden(tmp_path, run, resume)


def test_api_gone_then_back(tmp_path, live_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "1")
    assert run_main(tmp_path, "--live", crash_after="after-effect-write:3").killed
    live_env.stop()
    run = run_main(tmp_path, "--live", "--resume")

    assert run.returncode == 1
    assert_one_line(run.stderr)
    # Nombra a dónde no pudo llegar y dice cómo retomar.
    assert live_env.base_url in run.stderr and "retoma con --live --resume" in run.stderr
    # reconcile ya rellenó el punto B: el registro evitó volver a escribir el reporte
    assert run.branch == "hit"
    cp = read_json(tmp_path / "checkpoint.json")
    assert (cp["turns"], cp["pendingToolUse"]) == (3, None)

    with FakeMessagesAPI() as back:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", back.base_url)
        resume = run_main(tmp_path, "--live", "--resume")
    assert resume.stdout == "[resume] leído turn=3 pending=null\n" + DONE
    assert report_copies(tmp_path / "report.txt") == 1


def test_bad_max_retries_is_one_clear_line(tmp_path, live_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "dos")
    run = run_main(tmp_path, "--live")
    assert (run.returncode, run.stdout) == (1, "")
    assert_one_line(run.stderr)
    assert run.stderr.startswith("ANTHROPIC_MAX_RETRIES=dos")  # la variable y el valor malo


# —— El servidor falso rechaza lo que la API real rechaza ——


def post(url, body, key=TEST_KEY):
    request = urllib.request.Request(
        url + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={"x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


DANGLING = [
    {"role": "user", "content": "hola"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "read_notes", "input": {}}],
    },
    {"role": "user", "content": "¿y?"},
]


def test_fake_api_speaks_the_messages_api_shape(api):
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "hola"}],
    }
    status, reply = post(api.base_url, body)
    assert status == 200
    assert set(reply) == {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
    assert (reply["type"], reply["role"], reply["model"], reply["stop_reason"]) == (
        "message",
        "assistant",
        MODEL,
        "tool_use",
    )
    assert set(reply["usage"]) == {"input_tokens", "output_tokens"}

    status, reply = post(api.base_url, {**body, "messages": DANGLING})
    assert status == 400
    assert reply == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": pairing_error(DANGLING)},
    }

    status, reply = post(api.base_url, body, key="otra")
    assert (status, reply["error"]["type"]) == (401, "authentication_error")


def test_real_client_gets_the_400_as_one_spanish_line(live_env):
    client = make_client(live=True)
    with pytest.raises(LiveModelError) as caught:
        client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, tools=TOOLS, messages=DANGLING)
    message = str(caught.value)
    # El código y el motivo de la API (qué mensaje rechazó), en una línea.
    assert "400" in message and "messages.1" in message and "\n" not in message


def test_key_is_hidden_even_if_the_api_repeats_it(live_env):
    live_env.fail(400, message=f"x-api-key {TEST_KEY} is not allowed here")
    with pytest.raises(LiveModelError) as caught:
        make_client(live=True).messages.create(
            model=MODEL, max_tokens=MAX_TOKENS, tools=TOOLS, messages=[{"role": "user", "content": "hola"}]
        )
    assert TEST_KEY not in str(caught.value)
    assert "x-api-key «clave oculta» is not allowed here" in str(caught.value)


# —— La API real, solo si hay clave (aquí no hay red: se salta) ——


@pytest.mark.skipif(
    not os.environ.get("ANTHROPIC_API_KEY"),
    reason="sin ANTHROPIC_API_KEY: la prueba contra la API real de Anthropic se salta",
)
def test_real_api_run(tmp_path):
    key = os.environ["ANTHROPIC_API_KEY"]
    run = run_agent_process(tmp_path, live=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "[done]" in run.stdout
    cp = read_json(tmp_path / "checkpoint.json")
    assert cp is None or cp["pendingToolUse"] is None
    assert key not in run.stdout + run.stderr
    for name, data in snapshot(tmp_path).items():
        assert key.encode() not in data, name

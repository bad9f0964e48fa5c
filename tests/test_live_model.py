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
from harness.crash import KINDS, reset_crash_points
from harness.defenses import live_model
from harness.defenses.clients import make_client
from harness.defenses.live_model import ONE_TOOL_PER_TURN, LiveModelError
from harness.protocol import pairing_error
from harness.runs.launcher import AgentRun, run_agent_process, start_agent_process
from harness.tools import TOOLS, report_copies
from maintainer.paths import REFERENCE_AGENT
from maintainer.paths import ROOT as REPO_ROOT
from solutions import agent
from tests.fake_messages_api import (
    TEST_KEY,
    FakeMessagesAPI,
    signal_while_waiting,
    with_preamble,
    with_second_tool_use,
    with_stop_reason,
    with_tool_use,
)

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
    scripted = run_agent_process(scripted_wd, agent=REFERENCE_AGENT)
    live = run_agent_process(live_wd, agent=REFERENCE_AGENT, live=True)

    assert live.returncode == 0, live.stderr
    assert live == scripted
    assert disk(live_wd) == disk(scripted_wd)
    assert live_env.statuses == [200] * 4
    for _, body in live_env.requests:
        assert (body["model"], body["max_tokens"]) == (MODEL, MAX_TOKENS)
        assert body["tools"] == TOOLS
        assert body["tool_choice"] == ONE_TOOL_PER_TURN
    assert_key_hidden(live_wd, live)


@pytest.mark.slow
def test_lesson_crash_and_resume_as_live_processes(tmp_path, live_env):
    runs = {}
    for mode, live in (("guionado", False), ("live", True)):
        wd = workdir(tmp_path, mode)
        crash = run_agent_process(wd, agent=REFERENCE_AGENT, live=live, crash_after="after-effect-write:3")
        resume = run_agent_process(wd, agent=REFERENCE_AGENT, live=live, resume=True)
        runs[mode] = (crash, resume, disk(wd))

    crash, resume, _ = runs["live"]
    assert crash.killed and resume.returncode == 0, resume.stderr
    assert resume.branch == "hit"
    # Un error de la API en un proceso real: una línea en stderr, sin traza, código 1.
    refused = run_agent_process(
        workdir(tmp_path, "clave"),
        agent=REFERENCE_AGENT,
        live=True,
        env={"ANTHROPIC_API_KEY": "sk-ant-" + "0" * 30},
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


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("ANTHROPIC_API_KEY"),
    reason="sin ANTHROPIC_API_KEY: la prueba contra la API real de Anthropic se salta",
)
def test_real_api_run(tmp_path):
    key = os.environ["ANTHROPIC_API_KEY"]
    run = run_agent_process(tmp_path, agent=REFERENCE_AGENT, live=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "[done]" in run.stdout
    cp = read_json(tmp_path / "checkpoint.json")
    assert cp is None or cp["pendingToolUse"] is None
    assert key not in run.stdout + run.stderr
    for name, data in snapshot(tmp_path).items():
        assert key.encode() not in data, name


# —— Issue 17: cada respuesta y cada espera, sin falso éxito ni nada que no se pueda retomar ——

WAITING = "[esperando al modelo]"


def error_line(run):
    """La única línea de error (las de espera, «[esperando al modelo] …», son aparte)."""
    lines = [line for line in run.stderr.splitlines() if not line.startswith(WAITING)]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    return lines[0]


def assert_loadable(wd):
    """Lo que quedó en el disco lo cargan los cargadores del propio agente."""
    cwd = os.getcwd()
    os.chdir(wd)
    try:
        if os.path.exists(agent.CHECKPOINT_PATH):
            agent.load_checkpoint()
        agent.load_effects()
    finally:
        os.chdir(cwd)


def assert_resumes(wd, api, *runs):
    """El servidor vuelve a portarse bien: --live (--resume si hay punto de control) termina con un
    solo reporte, y la clave no quedó en ninguna salida ni archivo."""
    api.reply_hook = None
    api.release()
    flags = ("--live", "--resume") if (wd / "checkpoint.json").exists() else ("--live",)
    resume = run_main(wd, *flags)
    assert resume.returncode == 0 and resume.stdout.endswith(DONE), resume.stderr
    assert report_copies(wd / "report.txt") == 1
    assert_key_hidden(wd, *runs, resume)


def assert_failed_at_turn_1(tmp_path, run, code=1):
    assert run.returncode == code and "[done]" not in run.stdout, run
    assert run.stdout == "[turn 1][save A] pending=read_notes\n[turn 1][save B]\n"
    cp = read_json(tmp_path / "checkpoint.json")
    assert (cp["turns"], cp["pendingToolUse"]) == (1, None)
    assert_loadable(tmp_path)
    return error_line(run)


STOP_CASES = {
    "refusal": ("refusal", None, "se negó"),
    "ventana-llena": ("model_context_window_exceeded", None, "ventana de contexto"),
    "max_tokens": ("max_tokens", None, f"max_tokens={MAX_TOKENS}"),
    "desconocido": ("stop_nuevo", None, "stop_nuevo"),
    "null": (None, None, "null"),
    "end_turn-vacio": ("end_turn", [], "sin texto"),
    "end_turn-espacios": ("end_turn", [{"type": "text", "text": "  "}], "sin texto"),
    "end_turn-con-tool_use": ("end_turn", None, "incoherente"),
}


@pytest.mark.parametrize("case", STOP_CASES)
def test_a_reply_that_is_not_a_final_is_never_done(case, tmp_path, live_env):
    stop_reason, content, words = STOP_CASES[case]
    live_env.reply_hook = with_stop_reason(stop_reason, content=content)
    run = run_main(tmp_path, "--live")
    line = assert_failed_at_turn_1(tmp_path, run)
    assert words in line and "retoma con --live --resume" in line
    assert set(read_json(tmp_path / "effects.json")) == {"toolu_01"}  # el turno no se ejecutó
    assert_resumes(tmp_path, live_env, run)


def test_pause_turn_continues_the_same_turn(tmp_path, live_env):
    paused = [{"type": "text", "text": "Sigo en un momento."}]
    live_env.reply_hook = with_stop_reason("pause_turn", content=paused)
    run = run_main(tmp_path, "--live")

    assert run.returncode == 0 and run.stdout.endswith(DONE), run.stderr
    continued = live_env.requests[2][1]["messages"]
    assert continued[-1] == {"role": "assistant", "content": paused}  # el turno en pausa, tal cual
    turn = live_env.requests[-1][1]["messages"][3]
    assert turn["content"][0] == paused[0] and turn["content"][1]["name"] == "count_words"
    assert report_copies(tmp_path / "report.txt") == 1


UNPARSEABLE = {
    "json-cortado": (b'{"id": "msg_01", "type": "message", "content": [{"ty', "application/json"),
    "html-de-proxy": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "json-no-mensaje": (b'{"ok": true, "data": []}', "application/json"),
    "lista": (b"[1, 2, 3]", "application/json"),
}


@pytest.mark.parametrize("case", UNPARSEABLE)
def test_a_200_that_is_not_a_message_is_one_line(case, tmp_path, live_env):
    data, content_type = UNPARSEABLE[case]
    live_env.raw(data, content_type, after=1)
    run = run_main(tmp_path, "--live")
    line = assert_failed_at_turn_1(tmp_path, run)
    assert "no es un mensaje" in line and "retoma con --live --resume" in line
    assert_resumes(tmp_path, live_env, run)


BAD_CALLS = {
    "id-repetido": ({"id": "toolu_01"}, "repite"),
    "id-mal-formado": ({"id": "toolu 02/x"}, "formato"),
    "id-no-texto": ({"id": 7}, "formato"),
    "input-no-objeto": ({"input": ["notes.txt"]}, "no es un objeto"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_a_call_the_api_would_reject_is_refused_before_point_a(case, tmp_path, live_env):
    fields, words = BAD_CALLS[case]
    live_env.reply_hook = with_tool_use(**fields)
    ledger_before = None
    run = run_main(tmp_path, "--live")
    line = assert_failed_at_turn_1(tmp_path, run)
    assert words in line and "no se ejecutó nada" in line
    ledger_before = read_json(tmp_path / "effects.json")
    assert set(ledger_before) == {"toolu_01"} and ledger_before["toolu_01"]["name"] == "read_notes"
    assert_resumes(tmp_path, live_env, run)
    ledger = read_json(tmp_path / "effects.json")
    assert ledger["toolu_01"] == ledger_before["toolu_01"]  # el registro nunca se sobrescribe
    assert set(live_env.statuses) == {200}  # la API nunca recibió una conversación que rechaza


@pytest.mark.parametrize("crash", [None, "after-save-b:2", "after-save-a:2"])
def test_an_unknown_tool_is_answered_with_is_error(crash, tmp_path, live_env):
    live_env.reply_hook = with_tool_use(id="toolu_x1", name="borrar_todo")
    run = run_main(tmp_path, "--live", crash_after=crash)
    assert "[turn 2][save A]" not in run.stdout  # nada colgante que anotar: no se ejecuta
    assert_loadable(tmp_path)
    if crash:
        assert run.killed
        live_env.reply_hook = None
        run = run_main(tmp_path, "--live", "--resume")
    assert run.returncode == 0 and run.stdout.endswith(DONE), run.stderr
    sent = live_env.requests[-1][1]["messages"]
    answer = sent[4]["content"][0]
    assert answer["tool_use_id"] == "toolu_x1" and answer["is_error"] is True
    assert "no existe la herramienta borrar_todo" in answer["content"]
    assert "toolu_x1" not in read_json(tmp_path / "effects.json")
    assert report_copies(tmp_path / "report.txt") == 1


@pytest.mark.parametrize("mode", ["hang", "trickle"])
def test_a_reply_that_never_arrives_times_out(mode, tmp_path, live_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_TIMEOUT", "2")
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "0")
    live_env.hang(after=1, mode=mode)
    run = run_main(tmp_path, "--live")
    line = assert_failed_at_turn_1(tmp_path, run)
    assert "no respondió en 2 s" in line and "ANTHROPIC_TIMEOUT" in line
    assert live_env.waiting.is_set()
    assert_resumes(tmp_path, live_env, run)


def read_until(stream, prefix):
    """Lee líneas de ``stream`` hasta una que empiece con ``prefix`` (o el fin)."""
    for line in stream:
        if line.startswith(prefix):
            return line
    return None


@pytest.mark.slow  # espera de verdad una respuesta lenta
def test_a_slow_reply_shows_a_waiting_line_then_finishes(tmp_path, live_env):
    live_env.hang(after=1)
    proc = start_agent_process(tmp_path, agent=REFERENCE_AGENT, env={"ANTHROPIC_TIMEOUT": "8"}, live=True)
    try:
        line = read_until(proc.stderr, "[")
        live_env.release()  # la prueba la suelta cuando vio la línea, no tras una espera fija
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert line and line.startswith(WAITING) and "ANTHROPIC_TIMEOUT" in line and "Ctrl-C" in line
    assert proc.returncode == 0 and out.endswith(DONE), err
    assert err == ""


def test_ctrl_c_while_waiting_is_one_line_and_130(tmp_path, live_env):
    run = signal_while_waiting(live_env, tmp_path, REFERENCE_AGENT, "SIGINT")
    assert_failed_at_turn_1(tmp_path, run, code=130)
    assert "Ctrl-C" in error_line(run) and "--resume" in error_line(run)
    assert_resumes(tmp_path, live_env, run)


def test_a_long_retry_after_is_capped(tmp_path, live_env, monkeypatch):
    # Sin tope, el SDK esperaría los 120 s que pide la API; con él, lo que dice MAX_RETRY_WAIT.
    monkeypatch.setattr(live_model, "MAX_RETRY_WAIT", 0.01)
    live_env.fail(429, after=1, headers={"retry-after": "120"})
    run = run_main(tmp_path, "--live")
    assert run.returncode == 0 and run.stdout.endswith(DONE), run.stderr
    assert live_env.statuses == [200, 429, 200, 200, 200]


def test_a_base_url_ending_in_v1_is_blamed_not_the_model(tmp_path, live_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", live_env.base_url + "/v1")
    run = run_main(tmp_path, "--live")
    assert (run.returncode, run.stdout) == (1, "")
    line = error_line(run)
    assert "404" in line and "ANTHROPIC_BASE_URL" in line and "«/v1»" in line
    assert "ANTHROPIC_MODEL" not in line
    assert "sin --resume" in line  # no había nada guardado: --resume no encontraría nada


def test_a_404_naming_the_model_blames_the_model(tmp_path, live_env):
    live_env.fail(404, message="model: claude-que-no-existe")
    line = error_line(run_main(tmp_path, "--live"))
    assert "ANTHROPIC_MODEL" in line and "claude-sonnet" in line


@pytest.mark.parametrize("bad", ["\r", "\n", " ", "\t", "\x1b", "ñ"])
def test_a_malformed_key_is_refused_before_any_request(bad, tmp_path, live_env, monkeypatch):
    for key in (TEST_KEY + bad, bad + TEST_KEY, TEST_KEY[:10] + bad + TEST_KEY[10:]):
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
        run = run_main(tmp_path, "--live")
        assert (run.returncode, run.stdout) == (1, "")
        line = error_line(run)
        assert "ANTHROPIC_API_KEY" in line and TEST_KEY[:10] not in line and TEST_KEY[10:] not in line
    assert live_env.requests == [] and snapshot(tmp_path) == {}


def test_debug_log_never_shows_the_key(tmp_path, live_env):
    live_env.fail(401, message=f"invalid x-api-key {TEST_KEY}", after=1)
    env = {"ANTHROPIC_LOG": "debug", "ANTHROPIC_BASE_URL": live_env.base_url}
    run = run_agent_process(tmp_path, agent=REFERENCE_AGENT, live=True, env=env)
    assert run.returncode == 1 and "DEBUG" in run.stderr  # el log de depuración sí salió
    assert TEST_KEY not in run.stdout + run.stderr


def test_a_first_request_failure_does_not_point_to_resume(tmp_path, live_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "0")
    live_env.fail(500)
    run = run_main(tmp_path, "--live")
    line = error_line(run)
    assert (run.returncode, run.stdout) == (1, "") and "sin --resume" in line and "retoma" not in line
    assert_resumes(tmp_path, live_env, run)


@pytest.mark.parametrize("flags", [("--live",), ()])
def test_a_finished_task_is_not_resumed_into_a_model_call(flags, tmp_path, live_env):
    done = run_main(tmp_path, *flags)
    assert done.returncode == 0 and done.stdout.endswith(DONE)
    before, asked = snapshot(tmp_path), len(live_env.requests)
    again = run_main(tmp_path, *flags, "--resume")
    assert (again.returncode, again.stdout) == (1, "")
    assert "ya terminó" in error_line(again) and "sin --resume" in error_line(again)
    assert len(live_env.requests) == asked and snapshot(tmp_path) == before
    assert report_copies(tmp_path / "report.txt") == 1


def test_a_checkpoint_the_api_would_reject_says_so_and_what_to_do(tmp_path, live_env):
    assert run_main(tmp_path, "--live", crash_after="after-save-b:2").killed
    cp = read_json(tmp_path / "checkpoint.json")
    cp["messages"][3]["content"][0]["id"] = "toolu_01"  # como lo dejaba una versión anterior del agente
    cp["messages"][4]["content"][0]["tool_use_id"] = "toolu_01"
    (tmp_path / "checkpoint.json").write_text(json.dumps(cp), encoding="utf-8")
    asked = len(live_env.requests)
    run = run_main(tmp_path, "--live", "--resume")
    line = error_line(run)
    assert (run.returncode, run.stdout) == (1, "")
    assert "rechazaría" in line and "toolu_01" in line and "sin --resume" in line
    assert len(live_env.requests) == asked

"""«[done]» quiere decir hecho (issue 34), en los tres agentes: un modelo real que cierra la tarea sin
su reporte (se rinde tras un error del sistema, tras un reporte rechazado, o termina antes de tiempo)
no es un éxito. Sale con 1 y una línea (qué falta, qué pasó antes, qué hacer), no marca la tarea
terminada, y un --resume, ya resuelta la causa, la termina con el reporte una vez.

Procesos reales con --live contra la API de mensajes local; el error del sistema lo inyecta strace.
"""

import json
import os
import subprocess

import pytest

from harness.beyond import batch_agent, dbos_agent
from harness.beyond.parallel_model import ParallelScriptedModel
from harness.contract import FINISHED, LESSON_AGENT_VAR
from harness.runs.launcher import AgentRun, agent_command, run_agent_process
from harness.runs.strace_log import parse_log, strace_prefix
from harness.tools import report_copies
from maintainer import faults
from maintainer.paths import REFERENCE_AGENT
from tests.fake_messages_api import (
    GIVE_UP_TEXT,
    TEST_KEY,
    FakeMessagesAPI,
    ends_early,
    gives_up_after_an_error,
    with_tool_use,
)

LESSON = {LESSON_AGENT_VAR: REFERENCE_AGENT}


@pytest.fixture
def clean_env(monkeypatch):
    for name in [n for n in os.environ if n.startswith("ANTHROPIC_")]:
        monkeypatch.delenv(name)


def live(api, **extra):
    return {"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": api.base_url, **extra}


def run(workdir, agent, api, **kwargs):
    env = {**kwargs.pop("env", {}), **live(api)}
    return run_agent_process(workdir, agent=agent, env=env, live=True, timeout=180, **kwargs)


def assert_not_done(done, *said):
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "[done]" not in done.stdout and "Traceback" not in done.stderr
    line = done.stderr
    assert line.startswith(f'El modelo cerró la tarea ("{GIVE_UP_TEXT}"), pero '), line
    assert "no está hecha, y no se marca terminada. Antes: " in line and "--resume" in line
    for part in said:
        assert part in line, line


# strace detiene al agente solo en openat (un filtro seccomp, que pide -f): sin él, se detiene en cada
# llamada al sistema del SDK, unos 6 s por corrida.
ONLY_OPENAT = ["-f", "--seccomp-bpf", "-e", "trace=openat"]
# Como corre el agente ``maintainer.faults`` (la misma secuencia de llamadas en cada corrida), pero con el
# bytecode de siempre: sin escribirlo, la corrida grabada y la de la falla leen los mismos .pyc, y el SDK
# no se compila desde la fuente en cada una (unos 4 s por corrida).
TRACED_ENV = {k: v for k, v in faults.STABLE_ENV.items() if k != "PYTHONPYCACHEPREFIX"}


def traced(workdir, api, prefix):
    """El agente de referencia con --live, bajo strace (``prefix``)."""
    args, env = agent_command(workdir, agent=REFERENCE_AGENT, env={**live(api), **TRACED_ENV}, live=True)
    done = subprocess.run([*prefix, *args], cwd=workdir, env=env, capture_output=True, text=True, timeout=180)
    return AgentRun(done.returncode, done.stdout, done.stderr)


def checkpoint(workdir):
    return json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))


@pytest.mark.slow  # una corrida bajo strace, con la falla inyectada
@pytest.mark.needs_strace
def test_a_model_that_gives_up_after_one_os_error_is_not_done(tmp_path, clean_env):
    """Un EIO al abrir sales-notes.txt (strace), y el modelo se rinde: salida 1, ni [done] ni tarea
    terminada; --resume vuelve a preguntarle y termina."""
    with FakeMessagesAPI(reply_hook=gives_up_after_an_error) as api:
        when = _first_open_of_notes(tmp_path, api)
        prefix = strace_prefix(os.devnull, [*ONLY_OPENAT, "-e", f"inject=openat:error=EIO:when={when}"])
        done = traced(tmp_path, api, prefix)
        assert_not_done(
            done, "report.txt no existe", "read_notes falló con «Error de ejecución de la herramienta"
        )
        assert FINISHED not in checkpoint(tmp_path)
        api.reply_hook = None
        resumed = run(tmp_path, REFERENCE_AGENT, api, resume=True)
    assert resumed.returncode == 0 and resumed.stdout.startswith("[resume]"), resumed.stderr
    assert report_copies(tmp_path / "report.txt") == 1


def _first_open_of_notes(tmp_path, api):
    """El ``when=`` de la primera apertura de sales-notes.txt, grabada en una corrida aparte."""
    copy = tmp_path.parent / (tmp_path.name + "-grabada")
    copy.mkdir()
    log = copy.parent / (copy.name + ".strace")
    hook, api.reply_hook = api.reply_hook, None
    traced(copy, api, strace_prefix(log, ONLY_OPENAT))
    api.reply_hook = hook
    found = [n for op, n, target in faults.targets(parse_log(log), copy) if target == "sales-notes.txt"]
    return found[0]


def refused_then_gives_up(at):
    """Un hook: en el pedido con ``at`` mensajes, cada write_report apunta fuera del directorio (la
    herramienta lo rechaza con is_error, sin que sea una falla que dura); tras el error, se rinde."""
    outside = with_tool_use(at=at, input={"path": "../fuera.txt", "content": "# Reporte de ventas\n"})
    return lambda reply, body: gives_up_after_an_error(outside(reply, body), body)


def test_a_refused_report_then_giving_up_is_not_done_in_the_lesson_agent(tmp_path, clean_env):
    with FakeMessagesAPI(reply_hook=refused_then_gives_up(at=5)) as api:
        done = run(tmp_path, REFERENCE_AGENT, api)
        assert_not_done(
            done, "report.txt no existe", "write_report falló con «Error de ejecución de la herramienta"
        )
        assert FINISHED not in checkpoint(tmp_path) and checkpoint(tmp_path)["turns"] == 3
        api.reply_hook = None
        resumed = run(tmp_path, REFERENCE_AGENT, api, resume=True)
    assert resumed.returncode == 0 and "[done]" in resumed.stdout, resumed.stderr
    assert report_copies(tmp_path / "report.txt") == 1


def test_a_refused_report_then_giving_up_is_not_done_in_the_batch_agent(tmp_path, clean_env):
    agent = batch_agent.__file__
    with FakeMessagesAPI(script=ParallelScriptedModel, reply_hook=refused_then_gives_up(at=3)) as api:
        done = run(tmp_path, agent, api, env=LESSON)
        assert_not_done(done, "report.txt no existe y resumen.txt no existe", "write_report falló con «")
        cp = checkpoint(tmp_path)
        assert (cp["version"], cp["turns"], cp["pendingToolUse"]) == (2, 2, [])  # el último punto B
        api.reply_hook = None
        again = run(tmp_path, agent, api, env=LESSON)  # o empezar de nuevo
    assert again.returncode == 0 and "[done]" in again.stdout, again.stderr
    assert report_copies(tmp_path / "report.txt") == 1 and report_copies(tmp_path / "resumen.txt") == 1


@pytest.mark.slow
def test_a_model_that_ends_early_leaves_the_dbos_flow_pending(tmp_path, clean_env):
    """El motor no anota un final sin reporte: el flujo no queda SUCCESS, y --resume le vuelve a preguntar
    al modelo desde el último paso anotado."""
    with FakeMessagesAPI(reply_hook=ends_early(at=3)) as api:
        done = run(tmp_path, dbos_agent.__file__, api)
        assert_not_done(
            done, "report.txt no existe", "ninguna herramienta falló", "quedó pendiente en la base"
        )
        api.reply_hook = None
        resumed = run(tmp_path, dbos_agent.__file__, api, resume=True)
    assert resumed.returncode == 0 and resumed.stdout.endswith("tarea completa.\n"), resumed.stderr
    assert "ya había terminado" not in resumed.stdout
    assert report_copies(tmp_path / "report.txt") == 1


@pytest.mark.slow
def test_the_dbos_turn_limit_is_exit_1_and_resume_goes_on(tmp_path):
    """Como el agente de la lección: el tope de turnos no es un final (salida 1, el flujo pendiente), y
    cada --resume sigue con otros tantos turnos hasta terminar."""
    env = {"AGENT_MAX_TURNS": "1"}
    stopped = run_agent_process(tmp_path, agent=dbos_agent.__file__, env=env, timeout=180)
    assert stopped.returncode == 1 and stopped.stderr.count("\n") == 1, stopped.stderr
    assert stopped.stderr.startswith("Se alcanzó el máximo de 1 turnos, deteniéndonos por nuestra cuenta")
    assert "[done]" not in stopped.stdout and "quedó pendiente en la base" in stopped.stderr
    codes = []
    for _ in range(3):
        resumed = run_agent_process(tmp_path, agent=dbos_agent.__file__, env=env, resume=True, timeout=180)
        codes.append(resumed.returncode)
        if resumed.returncode == 0:
            break
    assert codes == [1, 0] and resumed.stdout.endswith(
        "[done] Reporte escrito en report.txt, tarea completa.\n"
    )
    assert report_copies(tmp_path / "report.txt") == 1

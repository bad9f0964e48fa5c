"""Una respuesta del modelo que no se puede guardar se trata como cualquier respuesta mal formada
(issue 47): un texto con un sustituto suelto (en un bloque de texto, en la entrada de una herramienta o
en el texto final), una entrada anidada cientos o miles de niveles, tokens negativos, enormes o que no
son enteros. Nunca una traza: una línea, salida 1, el disco como en el último punto B, y un
``--live --resume`` que llega a ``[done]`` con un solo reporte.

Por el SDK real contra la API de mensajes local, en este proceso (``run_main``); el agente de DBOS, en
procesos reales. Cada clase de entrada va con varios ejemplos y con su borde: lo que cabe se guarda y
se carga, lo que no, se rechaza antes del punto A.
"""

import os

import pytest
from course_files import snapshot

from harness.beyond import dbos_agent
from harness.defenses.bounded import MAX_DEPTH
from harness.defenses.replies import CONTENT_DEPTH, MAX_REPLY_BYTES, MAX_REPLY_TOKENS
from harness.runs.launcher import run_agent_process
from harness.tools import report_copies
from solutions import agent
from tests.fake_messages_api import TEST_KEY, FakeMessagesAPI, RawJSON, nested, served
from tests.test_live_model import disk, run_main

DONE = "[done] Reporte escrito en report.txt, tarea completa.\n"
SURROGATES = ["\ud800", "\udfff", "a\udc80b", "ñ\ud83d"]  # sueltos: altos, bajos, entre otros caracteres
# Lo que un bloque tool_use agrega por encima de su «input» dentro del «content»: lista → bloque.
INPUT_IN_CONTENT = 2


@pytest.fixture
def api(monkeypatch):
    with served(monkeypatch, ANTHROPIC_MAX_RETRIES="0") as server:
        yield server


def once_at(at, change):
    """Un hook: la respuesta al pedido con ``at`` mensajes pasa por ``change`` una sola vez (al retomar,
    el modelo ya responde bien)."""
    used = []

    def hook(reply, body):
        if len(body["messages"]) != at or used:
            return reply
        used.append(at)
        return change(reply)

    return hook


def in_text(value):
    return lambda reply: {**reply, "content": [{"type": "text", "text": value}, *reply["content"]]}


def in_input(value):
    def change(reply):
        reply["content"] = [
            {**b, "input": {**b["input"], "extra": value}} if b["type"] == "tool_use" else b
            for b in reply["content"]
        ]
        return reply

    return change


def as_final_text(value):
    return lambda reply: {**reply, "stop_reason": "end_turn", "content": [{"type": "text", "text": value}]}


def in_usage(field, value):
    return lambda reply: {**reply, "usage": {**reply["usage"], field: value}}


def one_line(text):
    return text.endswith("\n") and text.count("\n") == 1 and "Traceback" not in text


def point_b(tmp_path, turn):
    """El disco tras el punto B de ``turn`` (0: nada guardado todavía), del modelo que responde bien."""
    wd = tmp_path / f"referencia-{turn}"
    wd.mkdir()
    if turn:
        assert run_main(wd, "--live", crash_after=f"after-save-b:{turn}").killed
    else:
        run_main(wd, "--live", crash_after="after-save-a:1")
        (wd / "checkpoint.json").unlink()  # lo de antes del primer punto: las notas, sin reporte
    return disk(wd)


def refused_then_resumed(tmp_path, api, at, change):
    """La respuesta al pedido ``at`` cambia con ``change``: una línea, salida 1, el disco del último
    punto B; después ``--live --resume`` termina con un reporte. Devuelve la línea del rechazo."""
    wd = tmp_path / "corrida"
    wd.mkdir()
    api.reply_hook = once_at(at, change)
    refused = run_main(wd, "--live")
    assert refused.returncode == 1 and one_line(refused.stderr), refused.stderr[-2000:]
    assert "[done]" not in refused.stdout
    assert disk(wd) == point_b(tmp_path, (at - 1) // 2)  # nada ejecutado ni guardado del turno
    if (wd / "checkpoint.json").exists():
        agent_loads(wd)
    resumed = run_main(wd, "--live", *(["--resume"] if (wd / "checkpoint.json").exists() else []))
    assert resumed.returncode == 0 and resumed.stdout.endswith(DONE), resumed.stderr
    assert report_copies(wd / "report.txt") == 1
    agent_loads(wd)
    return refused.stderr


def agent_loads(wd):
    """Lo que quedó lo cargan los cargadores del propio agente."""
    cwd = os.getcwd()
    os.chdir(wd)
    try:
        return agent.load_checkpoint(), agent.load_effects()
    finally:
        os.chdir(cwd)


# —— Unicode: un sustituto suelto en cualquier texto de la respuesta ——

WHERE = {"texto": in_text, "entrada": in_input, "final": as_final_text}


# El pedido cuya respuesta cambia: el primero (nada guardado), o uno a mitad; el texto final, también
# el último (el reporte ya escrito).
WHERE_AT = [(where, at) for where in WHERE for at in ([1, 5] if where != "final" else [1, 7])]


@pytest.mark.parametrize("surrogate", SURROGATES, ids=ascii)
@pytest.mark.parametrize(("where", "at"), WHERE_AT)
def test_a_lone_surrogate_anywhere_in_a_reply_is_refused_and_resumable(tmp_path, api, where, at, surrogate):
    line = refused_then_resumed(tmp_path, api, at, WHERE[where](surrogate))
    code = next(ord(c) for c in surrogate if 0xD800 <= ord(c) < 0xE000)
    assert "no es Unicode válido" in line and f"U+{code:04X}" in line


def test_a_surrogate_in_a_key_of_the_input_is_refused(tmp_path, api):
    change = in_input({"cl\udc00ve": 1})
    assert "no es Unicode válido" in refused_then_resumed(tmp_path, api, 3, change)


# —— Profundidad: lo que cabe se guarda y se carga; un nivel más, y el SDK o pydantic, no ——


def test_an_input_at_the_depth_limit_is_saved_and_loads(tmp_path, api):
    """El borde: una entrada que deja el «content» con CONTENT_DEPTH niveles se acepta, y el punto B que
    la guarda dentro de «messages» (MAX_DEPTH niveles en total) lo carga el agente."""
    depth = CONTENT_DEPTH - INPUT_IN_CONTENT - 1  # el objeto «extra» es un nivel más que el «input»
    api.reply_hook = once_at(3, in_input(nested(depth)))
    crashed = run_main(tmp_path, "--live", crash_after="after-save-b:2")
    assert crashed.killed, crashed.stderr
    cp, _ = agent_loads(tmp_path)
    assert _depth(cp) == MAX_DEPTH


@pytest.mark.parametrize("depth", [CONTENT_DEPTH - INPUT_IN_CONTENT, 100, 260, 990, 3000, 50_000])
def test_a_deeper_input_is_one_line_and_resumable(tmp_path, api, depth):
    line = refused_then_resumed(tmp_path, api, 3, in_input(nested(depth)))
    assert "anida" in line


def test_a_deep_text_block_is_refused_too(tmp_path, api):
    """No solo «input»: cualquier campo de cualquier bloque (uno que el agente no conoce, también)."""
    block = {"type": "raro", "datos": nested(2000)}
    line = refused_then_resumed(tmp_path, api, 3, lambda r: {**r, "content": [block, *r["content"]]})
    assert "anida" in line


def _depth(value):
    """Niveles de listas y objetos de ``value`` (un objeto o una lista)."""
    depth, level = 0, [value]
    while level:
        depth += 1
        children = (c for v in level for c in (v.values() if isinstance(v, dict) else v))
        level = [c for c in children if isinstance(c, dict | list)]
    return depth


# —— Números: tokens que no se pueden sumar ni guardar, números que no son JSON ——

# Negativos, más que MAX_REPLY_TOKENS, más dígitos de los que Python lee, no finitos, no enteros.
BAD_TOKENS = [
    -1,
    -(10**30),
    MAX_REPLY_TOKENS + 1,
    10**30,
    RawJSON("9" * 5000),
    2.5,
    1e400,
    None,
    "3",
    [],
    True,
]


@pytest.mark.parametrize("value", BAD_TOKENS, ids=lambda v: repr(getattr(v, "text", v))[:20])
@pytest.mark.parametrize("field", ["input_tokens", "output_tokens"])
def test_absurd_usage_is_one_line_and_nothing_saved(tmp_path, api, field, value):
    line = refused_then_resumed(tmp_path, api, 3, in_usage(field, value))
    assert "usage" in line or "no es JSON" in line


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_that_is_not_json_in_the_input_is_refused(tmp_path, api, value):
    line = refused_then_resumed(tmp_path, api, 5, in_input(RawJSON(value)))
    assert "no es finito" in line


def test_a_reply_too_big_to_keep_is_refused(tmp_path, api):
    line = refused_then_resumed(tmp_path, api, 3, in_text("x" * (MAX_REPLY_BYTES + 1)))
    assert "pesa" in line and len(line) < 1000


# —— DBOS: las mismas respuestas, y un --resume que llega a [done] ——

DBOS_CASES = {
    "final-con-sustituto": (7, as_final_text("fin \ud800")),
    "entrada-honda": (3, in_input(nested(990))),
    "tokens-negativos": (5, in_usage("input_tokens", -5)),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", DBOS_CASES)
def test_the_dbos_agent_stops_in_one_line_and_resumes_to_done(tmp_path, case, dbos_preload):
    at, change = DBOS_CASES[case]
    with FakeMessagesAPI(reply_hook=once_at(at, change)) as api:
        env = {
            **dbos_preload,
            "ANTHROPIC_API_KEY": TEST_KEY,
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_MAX_RETRIES": "0",
        }
        stopped = run_agent_process(tmp_path, agent=dbos_agent.__file__, env=env, live=True, timeout=180)
        assert stopped.returncode == 1 and one_line(stopped.stderr), stopped.stderr[-2000:]
        assert "quedó pendiente en la base" in stopped.stderr and "[done]" not in stopped.stdout
        before = snapshot(tmp_path).get("report.txt")
        resumed = run_agent_process(
            tmp_path, agent=dbos_agent.__file__, env=env, live=True, resume=True, timeout=180
        )
        again = run_agent_process(
            tmp_path, agent=dbos_agent.__file__, env=env, live=True, resume=True, timeout=180
        )
    assert resumed.returncode == 0 and resumed.stdout.endswith(DONE), resumed.stderr
    assert again.returncode == 0 and "ya había terminado" in again.stdout and again.stderr == ""
    assert report_copies(tmp_path / "report.txt") == 1
    assert (before is not None) == (at == 7)  # solo el final llega con el reporte ya escrito


def test_a_final_text_saved_by_an_older_dbos_agent_is_shown_escaped():
    """Una base de antes, con el texto final ya anotado con un sustituto: la línea [done] lo muestra
    escapado (la tarea terminó) en vez de caer al imprimirlo en cada --resume."""
    shown = dbos_agent._printable("fin \ud800 y \udfff")
    assert shown == "fin \\ud800 y \\udfff" and shown.encode("utf-8")

"""Todo lo que un servidor puede mandar es seguro (issue 34): cabeceras de espera sin sentido, estados
fuera de rango, cuerpos enormes o con caracteres de control. Una tabla de respuestas hostiles, por el
SDK real contra la API de mensajes local: nunca una traza, nunca una espera sin tope, y una sola línea
que culpa a lo que de verdad falló (no a la salida estándar, no a la conexión si el servidor contestó).

Cada caso corre ``main()`` en este mismo proceso (importar el SDK cuesta ~1 s por proceso) con el
cliente real; la espera entre reintentos se mide, no se supone: un tope roto se vería en segundos.
"""

import time

import pytest
from course_files import snapshot

from harness.defenses import live_model
from tests.fake_messages_api import TEST_KEY, Reply, error_body, served
from tests.test_live_model import run_main


@pytest.fixture
def api(monkeypatch):
    with served(monkeypatch) as server:
        yield server


def one_line(run):
    return run.stderr.endswith("\n") and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


# —— Cabeceras de espera: (cabecera, valor) → la espera pedida, como la muestra la línea ——

LONG = "más de un día"
WAITS = [
    ("retry-after", "inf", LONG),
    ("retry-after", "Infinity", LONG),
    ("retry-after-ms", "inf", LONG),
    ("retry-after", "1e17", LONG),
    ("retry-after-ms", "1e400", LONG),
    ("retry-after", "9" * 400, LONG),
    ("retry-after", "3600", "3600 s"),
    ("retry-after-ms", "120000", "120 s"),
    ("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT", LONG),
]
# Valores que no son un pedido de espera: el SDK vuelve a su espera corta de siempre.
NOT_A_WAIT = ["nan", "-1", "-inf", "1e-400x", "mañana", "", "Sun, 99 Foo 99999999999 99:99:99 GMT", "\x7f"]


@pytest.mark.parametrize(("header", "value", "shown"), WAITS, ids=[f"{h}={v[:12]}" for h, v, _ in WAITS])
def test_a_huge_wait_is_capped_and_named_in_one_line(tmp_path, api, monkeypatch, header, value, shown):
    monkeypatch.setattr(live_model, "MAX_RETRY_WAIT", 0.05)
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "1")
    api.fail(429, times=5, after=1, headers={header: value})
    start = time.monotonic()
    run = run_main(tmp_path, "--live")
    assert time.monotonic() - start < 20  # sin tope, el SDK esperaría hasta 49 días
    assert run.returncode == 1 and one_line(run), run.stderr
    line = run.stderr
    assert f"La API pidió esperar {shown} antes de reintentar ({header})" in line
    assert "salida estándar" not in line and "error del sistema" not in line
    assert "429" in line and "--resume" in line
    assert api.statuses == [200, 429, 429]  # un reintento del SDK, acortado


@pytest.mark.parametrize("value", NOT_A_WAIT, ids=repr)
@pytest.mark.parametrize("header", ["retry-after", "retry-after-ms"])
def test_a_meaningless_wait_is_ignored_and_the_run_goes_on(tmp_path, api, header, value):
    api.fail(529, times=1, after=1, headers={header: value})
    run = run_main(tmp_path, "--live")
    assert run.returncode == 0 and run.stdout.endswith("tarea completa.\n"), run.stderr
    assert run.stderr == "" and api.statuses[:2] == [200, 529]


# —— Estados y cuerpos: la línea nombra lo que pasó ——

HUGE = "x" * 2_000_000
CASES = [
    (Reply.json(600, error_body(600, "raro")), "estado HTTP 600"),
    (Reply.json(999, {"type": "error"}), "estado HTTP 999"),
    (
        Reply.json(302, {}, {"location": "http://u:clave@127.0.0.1:9/"}),
        "redirigió el pedido a http://127.0.0.1:9",
    ),
    (Reply.json(304, {}), "estado HTTP 304"),
    (Reply(204, b"", {}), "respondió 204 con algo que no es un mensaje"),
    (Reply(299, b"{}", {}), "respondió 299 con algo que no es un mensaje"),
    (Reply.json(400, error_body(400, HUGE)), "rechazó el pedido (400 invalid_request_error)"),
    (Reply.json(400, error_body(400, "línea\n\x1b[2Jborrada\r")), "línea [2Jborrada"),
    (
        Reply.json(400, {"type": "error", "error": {"type": ["raro"], "message": 7}}),
        "rechazó el pedido (400)",
    ),
    (Reply(500, HUGE.encode(), {"content-type": "text/html"}), "error del servidor (500)"),
    (Reply(200, b'{"type": "mess', {"content-length": "999999"}), "cortó la conexión a mitad"),
    (Reply(200, b"\x1f\x8b garbage", {"content-encoding": "gzip"}), "no se puede leer"),
]


@pytest.mark.parametrize(("reply", "said"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_a_hostile_reply_is_one_line_naming_what_happened(tmp_path, api, monkeypatch, reply, said):
    monkeypatch.setenv("ANTHROPIC_MAX_RETRIES", "0")
    api.inject(reply, after=1)
    run = run_main(tmp_path, "--live")
    assert run.returncode == 1 and one_line(run), run.stderr[:500]
    assert said in run.stderr and len(run.stderr) < 1000
    assert "\x1b" not in run.stderr and "\r" not in run.stderr
    assert "salida estándar" not in run.stderr and "clave@" not in run.stderr
    assert "no está al alcance" not in run.stderr or "redirigió" in run.stderr
    assert "--resume" in run.stderr  # el punto B del turno 1 quedó, y la línea dice cómo seguir


# —— Credenciales: cualquier combinación, una corrida o una línea; nunca su valor ——


@pytest.mark.parametrize(
    ("env", "used"),
    [
        ({"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_AUTH_TOKEN": TEST_KEY}, "ANTHROPIC_API_KEY"),
        (
            {"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_AUTH_TOKEN": "otro-token-que-no-vale-nada"},
            "ANTHROPIC_API_KEY",
        ),
        ({"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": TEST_KEY}, None),
        ({"ANTHROPIC_AUTH_TOKEN": TEST_KEY, "ANTHROPIC_PROFILE": "otro"}, None),
    ],
    ids=["las-dos", "las-dos-distintas", "clave-vacia", "token-y-perfil"],
)
def test_any_combination_of_credentials_runs_or_says_which_is_used(tmp_path, api, monkeypatch, env, used):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    run = run_main(tmp_path, "--live")
    assert run.returncode == 0 and run.stdout.endswith("tarea completa.\n"), run.stderr
    if used:
        assert run.stderr == (
            f"[credenciales] ANTHROPIC_API_KEY y ANTHROPIC_AUTH_TOKEN están definidas: se usa {used}, como "
            "hace el SDK; la otra no se manda.\n"
        )
    else:
        assert run.stderr == ""
    assert TEST_KEY not in run.stdout + run.stderr and "otro-token" not in run.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"ANTHROPIC_PROFILE": "trabajo"}, "ANTHROPIC_PROFILE no se usa aquí"),
        ({"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": ""}, "Falta ANTHROPIC_API_KEY"),
        ({"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": "http://[::1"}, "ANTHROPIC_BASE_URL"),
        ({"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": "no es una url"}, "ANTHROPIC_BASE_URL"),
        ({"ANTHROPIC_AUTH_TOKEN": TEST_KEY + "\r"}, "ANTHROPIC_AUTH_TOKEN tiene espacios"),
    ],
    ids=["solo-perfil", "vacias", "url-rota", "url-sin-esquema", "token-con-cr"],
)
def test_credentials_that_cannot_work_are_one_line_before_any_request(tmp_path, api, monkeypatch, env, said):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    run = run_main(tmp_path, "--live")
    assert run.returncode == 1 and one_line(run), run.stderr
    assert said in run.stderr and TEST_KEY not in run.stderr and api.requests == []
    if "url" not in said.lower() and "BASE_URL" not in said:  # antes del cliente: nada tocado
        assert snapshot(tmp_path) == {}

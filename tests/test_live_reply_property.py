"""Propiedad (issue 47): ninguna respuesta de la API deja en el disco algo que el agente no pueda cargar,
y después de cualquiera la tarea se termina o se dice en una línea por qué no.

Hypothesis arma respuestas de la API de mensajes, las que la API manda y las que no: cualquier
``stop_reason``; bloques de texto, ``tool_use``, de pensamiento, de herramientas del servidor, de tipos
desconocidos o que no son bloques; ids, nombres y entradas de cualquier forma; textos con sustitutos
sueltos; anidados de unos pocos niveles hasta miles (alrededor del tope, también); números negativos,
enormes, no finitos, con más dígitos de los que Python lee; ``usage`` con cualquier cosa. La API de
mensajes local (``tests/fake_messages_api.py``) la manda como JSON por HTTP al agente de referencia con
el SDK real, en uno de sus cuatro pedidos, y el agente muere justo después del punto A de ese turno si
lo guarda. Después, lo que haya en el disco lo cargan ``load_checkpoint`` y ``load_effects`` del
agente; cada corrida sale con 0, 137 o una sola línea y 1; y reanudar (con --resume si hay punto de
control, sin él si no) llega a ``[done]`` con un reporte, o se detiene en una línea que se repite.

Tamaño de CI: ejemplos acotados y la misma secuencia en cada corrida (``derandomize``), sin base de
ejemplos en disco.
"""

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.defenses.replies import CONTENT_DEPTH
from harness.tools import TOOL_IMPLS, report_copies
from solutions import agent
from tests.fake_messages_api import TEST_KEY, FakeMessagesAPI, RawJSON, nested
from tests.test_live_model import run_main

SURROGATE = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])
TEXT = st.one_of(
    st.text(max_size=8),
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=3), SURROGATE, st.text(max_size=3)),
)
NUMBER = st.one_of(
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just(RawJSON("9" * 5000)),  # más dígitos de los que json.loads acepta
)
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBER, TEXT),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(TEXT, kids, max_size=3),
    max_leaves=8,
)
# Anidados: cerca del tope del agente (lo que cabe se guarda, un nivel más no) y muy por encima de él.
DEEP = st.one_of(
    st.integers(CONTENT_DEPTH - 6, CONTENT_DEPTH + 1),
    st.integers(1, 1500),
    st.sampled_from([255, 260, 990, 1000, 5000]),
).map(nested)
VALUE = st.one_of(JSON, DEEP)
IDS = st.one_of(
    st.sampled_from(["toolu_01", "toolu_02", "toolu_nuevo"]),  # repetidos y uno nuevo
    st.from_regex(r"[a-zA-Z0-9_-]{1,12}", fullmatch=True),
    TEXT,
    st.integers(),
    st.none(),
)
NAMES = st.one_of(st.sampled_from([*TOOL_IMPLS, "borrar_todo", ""]), TEXT, st.none())
INPUT = st.one_of(
    st.fixed_dictionaries(
        {"path": st.sampled_from(["sales-notes.txt", "report.txt", "nada.txt"])},
        optional={"content": TEXT, "extra": VALUE},
    ),
    st.dictionaries(TEXT, VALUE, max_size=2),
    VALUE,
)
BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": IDS, "name": NAMES, "input": INPUT}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": TEXT, "signature": TEXT}),
    st.fixed_dictionaries({"type": st.just("redacted_thinking"), "data": TEXT}),
    st.fixed_dictionaries(
        {"type": st.just("server_tool_use"), "id": IDS, "name": st.just("web_search"), "input": INPUT}
    ),
    st.fixed_dictionaries({"type": TEXT}, optional={"datos": VALUE}),  # un tipo que el agente no conoce
    VALUE,  # algo que no es un bloque
)
TOKENS = st.one_of(st.integers(0, 5000), NUMBER, st.none(), TEXT)
USAGE = st.one_of(
    st.fixed_dictionaries(
        {"input_tokens": TOKENS, "output_tokens": TOKENS}, optional={"cache_read_input_tokens": TOKENS}
    ),
    VALUE,
)
STOPS = ["tool_use", "end_turn", "stop_sequence", "max_tokens", "pause_turn", "refusal", None, "raro"]
HOSTILE = st.fixed_dictionaries(
    {"stop_reason": st.sampled_from(STOPS), "content": st.lists(BLOCK, max_size=3), "usage": USAGE}
)
# Lo que un modelo real manda casi siempre: una llamada a una herramienta que existe, con un id nuevo y
# una entrada con su «path», quizá tras un texto, y tokens enteros; lo generado va en los textos y en
# un campo de más de la entrada. Así una buena parte se acepta, se ejecuta y se guarda.
PLAUSIBLE_CALL = st.fixed_dictionaries(
    {
        "type": st.just("tool_use"),
        "id": st.from_regex(r"toolu_[a-zA-Z0-9]{4,10}", fullmatch=True),
        "name": st.sampled_from(sorted(TOOL_IMPLS)),
        "input": st.fixed_dictionaries(
            {"path": st.sampled_from(["sales-notes.txt", "report.txt"])},
            optional={"content": TEXT, "extra": VALUE},
        ),
    }
)
PLAUSIBLE = st.fixed_dictionaries(
    {
        "stop_reason": st.just("tool_use"),
        "content": st.tuples(
            st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=1),
            PLAUSIBLE_CALL,
        ).map(lambda t: [*t[0], t[1]]),
        "usage": st.fixed_dictionaries(
            {"input_tokens": st.integers(0, 5000), "output_tokens": st.integers(0, 5000)}
        ),
    }
)
PLAUSIBLE_END = st.fixed_dictionaries(
    {
        "stop_reason": st.just("end_turn"),
        "content": st.lists(
            st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), min_size=1, max_size=2
        ),
    }
)
REPLY = st.one_of(PLAUSIBLE, PLAUSIBLE_END, HOSTILE)
# El pedido (por sus mensajes: 1, 3, 5 o 7) cuya respuesta se reemplaza; 7 es el del final.
AT = st.sampled_from([1, 3, 5, 7])
RESUMES = 3


@pytest.fixture(scope="module")
def api():
    """La API local de todo el módulo, y un entorno con solo sus variables ANTHROPIC_*."""
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith("ANTHROPIC_")] + ["CRASH_AFTER"]:
        os.environ.pop(name, None)
    with FakeMessagesAPI() as server:
        os.environ.update(
            ANTHROPIC_API_KEY=TEST_KEY, ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_MAX_RETRIES="0"
        )
        try:
            yield server
        finally:
            os.environ.clear()
            os.environ.update(saved)


def replace_once(at, generated):
    """Un hook: la respuesta al pedido con ``at`` mensajes es la generada, una sola vez."""
    used = []

    def hook(reply, body):
        if len(body["messages"]) != at or used:
            return reply
        used.append(at)
        return {**reply, **generated}

    return hook


@pytest.mark.slow  # unos 20 s: 45 respuestas, cada una con su corrida y sus reanudaciones
@settings(
    max_examples=45,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(generated=REPLY, at=AT)
def test_any_reply_leaves_what_the_agent_loads_and_the_task_ends(api, generated, at):
    api.reply_hook = replace_once(at, generated)
    with tempfile.TemporaryDirectory() as folder:
        wd = Path(folder)
        run = run_main(wd, "--live", crash_after=f"after-save-a:{(at + 1) // 2}")
        assert_one_event(run, (0, 1, 137))
        event(f"la corrida con la respuesta generada sale con {run.returncode}")
        loads(wd)
        lines = []
        for _ in range(RESUMES):
            if run.returncode == 0:
                break
            lines.append(run.stderr)
            run = run_main(wd, "--live", *(["--resume"] if (wd / "checkpoint.json").exists() else []))
            assert_one_event(run, (0, 1))
            loads(wd)
            if run.returncode == 1 and run.stderr == lines[-1]:
                break  # la misma línea otra vez: dice por qué no puede seguir, y no cambia nada
        event(f"al final: {'[done]' if run.returncode == 0 else 'una línea que se repite'}")
        if run.returncode == 0:
            assert run.stdout.endswith("[done] Reporte escrito en report.txt, tarea completa.\n"), run.stdout
            assert report_copies(wd / "report.txt") == 1


def assert_one_event(run, codes):
    """Un código esperado, nunca una traza; con 1, exactamente una línea en stderr, y si no, ninguna."""
    assert run.returncode in codes, (run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.stderr.count("\n") == (run.returncode == 1) and run.stderr.endswith("\n") == (
        run.returncode == 1
    ), run.stderr


def loads(wd):
    """Lo que haya en el disco lo cargan los cargadores del agente (sin punto de control, no hay nada)."""
    if not (wd / "checkpoint.json").exists():
        return
    cwd = os.getcwd()
    os.chdir(wd)
    try:
        agent.load_checkpoint()
        agent.load_effects()
    finally:
        os.chdir(cwd)

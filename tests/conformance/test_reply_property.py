"""Propiedad: ninguna respuesta del modelo deja en el disco algo que el propio agente no pueda cargar.

Hypothesis genera respuestas de todo tipo (ids repetidos o mal formados, herramientas inexistentes,
``input`` que no es un objeto, varios tool_use, cualquier ``stop_reason``) y se las da al agente a
mitad de la tarea, tras el punto B del turno 2 de la corrida guionada. Con ``CRASH_AFTER=after-save-a:1``
cada punto A que llegue a guardarse se prueba en el acto: lo que quede (punto A, punto B o el estado
final) lo cargan ``load_checkpoint`` y ``load_effects`` del agente, el registro conserva sus anotaciones
y una reanudación termina en una línea, nunca en una traza.
"""

import io
import os
import shutil
import string
from contextlib import redirect_stderr, redirect_stdout
from types import SimpleNamespace
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.crash import reset_crash_points
from harness.tools import TOOL_IMPLS

IDS = st.one_of(
    st.sampled_from(["toolu_01", "toolu_02", "toolu_nuevo"]),  # repetidos y uno válido
    st.from_regex(r"[a-zA-Z0-9_-]{1,12}", fullmatch=True),
    st.text(alphabet=string.printable + "ñ", max_size=8),
    st.integers(),
    st.none(),
)
NAMES = st.one_of(st.sampled_from([*TOOL_IMPLS, "borrar_todo", ""]), st.text(max_size=6), st.none())
INPUTS = st.one_of(
    st.fixed_dictionaries({"path": st.sampled_from(["sales-notes.txt", "report.txt", "nada.txt"])}),
    st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
    st.lists(st.integers(), max_size=2),
    st.text(max_size=4),
    st.none(),
)
TOOL_USE = st.builds(lambda i, n, x: {"type": "tool_use", "id": i, "name": n, "input": x}, IDS, NAMES, INPUTS)
TEXT = st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=10))
REPLIES = st.builds(
    lambda stop, content: SimpleNamespace(
        stop_reason=stop, content=content, usage=SimpleNamespace(input_tokens=3, output_tokens=2)
    ),
    st.sampled_from(
        ["tool_use", "tool_use", "end_turn", "pause_turn", "refusal", "max_tokens", None, "raro"]
    ),
    st.lists(st.one_of(TEXT, TOOL_USE), max_size=3),
)
FINAL = SimpleNamespace(
    stop_reason="end_turn",
    content=[{"type": "text", "text": "Listo."}],
    usage=SimpleNamespace(input_tokens=3, output_tokens=2),
)


class _Replies:
    """Un cliente que responde, en orden, las respuestas dadas y después siempre ``FINAL``."""

    def __init__(self, *replies):
        self.messages = self
        self._replies = list(replies)

    def create(self, **_):
        return self._replies.pop(0) if self._replies else FINAL


def run(agent_module, client, *args, crash_after=None):
    """``main(args)`` del agente con ``client`` en lugar del modelo; (código, stdout, stderr)."""
    reset_crash_points()
    out, err, env = io.StringIO(), io.StringIO(), {"CRASH_AFTER": crash_after or ""}
    with mock.patch.dict(os.environ, env), mock.patch.object(agent_module, "make_client", lambda _: client):
        with redirect_stdout(out), redirect_stderr(err):
            code = agent_module.main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def turn_two(agent_module, tmp_path_factory):
    """Un directorio con la corrida guionada muerta justo después del punto B del turno 2."""
    from harness.scripted_model import ScriptedModel

    wd = tmp_path_factory.mktemp("turno2")
    with mock.patch.dict(os.environ, {"AGENT_WORKDIR": str(wd)}):
        cwd = os.getcwd()
        try:
            code, *_ = run(agent_module, ScriptedModel(), crash_after="after-save-b:2")
        finally:
            os.chdir(cwd)
    assert code == 137
    return wd


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reply=REPLIES)
def test_every_reply_leaves_a_checkpoint_the_agent_loads(reply, agent_module, turn_two, tmp_path_factory):
    wd = tmp_path_factory.mktemp("respuesta")
    shutil.copytree(turn_two, wd, dirs_exist_ok=True)
    cwd = os.getcwd()
    try:
        with mock.patch.dict(os.environ, {"AGENT_WORKDIR": str(wd)}):
            ledger_before = _loaded(agent_module, wd)[1]
            code, _, err = run(agent_module, _Replies(reply), "--resume", crash_after="after-save-a:1")
            assert code in (0, 1, 137) and "Traceback (most recent call last)" not in err
            assert err.count("\n") == (code == 1), err  # un error es una sola línea
            cp, ledger = _loaded(agent_module, wd)
            assert all(ledger[k] == v for k, v in ledger_before.items())  # nada se sobrescribe
            if code != 0:  # lo que quedó se retoma hasta el final, con una línea si algo falla
                code, _, err = run(agent_module, _Replies(), "--resume")
                assert (
                    code in (0, 1)
                    and "Traceback (most recent call last)" not in err
                    and err.count("\n") == (code == 1)
                ), err
                _loaded(agent_module, wd)
    finally:
        os.chdir(cwd)


def _loaded(agent_module, wd):
    os.chdir(wd)
    return agent_module.load_checkpoint(), agent_module.load_effects()

"""Propiedades (hypothesis) de load_checkpoint y load_effects, en el mismo proceso.

Para cualquier contenido del archivo, el cargador devuelve algo con la forma esperada o lanza su error
claro (CheckpointError / LedgerError): nunca un KeyError, un TypeError ni un valor por defecto inventado.
"""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.defenses.shapes import checkpoint_problem, ledger_problem
from harness.defenses.workdir import inside

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def real(tmp_path_factory, run):
    """checkpoint.json y effects.json reales del punto A del turno 3, ya parseados."""
    workdir = tmp_path_factory.mktemp("real")
    assert run(workdir, crash_after="after-save-a:3").killed
    load = lambda name: json.loads((workdir / name).read_bytes())  # noqa: E731
    return load("checkpoint.json"), load("effects.json")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("scratch")


def load_checkpoint_from(agent_module, scratch, raw):
    """El punto de control cargado, o el texto de su CheckpointError."""
    with inside(scratch):
        with open(agent_module.CHECKPOINT_PATH, "wb") as f:
            f.write(raw)
        try:
            return agent_module.load_checkpoint()
        except agent_module.CheckpointError as err:
            return str(err)


def load_effects_from(agent_module, scratch, raw):
    with inside(scratch):
        with open(agent_module.EFFECTS_PATH, "wb") as f:
            f.write(raw)
        try:
            return agent_module.load_effects()
        except agent_module.LedgerError as err:
            return str(err)


def assert_checkpoint_outcome(outcome):
    if isinstance(outcome, str):
        assert outcome.startswith(("No se pudo parsear checkpoint.json", "checkpoint.json ")), outcome
    else:
        assert outcome["version"] == 1 and checkpoint_problem(outcome) is None


def assert_ledger_outcome(outcome):
    if isinstance(outcome, str):
        assert outcome.startswith(("No se pudo parsear effects.json", "effects.json no tiene la forma")), (
            outcome
        )
    else:
        assert isinstance(outcome, dict) and ledger_problem(outcome) is None


@SETTINGS
@given(raw=st.binary(max_size=300))
def test_any_bytes_as_checkpoint(agent_module, scratch, raw):
    assert_checkpoint_outcome(load_checkpoint_from(agent_module, scratch, raw))


@SETTINGS
@given(value=JSON)
def test_any_json_as_checkpoint(agent_module, scratch, value):
    outcome = load_checkpoint_from(agent_module, scratch, json.dumps(value).encode())
    assert isinstance(outcome, str)  # ningún JSON al azar es un punto de control válido
    assert_checkpoint_outcome(outcome)


@SETTINGS
@given(data=st.data(), value=JSON)
def test_a_real_checkpoint_with_one_value_replaced(agent_module, scratch, real, data, value):
    key = data.draw(st.sampled_from(sorted(agent_module.checkpoint("", 0, 0, [], None))), label="key")
    cp = json.loads(json.dumps(real[0]))
    cp[key] = value
    assert_checkpoint_outcome(load_checkpoint_from(agent_module, scratch, json.dumps(cp).encode()))


@SETTINGS
@given(cut=st.integers(min_value=0), garbage=st.binary(max_size=3))
def test_a_real_checkpoint_cut_anywhere_then_garbage(agent_module, scratch, real, cut, garbage):
    raw = json.dumps(real[0], ensure_ascii=False, indent=2).encode()
    outcome = load_checkpoint_from(agent_module, scratch, raw[: cut % len(raw)] + garbage)
    assert_checkpoint_outcome(outcome)
    assert isinstance(outcome, str)  # lo cortado nunca pasa por entero


@SETTINGS
@given(task=st.text(), turns=st.integers(0, 10**6), tokens=st.integers(0, 10**9))
def test_save_then_load_returns_the_same_checkpoint(agent_module, scratch, real, task, turns, tokens):
    cp = agent_module.checkpoint(task, turns, tokens, real[0]["messages"], real[0]["pendingToolUse"])
    with inside(scratch):
        agent_module.save_checkpoint(cp)
        assert agent_module.load_checkpoint() == cp


@SETTINGS
@given(raw=st.binary(max_size=300))
def test_any_bytes_as_ledger(agent_module, scratch, raw):
    assert_ledger_outcome(load_effects_from(agent_module, scratch, raw))


@SETTINGS
@given(value=JSON)
def test_any_json_as_ledger(agent_module, scratch, value):
    outcome = load_effects_from(agent_module, scratch, json.dumps(value).encode())
    assert_ledger_outcome(outcome)
    assert outcome == {} or isinstance(outcome, str)  # solo {} es un registro válido entre estos


@SETTINGS
@given(field=st.sampled_from(["name", "result", "at"]), value=JSON)
def test_a_real_ledger_with_one_field_replaced(agent_module, scratch, real, field, value):
    effects = json.loads(json.dumps(real[1]))
    effects["toolu_02"][field] = value
    assert_ledger_outcome(load_effects_from(agent_module, scratch, json.dumps(effects).encode()))


@SETTINGS
@given(result=st.text(), tool_use_id=st.text(min_size=1, max_size=12))
def test_save_effect_then_load_effects(agent_module, scratch, result, tool_use_id):
    with inside(scratch):
        if os.path.exists(agent_module.EFFECTS_PATH):
            os.remove(agent_module.EFFECTS_PATH)
        entry = {"name": "write_report", "result": result, "at": 1}
        agent_module.save_effect(tool_use_id, entry)
        assert agent_module.load_effects() == {tool_use_id: entry}

"""load_checkpoint y load_effects ante archivos que faltan, están cortados o son de otra versión.

Los mensajes esperados salen de la lección (los templates de agent.js con ``${CHECKPOINT_PATH}``).
"""

import json

import pytest
from course_files import digest
from seed_text import fill, template

UNPARSABLE = fill(template("No se pudo parsear ${CHECKPOINT_PATH}"), path="checkpoint.json")
MISSING = fill(template("No se encuentra ${CHECKPOINT_PATH}"), path="checkpoint.json")


def wrong_version(version):
    return fill(template("${CHECKPOINT_PATH} tiene version="), path="checkpoint.json", version=version)


@pytest.fixture(scope="module")
def real_checkpoint(tmp_path_factory, run):
    """Un checkpoint.json real, guardado en el punto A del turno 3 (con llamada colgante)."""
    workdir = tmp_path_factory.mktemp("real")
    assert run(workdir, crash_after="after-save-a:3").killed
    return (workdir / "checkpoint.json").read_bytes()


def test_truncated_at_every_byte_offset_raises_the_lessons_error(
    agent_module, real_checkpoint, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert "ó".encode() in real_checkpoint  # hay cortes en medio de un carácter UTF-8
    for offset in range(len(real_checkpoint)):
        (tmp_path / "checkpoint.json").write_bytes(real_checkpoint[:offset])
        with pytest.raises(agent_module.CheckpointError) as caught:
            agent_module.load_checkpoint()
        assert str(caught.value) == UNPARSABLE, offset


def test_the_lessons_own_truncated_example(agent_module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "checkpoint.json").write_text('{"version":1,"turns":3,"pendingT', encoding="utf-8")
    with pytest.raises(agent_module.CheckpointError, match="Bórralo y empieza de nuevo"):
        agent_module.load_checkpoint()


def test_the_whole_file_loads(agent_module, real_checkpoint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "checkpoint.json").write_bytes(real_checkpoint)
    cp = agent_module.load_checkpoint()
    assert cp["pendingToolUse"]["name"] == "write_report" and cp["turns"] == 3


def resume_fails_cleanly(run, workdir):
    before = digest(workdir)
    done = run(workdir, resume=True)
    assert done.returncode not in (0, 137)
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert digest(workdir) == before, "una reanudación fallida no puede cambiar nada en disco"
    return done.stderr.rstrip("\n")


def test_cli_missing_checkpoint(run, workdir):
    assert resume_fails_cleanly(run, workdir) == MISSING


def test_cli_truncated_checkpoint(run, workdir, real_checkpoint):
    (workdir / "checkpoint.json").write_bytes(real_checkpoint[: len(real_checkpoint) // 2])
    assert resume_fails_cleanly(run, workdir) == UNPARSABLE


@pytest.mark.parametrize("version", [2, None, "1"])
def test_cli_wrong_version(run, workdir, real_checkpoint, version):
    cp = json.loads(real_checkpoint)
    cp["version"] = version
    (workdir / "checkpoint.json").write_text(json.dumps(cp), encoding="utf-8")
    assert resume_fails_cleanly(run, workdir) == wrong_version(json.dumps(version))


def test_cli_ledger_that_does_not_parse_is_never_treated_as_empty(run, workdir):
    assert run(workdir, crash_after="after-effect-write:3").killed
    (workdir / "effects.json").write_text('{"toolu_01": {"name": "read_no', encoding="utf-8")
    message = resume_fails_cleanly(run, workdir)
    assert message.startswith("No se pudo parsear effects.json") and "\n" not in message

"""``python -m harness.conformidad`` como lo corre una persona: un informe en español, código 0 solo si
pasa todo, y nunca una traza; con los textos esperados tomados de la lección."""

import re
import subprocess
import sys

import pytest
from seed_text import SEED, fill, template

from harness import contract
from harness.beyond import batch_agent
from harness.conformidad import checks
from maintainer.paths import REFERENCE_AGENT

CRASH_ROW = re.compile(r"^\s+(✓|✗)\s+caída en (after-[a-z-]+:\d+)", re.MULTILINE)


def conformidad(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "harness.conformidad", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        cwd=cwd,
    )


def test_the_reference_agent_passes_with_every_crash_point():
    done = conformidad(REFERENCE_AGENT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    rows = CRASH_ROW.findall(done.stdout)
    assert len(rows) >= 12 and {status for status, _ in rows} == {"✓"}
    assert done.stdout.splitlines()[-1].endswith("✓") and "✗" not in done.stdout


def test_a_reconcile_that_does_nothing_fails_and_names_the_crash_points(tmp_path):
    broken = tmp_path / "agent.py"
    source = open(REFERENCE_AGENT, encoding="utf-8").read()
    broken.write_text(
        re.sub(r"def reconcile\(cp\):.*\n", "def reconcile(cp):\n    return None\n", source, count=1),
        encoding="utf-8",
    )
    done = conformidad(str(broken))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    failed = {label for status, label in CRASH_ROW.findall(done.stdout) if status == "✗"}
    # Sin reconcile, las dos caídas tras ejecutar write_report la repiten al reanudar.
    assert {"after-tool:3", "after-effect-write:3"} <= failed
    assert "pista:" in done.stdout and done.stdout.splitlines()[-1].startswith("33 comprobaciones")


def test_the_batch_agent_runs_the_crash_points_it_has(tmp_path):
    done = conformidad(
        batch_agent.__file__,
        "--varias-llamadas",
        "--entorno",
        f"{batch_agent.LESSON_AGENT_ENV}={REFERENCE_AGENT}",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    labels = {label for _, label in CRASH_ROW.findall(done.stdout)}
    assert {"after-tool:4", "after-effect-write:4", "after-save-b:2"} <= labels
    assert "no aplica" in done.stdout


@pytest.mark.parametrize("args", [["no-existe.py"], [REFERENCE_AGENT, "--entorno", "SIN_IGUAL"]])
def test_a_bad_command_line_is_one_spanish_line(args):
    done = conformidad(*args)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_expected_errors_are_the_lessons_own():
    path = "${CHECKPOINT_PATH}"
    assert checks.NO_CHECKPOINT == fill(template(f"No se encuentra {path}"), path="checkpoint.json")
    assert fill(template(f"No se pudo parsear {path}"), path="checkpoint.json").startswith(checks.UNPARSABLE)
    version = fill(template(f"{path} tiene version="), path="checkpoint.json", version=2)
    assert checks.WRONG_VERSION == version
    assert checks.TRUNCATED in SEED
    unknown = fill(template("Se desconoce el estado de ejecución previo"), name="write_report")
    assert contract.unknown_state_text("write_report") == unknown

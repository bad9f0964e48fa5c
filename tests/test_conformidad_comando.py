"""``python -m harness.conformidad --comando "node agent.js"``: un agente en otro lenguaje, juzgado por
las filas que lanzan el proceso entero; las que importan el agente dicen «no aplica» y por qué.

El agente es ``tests/data/node_agent/agent.js``, escrito desde el JavaScript de la lección (con un
modelo guionado y las herramientas portados de ``harness``). Sin Node, estas pruebas se saltan con su
motivo; en CI (que lo instala) fallan.
"""

import os
import re
import shutil
import subprocess

import pytest
from seed_text import transcript
from test_conformidad_cli import conformidad as _conformidad

from harness.runs.launcher import agent_command
from maintainer.paths import ROOT

NODE_AGENT = os.path.join(ROOT, "tests", "data", "node_agent", "agent.js")
NODE_MISSING = "falta Node.js (node, v18 o más) para el agente en otro lenguaje: apt-get install nodejs"
ROW = re.compile(r"^\s+(✓|✗|no aplica)\s+(.*?) · ", re.MULTILINE)


@pytest.fixture(scope="module")
def node():
    path = shutil.which("node")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI instala todo lo que piden las pruebas, y {NODE_MISSING}", pytrace=False)
        pytest.skip(NODE_MISSING)
    return path


def conformidad(*args):
    return _conformidad(*args, cwd=ROOT)  # «node tests/data/…» es relativo a la raíz


def run_node(node, workdir, agent=NODE_AGENT, **options):
    args, env = agent_command(workdir, command=[node, agent], **options)
    return subprocess.run(
        args, cwd=workdir, env=env, capture_output=True, text=True, encoding="utf-8", timeout=60
    )


def test_the_node_agent_prints_the_lessons_transcripts_to_the_letter(node, tmp_path):
    crash = run_node(node, tmp_path, crash_after="after-effect-write:3")
    assert crash.stderr == ""
    assert "".join(crash.stdout.splitlines()) + f"EXIT={crash.returncode}" == transcript(
        "CRASH_AFTER=after-effect-write:3 node agent.js"
    )
    resume = run_node(node, tmp_path, resume=True)
    assert resume.returncode == 0 and resume.stderr == ""
    assert "".join(resume.stdout.splitlines()) == transcript("node agent.js --resume")


@pytest.mark.slow
def test_the_suite_runs_the_process_rows_on_the_node_agent(node):
    done = conformidad("--comando", "node tests/data/node_agent/agent.js")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    rows = ROW.findall(done.stdout)
    # Cada una de las 12 etiquetas, juzgada por varias piezas (puntos, registro, reconcile, caídas).
    crash_rows = [(status, scenario) for status, scenario in rows if scenario.startswith("caída en after-")]
    assert {status for status, _ in crash_rows} == {"✓"} and len(crash_rows) >= 12
    labels = {scenario.split()[2] for _, scenario in crash_rows}
    assert len(labels) == 12, labels
    skipped = [scenario for status, scenario in rows if status == "no aplica"]
    # Las piezas que llaman funciones del agente (save_checkpoint, load_checkpoint, fresh_scene), al menos.
    assert len(skipped) >= 3 and "no aplica a un agente dado por --comando" in done.stdout
    assert "✗" not in done.stdout and "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow
def test_a_node_agent_whose_reconcile_does_nothing_fails_the_resume_rows(node, tmp_path):
    source = open(NODE_AGENT, encoding="utf-8").read()
    here = os.path.dirname(NODE_AGENT)
    for module in ("./scripted_model", "./tools"):  # la copia, en otra carpeta, usa los módulos de aquí
        source = source.replace(f'require("{module}")', f"require({os.path.join(here, module[2:])!r})")
    broken = source.replace(
        "const pending = cp.pendingToolUse;\n  if (!pending) return null;", "return null;", 1
    )
    assert broken != source
    agent = tmp_path / "agent.js"
    agent.write_text(broken, encoding="utf-8")
    done = conformidad("--comando", f"node {agent}", "--solo", "reconcile")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    failed = [scenario for status, scenario in ROW.findall(done.stdout) if status == "✗"]
    assert any("after-effect-write:3" in s for s in failed), done.stdout


def test_a_command_that_names_a_file_here_runs_it_from_the_work_folder(node):
    # «node tests/data/…» es relativo a donde se corre la suite; el agente corre en otra carpeta.
    done = conformidad("--comando", "node tests/data/node_agent/agent.js", "--solo", "terminal")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_node_agent_with_a_syntax_error_is_one_spanish_line_with_its_line_number(node, tmp_path):
    agent = tmp_path / "agent.js"
    agent.write_text('"use strict";\nconst fs = require("fs");\nfunction (\n', encoding="utf-8")
    done = conformidad("--comando", f"node {agent}")
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("agent.js, línea 3: error de sintaxis") and "«function (»" in done.stderr

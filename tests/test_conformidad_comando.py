"""``python -m harness.conformidad --comando "node agent.js"``: un agente en otro lenguaje, juzgado por
las filas que lanzan el proceso entero; las que importan el agente dicen «no aplica» y por qué.

El agente es ``tests/data/node_agent/agent.js``, escrito desde el JavaScript de la lección (con un
modelo guionado y las herramientas portados de ``harness``); y ``tests/data/seed_agent/agent.js``, el del
texto de la lección tal cual (su cola de respuestas fija, sin preparar las notas de ventas), que falla
solo las filas que nombra docs/mantenimiento.md. Sin Node, estas pruebas se saltan con su motivo; en CI
(que lo instala) fallan.
"""

import json
import os
import re
import shutil
import subprocess

import pytest
from seed_text import transcript
from test_conformidad_cli import conformidad as _conformidad

from harness.contract import CHECKPOINT_FILE, CRASH_VAR, EXIT_KILLED, WORKDIR_VAR, save_a_line
from harness.notebook.disk_state import read_disk_state
from harness.runs.launcher import agent_command
from harness.scenario import KINDS
from harness.tools import NOTES_PATH
from maintainer.paths import ROOT

NODE_AGENT = os.path.join(ROOT, "tests", "data", "node_agent", "agent.js")
SEED_AGENT = os.path.join(ROOT, "tests", "data", "seed_agent", "agent.js")
SEED_DOC = os.path.join(ROOT, "docs", "mantenimiento.md")
SEED_SECTION = "### Un agente en otro lenguaje (`--comando`)"
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


def seed_documented_failures():
    """Las filas que docs/mantenimiento.md dice que el agente del texto falla (la tabla de su sección)."""
    text = open(SEED_DOC, encoding="utf-8").read()
    section = text.split(SEED_SECTION, 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", section, re.MULTILINE))


def failed_rows(stdout):
    return {scenario for status, scenario in ROW.findall(stdout) if status == "✗"}


@pytest.mark.slow
def test_the_seed_agent_fails_only_the_rows_its_documentation_names(node):
    # Sin las notas que pone la suite, o contando el título del modelo del curso («# Reporte de
    # ventas») en vez del suyo («Reporte de ventas»), fallarían casi todas las filas.
    done = conformidad("--comando", "node tests/data/seed_agent/agent.js")
    documented = seed_documented_failures()
    assert len(documented) >= 10, documented
    assert failed_rows(done.stdout) == documented, done.stdout[-4000:]
    assert done.returncode == 1 and "sin comprobar" not in done.stdout and "Traceback" not in done.stderr
    passed = [scenario for status, scenario in ROW.findall(done.stdout) if status == "✓"]
    assert "caída en after-effect-write:3 (registro escrito, punto B sin guardar) y --resume" in passed


@pytest.mark.slow
def test_a_seed_agent_that_saves_its_checkpoint_in_place_fails_the_writing_rows(node, tmp_path):
    source = open(SEED_AGENT, encoding="utf-8").read()
    in_place = source.replace(
        """  const tmp = CHECKPOINT_PATH + ".tmp";
  fs.writeFileSync(tmp, JSON.stringify(cp, null, 2));
  fs.renameSync(tmp, CHECKPOINT_PATH);""",
        "  fs.writeFileSync(CHECKPOINT_PATH, JSON.stringify(cp, null, 2));",
        1,
    )
    assert in_place != source
    agent = tmp_path / "agent.js"
    agent.write_text(in_place, encoding="utf-8")
    done = conformidad("--comando", f"node {agent}", "--solo", "escritura")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    failed = failed_rows(done.stdout)
    # Cada guardado de checkpoint.json (punto A, punto B, punto B rellenado); el registro sigue entero.
    saves = ("punto A", "punto B", "punto B rellenado")
    assert failed == {f"SIGKILL antes de cada llamada al sistema de un guardado del {s}" for s in saves}
    seed = conformidad("--comando", "node tests/data/seed_agent/agent.js", "--solo", "escritura")
    assert failed_rows(seed.stdout) == set() and seed.returncode == 0, seed.stdout


def test_report_copies_are_counted_by_the_title_the_agents_own_model_asked_for(tmp_path):
    call = {
        "id": "toolu_03",
        "name": "write_report",
        "input": {"path": "report.txt", "content": "Informe\nx\n"},
    }
    answered = {"messages": [{"role": "assistant", "content": [{"type": "tool_use", **call}]}]}
    (tmp_path / "report.txt").write_text("Informe\nx\nInforme\nx\n", encoding="utf-8")
    # El pedido, en messages (ya respondido) o colgante; sin pedido, el título del modelo del curso.
    for checkpoint, copies in ((answered, 2), ({"messages": [], "pendingToolUse": call}, 2), ({}, 0)):
        (tmp_path / CHECKPOINT_FILE).write_text(json.dumps({"version": 1, **checkpoint}), encoding="utf-8")
        assert read_disk_state(tmp_path).report_copies == copies, checkpoint


def test_the_help_says_what_a_command_agent_is_given_and_what_is_expected_of_it():
    done = conformidad("--help")
    given, expected = done.stdout.split("Con --comando, la suite le da al agente:")[1].split(
        "Y espera de él:"
    )
    for fact in (WORKDIR_VAR, CRASH_VAR, NOTES_PATH, "--resume", *KINDS):
        assert fact in given, fact
    for fact in (f"{EXIT_KILLED} en la caída simulada", save_a_line("N", "…"), CHECKPOINT_FILE, "rename"):
        assert fact in expected, fact

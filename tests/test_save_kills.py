"""La escritura en cada llamada al sistema (``checks/save_kills.py``, ``checks/save_trace.py``): los
guardados se leen de una corrida de verdad con strace, sea cual sea su lenguaje, y un agente de Node que
escribe su punto de control sin temporal ni rename falla las filas de cada guardado de checkpoint.json.
Los mutantes de Python de esta clase están en ``tests/test_mutants.py``."""

import json
import os
import subprocess
import sys

import pytest
from test_conformidad_comando import NODE_AGENT, ROW, conformidad, node  # noqa: F401 (node: fixture)

from harness.conformidad.checks.save_kills import kill_plan
from harness.conformidad.checks.save_trace import POINT_A, POINT_B, kill_at, saves, watched
from harness.runs.launcher import launch
from harness.runs.strace_log import SAVE_TRACED, parse_log, strace_prefix

pytestmark = pytest.mark.needs_strace

# Dos guardados de checkpoint.json (uno con llamada colgante, otro sin), con el temporal renombrado
# antes (RENAME_FIRST) o después (RIGHT) de que sus datos salgan del búfer de Python.
SAVER = """
import json, os
def save(cp):
    f = open("checkpoint.json.tmp", "w")
    json.dump(cp, f)
{body}
save({{"version": 1, "pendingToolUse": {{"id": "toolu_01"}}}})
save({{"version": 1, "pendingToolUse": None}})
"""
RENAME_FIRST = '    os.replace("checkpoint.json.tmp", "checkpoint.json")\n    f.close()\n'
RIGHT = '    f.close()\n    os.replace("checkpoint.json.tmp", "checkpoint.json")\n'


def recorded(tmp_path, body):
    script, log = tmp_path / "saver.py", tmp_path / "strace.log"
    script.write_text(SAVER.format(body=body), encoding="utf-8")
    work = tmp_path / "trabajo"
    work.mkdir()
    prefix = strace_prefix(log, ["-e", f"trace={SAVE_TRACED}"])
    subprocess.run([*prefix, sys.executable, str(script)], cwd=work, check=True, timeout=60)
    calls = parse_log(log)
    real = os.path.realpath(work)
    return [
        (s, [calls[i].name for i in kill_plan(s, calls, False, real).changed]) for s in saves(calls, work)
    ]


@pytest.mark.parametrize(("body", "changing"), [(RIGHT, ["rename"]), (RENAME_FIRST, ["rename", "write"])])
def test_each_save_is_read_with_the_calls_that_change_its_file(tmp_path, body, changing):
    found = recorded(tmp_path, body)
    assert [s.kind for s, _ in found] == [POINT_A, POINT_B]
    assert all(s.renamed for s, _ in found)
    # Con el rename primero, el archivo cambia dos veces: vacío tras el rename, entero tras el write.
    assert [names for _, names in found] == [changing, changing]


# Antes de cada guardado, otro archivo se abre y se escribe NOISE veces, otra cantidad en la grabación que
# en las muertes: como las llamadas de otro hilo de un runtime, corren la cuenta de openat y write si no
# se filtran.
NOISY = """
import json, os
def save(cp):
    for _ in range(int(os.environ["NOISE"])):
        with open("otro.txt", "a") as other:
            other.write("x")
    with open("checkpoint.json.tmp", "w") as f:
        json.dump(cp, f)
    os.replace("checkpoint.json.tmp", "checkpoint.json")
save({"version": 1, "turns": 1})
save({"version": 1, "turns": 2})
"""


def test_a_kill_counts_only_the_calls_on_the_saved_files(tmp_path):
    script, log, work = tmp_path / "noisy.py", tmp_path / "strace.log", tmp_path / "grabada"
    script.write_text(NOISY, encoding="utf-8")
    work.mkdir()
    subprocess.run(
        [*strace_prefix(log, ["-e", f"trace={SAVE_TRACED}"]), sys.executable, str(script)],
        cwd=work,
        check=True,
        timeout=60,
        env={**os.environ, "NOISE": "5"},
    )
    calls = parse_log(log)
    found = saves(calls, work)
    names = watched(calls, found, work)
    assert "otro.txt" not in names and "checkpoint.json.tmp" in names
    second_open = found[1].calls[0]  # el openat del temporal del segundo guardado
    for n in range(5):
        run_in = tmp_path / f"muerta-{n}"
        run_in.mkdir()
        at = kill_at(calls, second_open, names, str(work), str(run_in))
        env = {**os.environ, "NOISE": str(n % 3)}
        outcome = launch([sys.executable, str(script)], cwd=run_in, env=env, kill_at=at, timeout=60)
        assert outcome.returncode in (-9, 137), outcome
        # Muerta justo antes del segundo guardado: el primero entero, y nada del segundo.
        assert json.loads((run_in / "checkpoint.json").read_text()) == {"version": 1, "turns": 1}
        assert not (run_in / "checkpoint.json.tmp").exists()


def test_a_node_agent_that_writes_its_checkpoint_in_place_fails_each_checkpoint_row(node, tmp_path):  # noqa: F811
    source = open(NODE_AGENT, encoding="utf-8").read()
    here = os.path.dirname(NODE_AGENT)
    for module in ("./scripted_model", "./tools"):  # la copia, en otra carpeta, usa los módulos de aquí
        source = source.replace(f'require("{module}")', f"require({os.path.join(here, module[2:])!r})")
    atomic = "  fs.writeFileSync(tmp, JSON.stringify(cp, null, 2));\n  fs.renameSync(tmp, CHECKPOINT_PATH);\n"
    assert source.count(atomic) == 1
    agent = tmp_path / "agent.js"
    agent.write_text(
        source.replace(atomic, "  fs.writeFileSync(CHECKPOINT_PATH, JSON.stringify(cp, null, 2));\n"),
        encoding="utf-8",
    )
    done = conformidad("--comando", f"node {agent}", "--solo", "escritura")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    rows = {scenario: status for status, scenario in ROW.findall(done.stdout) if "SIGKILL" in scenario}
    assert len(rows) == 4, done.stdout
    assert {s for s, status in rows.items() if status == "✗"} == {s for s in rows if "effects.json" not in s}
    assert done.stdout.count("sin temporal ni rename") == 3, done.stdout

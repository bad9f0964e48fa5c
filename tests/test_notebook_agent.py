"""harness.export: el agent.py que se arma con las celdas ``#| export`` de un notebook.

Las transcripciones y la caída en cada punto del agente armado desde la lección las cubren
test_transcripts.py y test_crash_matrix.py (fixture ``agent``); acá, la exportación misma.
"""

import ast
import json
import subprocess
import sys

import nbformat
import pytest
from course_files import LESSON_NOTEBOOK, snapshot
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from harness.errors import HarnessError
from harness.export import export_agent, export_cells
from harness.runner import run_agent_process

# Los nombres de la lección (DESIGN.md, «Language»), en snake_case.
SEED_FUNCTIONS = {
    "save_checkpoint",
    "load_checkpoint",
    "save_effect",
    "load_effects",
    "run_tool_uses",
    "reconcile",
    "run_agent",
    "main",
}


def write_notebook(path, cells):
    nbformat.write(new_notebook(cells=cells), path)
    return path


def run_script(path, *args):
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=60)


@pytest.fixture
def toy_notebook(tmp_path):
    return write_notebook(
        tmp_path / "toy.ipynb",
        [
            new_markdown_cell("#| export\nEsto es texto, no código."),
            new_code_cell("#| export\nimport sys\n\nGREETING = 'hola'"),
            new_code_cell("print('celda de demostración, no va al agente')"),
            new_code_cell("x = 1\n#| export\ny = 2"),  # la marca no está en la primera línea
            new_code_cell("#| exportar\nz = 3"),  # otra directiva, no «export»
            new_code_cell("#|export\ndef main():\n    print(GREETING)\n    return 3"),
        ],
    )


def test_only_code_cells_that_start_with_the_marker_are_exported(toy_notebook):
    assert export_cells(toy_notebook) == [
        "import sys\n\nGREETING = 'hola'",
        "def main():\n    print(GREETING)\n    return 3",
    ]


def test_the_agent_has_a_header_the_cells_in_order_and_the_main_guard(toy_notebook, tmp_path):
    out = export_agent(toy_notebook, tmp_path / "sub" / "agent.py")
    assert out == tmp_path / "sub" / "agent.py"
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Generado por harness.export desde toy.ipynb")
    assert [line for line in text.splitlines() if line.startswith("#|")] == []
    assert text.index("GREETING = 'hola'") < text.index("def main():")
    assert "print('celda de demostración" not in text and "y = 2" not in text and "z = 3" not in text
    assert text.endswith('if __name__ == "__main__":\n    sys.exit(main())\n')


def test_the_exported_file_runs_as_a_script(toy_notebook, tmp_path):
    done = run_script(export_agent(toy_notebook, tmp_path / "agent.py"))
    assert (done.returncode, done.stdout, done.stderr) == (3, "hola\n", "")


def test_source_stored_as_one_string_is_read_too(tmp_path):
    # nbformat guarda el código como lista de líneas; el formato también admite un solo texto.
    path = tmp_path / "string.ipynb"
    notebook = {
        "cells": [{"cell_type": "code", "source": "#| export\nimport sys\ndef main():\n    return 0\n"}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert run_script(export_agent(path, tmp_path / "agent.py")).returncode == 0


def test_a_notebook_without_export_cells_is_an_error(tmp_path):
    path = write_notebook(tmp_path / "empty.ipynb", [new_code_cell("print(1)")])
    with pytest.raises(HarnessError, match="#\\| export"):
        export_agent(path, tmp_path / "agent.py")
    assert not (tmp_path / "agent.py").exists()


def defined_names(source):
    tree = ast.parse(source)
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)]


def test_the_lessons_export_cells_define_each_seed_function_once():
    names = [name for source in export_cells(LESSON_NOTEBOOK) for name in defined_names(source)]
    assert SEED_FUNCTIONS <= set(names), f"faltan: {sorted(SEED_FUNCTIONS - set(names))}"
    assert sorted(n for n in names if names.count(n) > 1) == []


def test_the_lessons_agent_never_comes_from_solutions():
    # El agente se escribe en el notebook; importarlo de solutions/ vaciaría la lección.
    for source in export_cells(LESSON_NOTEBOOK):
        imports = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import | ast.ImportFrom)]
        modules = [n.module for n in imports if isinstance(n, ast.ImportFrom)]
        modules += [alias.name for n in imports if isinstance(n, ast.Import) for alias in n.names]
        assert not [m for m in modules if m and m.split(".")[0] == "solutions"]


def test_both_agents_reject_an_unknown_argument_in_one_line(agent, workdir):
    done = subprocess.run(
        [sys.executable, str(agent), "--reanudar"], cwd=workdir, capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    # DESIGN: una sola línea clara en stderr, que nombra lo que sobra y dice el uso.
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("Argumento desconocido: --reanudar.")
    assert "--resume" in done.stderr
    assert sorted(p.name for p in workdir.iterdir()) == []  # no tocó nada


@pytest.mark.parametrize("resume", [False, True], ids=["nueva", "resume"])
def test_the_lessons_agent_with_live_and_no_key_touches_nothing(notebook_agent, workdir, resume):
    # Una caída con el reporte ya escrito: hay report.txt, checkpoint.json y effects.json que perder.
    crashed = run_agent_process(workdir, crash_after="after-effect-write:3", agent=notebook_agent)
    assert crashed.killed and {"report.txt", "checkpoint.json"} <= set(snapshot(workdir))
    before = snapshot(workdir)
    # run_agent_process copia os.environ: la clave vacía es «falta» para make_live_client.
    run = run_agent_process(
        workdir, resume=resume, live=True, agent=notebook_agent, env={"ANTHROPIC_API_KEY": ""}
    )
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr.startswith("Falta ANTHROPIC_API_KEY:") and run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr
    assert snapshot(workdir) == before

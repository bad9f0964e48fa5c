"""harness.notebook.export: el agent.py que se arma con las celdas ``#| export`` de un notebook.

Lo que hacen los agentes armados (transcripciones, caída en cada punto, entradas malas...) lo cubre la
suite de conformidad; aquí, la exportación misma: qué celdas van, cómo una celda de producción reemplaza
una definición de la lección, el encabezado GENERADO y la marca ``# %%`` que lleva cada bloque (y una
traza) a su celda.
"""

import ast
import json
import os
import re
import subprocess
import sys

import nbformat
import pytest
from course_files import LESSON_NOTEBOOK, snapshot
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from harness.errors import HarnessError
from harness.notebook.export import CELL_MARKER, MAIN_GUARD, export_agent, export_cells, render_agent
from harness.runs.launcher import run_agent_process
from maintainer.paths import LESSON_AGENT, REFERENCE_AGENT

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


def cell_ids(path):
    return [cell["id"] for cell in nbformat.read(path, as_version=4).cells]


def test_only_code_cells_that_start_with_the_marker_are_exported(toy_notebook):
    ids = cell_ids(toy_notebook)
    assert export_cells(toy_notebook) == [
        (ids[1], "import sys\n\nGREETING = 'hola'"),
        (ids[5], "def main():\n    print(GREETING)\n    return 3"),
    ]


def test_the_agent_has_a_header_the_cells_in_order_and_the_main_guard(toy_notebook, tmp_path):
    out = export_agent(toy_notebook, tmp_path / "sub" / "agent.py")
    assert out == tmp_path / "sub" / "agent.py"
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# GENERADO desde toy.ipynb")
    assert [line for line in text.splitlines() if line.startswith("#|")] == []
    assert text.index("GREETING = 'hola'") < text.index("def main():")
    assert "print('celda de demostración" not in text and "y = 2" not in text and "z = 3" not in text
    assert text.endswith(MAIN_GUARD) and MAIN_GUARD.startswith('if __name__ == "__main__":\n')


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


def header(text):
    """Las líneas de comentario antes del primer bloque."""
    return "\n".join(text.split("\n\n", 1)[0].splitlines())


@pytest.mark.parametrize("shown_as", [None, "notebooks/toy.ipynb"])
def test_the_header_says_generated_and_names_the_notebook(toy_notebook, shown_as):
    top = header(render_agent(toy_notebook, shown_as))
    assert top.startswith("# GENERADO desde ")
    assert f"desde {shown_as or 'toy.ipynb'}:" in top and "no lo edites a mano" in top
    assert all(line.startswith("# ") for line in top.splitlines())


@pytest.mark.parametrize(
    "agent_path, sources",
    [
        (LESSON_AGENT, "notebooks/leccion_6_puntos_de_control.ipynb:"),
        (
            REFERENCE_AGENT,
            "notebooks/leccion_6_puntos_de_control.ipynb y notebooks/de_la_leccion_a_produccion.ipynb:",
        ),
    ],
    ids=["leccion", "referencia"],
)
def test_each_committed_agent_says_which_notebooks_it_comes_from(agent_path, sources):
    with open(agent_path, encoding="utf-8") as f:
        top = header(f.read())
    assert top.startswith(f"# GENERADO desde {sources}")


def two_notebooks(tmp_path):
    """Una «lección» y una «producción» de juguete: la segunda redefine ``load`` y agrega ``guard``."""
    lesson = write_notebook(
        tmp_path / "leccion.ipynb",
        [
            new_code_cell("#| export\nimport json\nimport sys\nfrom os import path, sep"),
            new_code_cell(
                "#| export\ndef load(text):\n    return json.loads(text)\n\n\ndef keep(x):\n    return x"
            ),
            new_code_cell(
                "#| export\ndef main():\n    print(load(sys.argv[1]), path.basename(sep))\n    return 0"
            ),
        ],
    )
    production = write_notebook(
        tmp_path / "produccion.ipynb",
        [
            new_code_cell(
                "#| export\nfrom os import path\n\n\ndef load(text):\n    return guard(json.loads(text))"
            ),
            new_code_cell("#| export\ndef guard(value):\n    return value if isinstance(value, int) else 0"),
        ],
    )
    return lesson, production


def test_a_later_definition_replaces_the_earlier_one_in_its_place(tmp_path):
    lesson, production = two_notebooks(tmp_path)
    text = render_agent([lesson, production])
    tree = ast.parse(text)
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    # Una sola «load», la de producción, donde estaba la de la lección; «guard», nueva, al final.
    assert defined == ["load", "keep", "main", "guard"]
    assert "guard(json.loads(text))" in text and "return json.loads(text)" not in text
    blocks = [(nb, cell) for nb, cell, _ in blocks_by_marker(text)]
    lesson_ids, production_ids = cell_ids(lesson), cell_ids(production)
    assert blocks == [
        ("leccion.ipynb", lesson_ids[0]),
        ("produccion.ipynb", production_ids[0]),  # en el lugar de la «load» reemplazada
        ("leccion.ipynb", lesson_ids[1]),  # lo que queda de esa celda: «keep»
        ("leccion.ipynb", lesson_ids[2]),
        ("produccion.ipynb", production_ids[1]),
    ]
    # «path» se importa una vez (la celda de producción), y la de la lección queda con «sep».
    imports = [ast.unparse(n) for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert imports == ["from os import sep", "from os import path"]


def test_the_composed_agent_runs_and_drops_imports_nobody_uses(tmp_path):
    lesson, production = two_notebooks(tmp_path)
    agent = export_agent([lesson, production], tmp_path / "agent.py")
    assert run_script(agent, '"texto"').stdout == "0 \n"  # la «load» de producción, con su guardia
    assert run_script(export_agent(lesson, tmp_path / "solo.py"), '"texto"').stdout == "texto \n"
    replaced = write_notebook(
        tmp_path / "sin_json.ipynb", [new_code_cell("#| export\ndef load(text):\n    return 1")]
    )
    text = render_agent([lesson, replaced])
    assert "import json" not in text  # solo la «load» reemplazada usaba json


def blocks_by_marker(text):
    """[(nombre del notebook, id de celda, código)] de cada bloque de un agent.py exportado."""
    parts = re.split(r"(?m)^(# %% .*)$", text)
    return [
        (CELL_MARKER.fullmatch(marker)["notebook"], CELL_MARKER.fullmatch(marker)["id"], code.strip("\n"))
        for marker, code in zip(parts[1::2], parts[2::2], strict=True)
    ]


@pytest.mark.parametrize("which", ["toy", "lección"])
def test_every_block_has_a_marker_naming_a_real_cell(toy_notebook, which):
    path = toy_notebook if which == "toy" else LESSON_NOTEBOOK
    text = render_agent(path)
    # Cada línea «# %%» es una marca bien formada (nada que empiece así queda sin leer).
    markers = [line for line in text.splitlines() if line.startswith("# %%")]
    assert markers and all(CELL_MARKER.fullmatch(line) for line in markers), markers
    blocks = blocks_by_marker(text)
    exported = export_cells(path)
    assert [cell_id for _, cell_id, _ in blocks] == [cell_id for cell_id, _ in exported]
    assert set(cell_id for cell_id, _ in exported) <= set(cell_ids(path))
    assert len(set(cell_ids(path))) == len(cell_ids(path))  # ids únicas: la marca lleva a una sola celda
    cells = {cell["id"]: cell for cell in nbformat.read(path, as_version=4).cells}
    for notebook, cell_id, code in blocks:
        assert notebook == os.path.basename(path)
        source = cells[cell_id].source
        assert source.startswith("#|") and code.removesuffix(MAIN_GUARD.strip("\n")).strip(
            "\n"
        ) == source.partition("\n")[2].strip("\n")


def cell_of_line(text, lineno):
    """La id de la celda de la que viene la línea ``lineno`` (desde 1) de un agent.py exportado."""
    above = text.splitlines()[:lineno]
    return next(CELL_MARKER.fullmatch(line)["id"] for line in reversed(above) if CELL_MARKER.fullmatch(line))


def test_a_traceback_leads_to_its_cell(tmp_path):
    path = write_notebook(
        tmp_path / "traza.ipynb",
        [
            new_code_cell("#| export\nimport sys"),
            new_code_cell("#| export\ndef divide(a, b):\n    return a / b"),
            new_code_cell("divide(1, 2)"),
            new_code_cell("#| export\ndef main():\n    return divide(1, 0)"),
        ],
    )
    ids = cell_ids(path)
    agent = export_agent(path, tmp_path / "agent.py")
    done = run_script(agent)
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr
    text = agent.read_text(encoding="utf-8")
    frames = [
        (int(m["line"]), m["func"])
        for m in re.finditer(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[<>\w]+)', done.stderr)
        if m["file"] == str(agent)
    ]
    assert [func for _, func in frames] == ["<module>", "main", "divide"]
    lines = text.splitlines()
    where = {func: (cell_of_line(text, line), lines[line - 1].strip()) for line, func in frames}
    assert where["divide"] == (ids[1], "return a / b")
    assert where["main"] == (ids[3], "return divide(1, 0)")
    # Y esa línea está, tal cual, en la celda que nombra la marca.
    cells = {cell["id"]: cell.source for cell in nbformat.read(path, as_version=4).cells}
    assert all(code in cells[cell_id] for cell_id, code in (where["divide"], where["main"]))


def defined_names(source):
    tree = ast.parse(source)
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)]


def test_the_lessons_export_cells_define_each_seed_function_once():
    names = [name for _, source in export_cells(LESSON_NOTEBOOK) for name in defined_names(source)]
    assert SEED_FUNCTIONS <= set(names), f"faltan: {sorted(SEED_FUNCTIONS - set(names))}"
    assert sorted(n for n in names if names.count(n) > 1) == []


def test_the_lessons_agent_never_comes_from_solutions():
    # El agente se escribe en el notebook; importarlo de solutions/ vaciaría la lección.
    for _, source in export_cells(LESSON_NOTEBOOK):
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
def test_the_agent_with_live_and_no_key_touches_nothing(agent, workdir, resume):
    # Una caída con el reporte ya escrito: hay report.txt, checkpoint.json y effects.json que perder.
    crashed = run_agent_process(workdir, crash_after="after-effect-write:3", agent=agent)
    assert crashed.killed and {"report.txt", "checkpoint.json"} <= set(snapshot(workdir))
    before = snapshot(workdir)
    # run_agent_process copia os.environ: la clave vacía es «falta» para make_live_client.
    done = run_agent_process(workdir, resume=resume, live=True, agent=agent, env={"ANTHROPIC_API_KEY": ""})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("Falta ANTHROPIC_API_KEY:") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    assert snapshot(workdir) == before

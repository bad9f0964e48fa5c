"""Una sola fuente de cada agente: ``solutions/agent_leccion.py`` es exactamente lo que generan las
celdas ``#| export`` de la lección, y ``solutions/agent.py`` lo que generan la lección y «De la lección a
producción» (``maintainer.agent_source``); ``update`` lleva de vuelta a sus celdas lo editado en cada
archivo (como ``nbdev_update``)."""

import ast
import json
import shutil
from pathlib import Path

import pytest

from harness.notebook.export import CELL_MARKER, bound_names, export_cells
from maintainer import agent_source
from maintainer.paths import LESSON, LESSON_AGENT, PRODUCTION, REFERENCE_AGENT

WRITE = "python -m maintainer.agent_source write"


def read(path):
    return Path(path).read_text(encoding="utf-8")


def definitions(source):
    """{nombre: ast.dump} de cada función y clase del nivel superior de ``source``."""
    return {
        node.name: ast.dump(node)
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


@pytest.mark.parametrize("generated", [LESSON_AGENT, REFERENCE_AGENT], ids=["leccion", "referencia"])
def test_each_committed_agent_is_what_its_notebooks_generate(generated):
    assert read(generated) == agent_source.rendered(Path(generated)), (
        f"{Path(generated).name} no es lo que generan sus notebooks: corre «{WRITE}» (o, si editaste el "
        "archivo, «python -m maintainer.agent_source update» y después «write»)."
    )


def last_definitions(*notebooks):
    """{nombre: ast.dump} de la última definición de cada función o clase en las celdas, en orden (una
    importación posterior del mismo nombre también la reemplaza)."""
    found = {}
    for notebook in notebooks:
        for _, code in export_cells(notebook):
            for node in ast.parse(code).body:
                if isinstance(node, ast.Import | ast.ImportFrom):
                    for name in bound_names(node):
                        found.pop(name, None)
                found.update(definitions(ast.unparse(node)) if hasattr(node, "name") else {})
    return found


@pytest.mark.parametrize(
    "generated, notebooks",
    [(LESSON_AGENT, [LESSON]), (REFERENCE_AGENT, [LESSON, PRODUCTION])],
    ids=["leccion", "referencia"],
)
def test_every_function_is_its_last_definition_in_the_cells(generated, notebooks):
    """La misma deriva, nombrada función por función: cuál difiere entre el archivo y su celda."""
    in_agent, in_cells = definitions(read(generated)), last_definitions(*notebooks)
    assert in_agent and in_cells
    differ = sorted(name for name in in_agent.keys() & in_cells.keys() if in_agent[name] != in_cells[name])
    assert differ == [], f"difieren entre {Path(generated).name} y sus celdas: {differ}; corre «{WRITE}»."
    assert sorted(in_agent.keys() ^ in_cells.keys()) == [], f"definidas solo en uno: corre «{WRITE}»."


def test_every_defence_replaces_a_lesson_function_or_adds_its_own():
    """Producción no copia la lección: cada función que vuelve a definir es distinta de la de la lección."""
    lesson, production = last_definitions(LESSON), last_definitions(PRODUCTION)
    same = sorted(name for name in lesson.keys() & production.keys() if lesson[name] == production[name])
    assert same == [], f"producción repite tal cual estas funciones de la lección: {same}"


def copies(tmp_path, notebook, agent):
    """El notebook y el agente copiados (el notebook con su nombre: las marcas «# %%» lo nombran)."""
    return Path(shutil.copy(notebook, tmp_path / Path(notebook).name)), Path(
        shutil.copy(agent, tmp_path / Path(agent).name)
    )


def cell_source(notebook, cell_id):
    cells = json.loads(read(notebook))["cells"]
    return "".join(next(c["source"] for c in cells if c.get("id") == cell_id))


PAIRS = [(LESSON, LESSON_AGENT), (PRODUCTION, REFERENCE_AGENT)]


@pytest.mark.parametrize("notebook, generated", PAIRS, ids=["leccion", "produccion"])
def test_update_without_edits_changes_nothing(tmp_path, notebook, generated):
    notebook, generated = copies(tmp_path, notebook, generated)
    before = notebook.read_bytes()
    assert agent_source.update(generated, notebook) == []
    assert notebook.read_bytes() == before


@pytest.mark.parametrize("notebook, generated", PAIRS, ids=["leccion", "produccion"])
def test_update_takes_an_edit_back_to_its_cell(tmp_path, notebook, generated):
    untouched = Path(notebook).read_bytes()
    copy, agent_copy = copies(tmp_path, notebook, generated)
    text = read(agent_copy)
    markers = [
        line
        for line in text.splitlines()
        if CELL_MARKER.fullmatch(line) and CELL_MARKER.fullmatch(line)["notebook"] == copy.name
    ]
    assert len(markers) >= 3
    marker = markers[1]  # un bloque del medio: ni el docstring ni el main final
    cell_id = CELL_MARKER.fullmatch(marker)["id"]
    original = cell_source(copy, cell_id)
    edited = text.replace(f"{marker}\n", f"{marker}\n# editado en el agente\n", 1)
    assert edited.count("# editado en el agente") == 1
    agent_copy.write_text(edited, encoding="utf-8")

    assert agent_source.update(agent_copy, copy) == [cell_id]

    assert cell_source(copy, cell_id) == original.replace(
        "#| export\n", "#| export\n# editado en el agente\n", 1
    )
    assert Path(notebook).read_bytes() == untouched  # el notebook del repositorio no se tocó

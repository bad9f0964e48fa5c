"""Una sola fuente del agente: ``solutions/agent.py`` es exactamente lo que generan las celdas
``#| export`` de la lección (``maintainer.agent_source``), y ``update`` lleva de vuelta a sus celdas lo
editado en el archivo (como ``nbdev_update``)."""

import ast
import json
import shutil
from pathlib import Path

from harness.export import CELL_MARKER, export_cells
from maintainer import agent_source
from maintainer.paths import LESSON, REFERENCE_AGENT

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


def test_the_committed_agent_is_what_the_lesson_generates():
    assert read(REFERENCE_AGENT) == agent_source.rendered(), (
        f"solutions/agent.py no es lo que generan las celdas «#| export» de la lección: corre «{WRITE}» "
        "(o, si editaste solutions/agent.py, «python -m maintainer.agent_source update» y después «write»)."
    )


def test_every_function_has_the_same_source_in_the_agent_and_in_the_lesson():
    """La misma deriva, nombrada función por función: cuál difiere entre el archivo y su celda."""
    in_agent = definitions(read(REFERENCE_AGENT))
    in_lesson = {}
    for _, code in export_cells(LESSON):
        in_lesson.update(definitions(code))
    assert in_agent and in_lesson
    differ = sorted(name for name in in_agent.keys() & in_lesson.keys() if in_agent[name] != in_lesson[name])
    assert differ == [], f"difieren entre solutions/agent.py y la lección: {differ}; corre «{WRITE}»."
    assert sorted(in_agent.keys() ^ in_lesson.keys()) == [], (
        f"definidas solo en uno de los dos: {sorted(in_agent.keys() ^ in_lesson.keys())}; corre «{WRITE}»."
    )


def copies(tmp_path):
    """La lección y el agente copiados (la lección con su nombre: las marcas «# %%» lo nombran)."""
    lesson = Path(shutil.copy(LESSON, tmp_path / Path(LESSON).name))
    agent = Path(shutil.copy(REFERENCE_AGENT, tmp_path / "agent.py"))
    return lesson, agent


def cell_source(lesson, cell_id):
    cells = json.loads(read(lesson))["cells"]
    return "".join(next(c["source"] for c in cells if c.get("id") == cell_id))


def test_update_without_edits_changes_nothing(tmp_path):
    lesson, agent = copies(tmp_path)
    before = lesson.read_bytes()
    assert agent_source.update(agent=agent, lesson=lesson) == []
    assert lesson.read_bytes() == before


def test_update_takes_an_edit_in_agent_py_back_to_its_cell(tmp_path):
    untouched = Path(LESSON).read_bytes()
    lesson, agent = copies(tmp_path)
    text = read(agent)
    markers = [line for line in text.splitlines() if CELL_MARKER.fullmatch(line)]
    assert len(markers) >= 3
    marker, following = markers[1], markers[2]  # un bloque del medio: ni el docstring ni el main final
    cell_id = CELL_MARKER.fullmatch(marker)["id"]
    original = cell_source(lesson, cell_id)
    # Dos cambios: una línea al comienzo del bloque y otra al final, antes del bloque siguiente.
    edited = text.replace(f"{marker}\n", f"{marker}\n# editado en solutions/agent.py\n", 1)
    edited = edited.replace(f"\n\n\n{following}\n", f'\nEDITADO = "sí"\n\n\n{following}\n', 1)
    assert edited.count("EDITADO") == 1 and edited.count("# editado en") == 1
    agent.write_text(edited, encoding="utf-8")

    assert agent_source.update(agent=agent, lesson=lesson) == [cell_id]

    source = cell_source(lesson, cell_id)
    assert source.startswith("#| export\n# editado en solutions/agent.py\n")
    assert source.endswith('\nEDITADO = "sí"')
    assert source == original.replace("#| export\n", "#| export\n# editado en solutions/agent.py\n", 1) + (
        '\nEDITADO = "sí"'
    )
    # La lección editada genera exactamente el agent.py editado: el viaje de ida y vuelta cierra.
    assert agent_source.rendered(lesson=lesson) == edited
    # Y la lección del repositorio no se tocó.
    assert Path(LESSON).read_bytes() == untouched

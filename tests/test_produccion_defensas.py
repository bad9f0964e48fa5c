"""«De la lección a producción» no promete de más: cada defensa que el agente de referencia trae y el de
la lección no, o la explica el texto que sigue a una falla mostrada (la celda ``falla``), o está en la
lista «Defensas sin falla mostrada», con una línea sobre lo que cuida."""

import ast
import os
import re

import nbformat
import pytest
from course_files import LESSON_NOTEBOOK

PRODUCTION_NOTEBOOK = os.path.join(os.path.dirname(LESSON_NOTEBOOK), "de_la_leccion_a_produccion.ipynb")
UNSHOWN = "Defensas sin falla mostrada"
# Las defensas vienen de aquí; lo demás que importa el agente (la tarea, el bucle del Curso 7) no lo es.
DEFENSE_MODULES = ("harness.defenses", "harness.errors")


def read(path):
    return nbformat.read(path, as_version=4)


def export_trees(notebook):
    return [
        ast.parse(c.source)
        for c in notebook.cells
        if c.cell_type == "code" and c.source.startswith("#| export")
    ]


def defined(trees):
    return {
        node.name for tree in trees for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)
    }


def defenses(production, lesson):
    """Lo que solo el agente de referencia tiene: lo que importa de un módulo de defensas, y cada función o
    clase que define y la lección no."""
    trees = export_trees(production)
    imported = {
        alias.asname or alias.name
        for tree in trees
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(DEFENSE_MODULES)
        for alias in node.names
    }
    return imported | (defined(trees) - defined(export_trees(lesson)))


def earned_prose(notebook):
    """El texto entre cada celda ``falla`` y su celda ``defensa``: donde una defensa se gana su lugar."""
    prose, open_section = [], False
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        open_section = ("falla" in tags or open_section) and "defensa" not in tags
        if open_section and cell.cell_type == "markdown":
            prose.append(cell.source)
    return "\n".join(prose)


def unshown_list(notebook):
    """{nombre: lo que cuida} de cada viñeta «- `nombre`…» bajo el título «Defensas sin falla mostrada»."""
    (cell,) = [
        c for c in notebook.cells if c.cell_type == "markdown" and c.source.startswith(f"## {UNSHOWN}")
    ]
    listed = {}
    for line in cell.source.splitlines():
        bullet = re.match(r"- (.+?): (.+)", line)
        if bullet:
            for name in re.findall(r"`(\w+)`", bullet.group(1)):
                listed[name] = bullet.group(2)
    return listed


def named(name, prose):
    """Si el texto nombra ``name`` como código: `name`, `name(...)`, `name.algo`."""
    return re.search(rf"`{name}\b", prose) is not None


def problems(production, lesson):
    earned, listed = earned_prose(production), unshown_list(production)
    return sorted(
        name for name in defenses(production, lesson) if not named(name, earned) and name not in listed
    )


@pytest.fixture(scope="module")
def notebooks():
    return read(PRODUCTION_NOTEBOOK), read(LESSON_NOTEBOOK)


def test_every_production_only_defense_is_shown_failing_or_listed(notebooks):
    assert problems(*notebooks) == [], "defensas sin falla mostrada y sin su línea en la lista"


def test_each_listed_defense_says_what_it_guards(notebooks):
    production, lesson = notebooks
    listed = unshown_list(production)
    assert listed, f"«{UNSHOWN}» sin viñetas"
    for name, guards in listed.items():
        assert len(guards.split()) >= 6, f"{name}: una línea que no dice qué cuida"
    assert set(listed) <= defenses(production, lesson), "la lista nombra algo que el agente no trae"


def test_the_check_fails_when_a_listed_defense_loses_its_line(notebooks):
    production, lesson = notebooks
    earned = earned_prose(production)
    name = next(name for name in unshown_list(production) if not named(name, earned))
    broken = nbformat.from_dict(production)
    for cell in broken.cells:
        if cell.source.startswith(f"## {UNSHOWN}"):
            cell.source = "\n".join(line for line in cell.source.splitlines() if f"`{name}`" not in line)
    assert name in problems(broken, lesson)


def test_the_closing_says_which_defenses_came_from_a_failure(notebooks):
    production, _ = notebooks
    closing = next(c.source for c in production.cells if c.source.startswith("## Lo que queda"))
    assert UNSHOWN in closing
    assert "Cada defensa de este notebook salió de una falla" not in closing

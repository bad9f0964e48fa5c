"""«De la lección a producción» (issue 31): cada defensa del agente de referencia, después de la falla
real que la motiva.

Cada sección es una defensa, con su título de la lista fija (los nombra la parte de producción de la
suite de conformidad). Una sección completa tiene, en este orden: una predicción, la celda ``falla``
(el agente de la lección, con salida guardada), la celda ``#| export`` de la defensa y la celda
``defensa`` (el de referencia, con la misma falla). Que las salidas guardadas sean las de hoy lo
compara nbval; aquí se exige que estén, y que digan lo que el issue pide que muestren.
"""

import os
import re

import nbformat
import pytest
from course_files import output_text

from harness.conformidad.checks.production import SECTIONS
from harness.notebook.export import EXPORT_MARKER, PRODUCTION_NOTEBOOK
from maintainer.paths import NOTEBOOKS
from maintainer.prepare import stored_notebooks

NOTEBOOK = os.path.join(NOTEBOOKS, PRODUCTION_NOTEBOOK)
MIN_SECTIONS = 8


@pytest.fixture(scope="module")
def sections():
    """{título: [celdas]} de cada sección ``## `` del notebook guardado, en orden."""
    found, current = {}, None
    for cell in nbformat.read(NOTEBOOK, as_version=4).cells:
        heading = re.match(r"## (.+)", cell.source) if cell.cell_type == "markdown" else None
        if heading:
            current = heading[1].strip()
            found[current] = []
        elif current:
            found[current].append(cell)
    return found


def tagged(cells, tag):
    return [c for c in cells if tag in c.metadata.get("tags", [])]


def is_export(cell):
    return cell.cell_type == "code" and bool(EXPORT_MARKER.fullmatch(cell.source.partition("\n")[0]))


def complete(sections):
    """Las secciones con una celda ``falla`` (las de defensa), por título."""
    return {title: cells for title, cells in sections.items() if tagged(cells, "falla")}


def test_the_defence_sections_use_the_fixed_titles_in_their_order(sections):
    defences = [title for title in sections if title in SECTIONS]
    others = [title for title in sections if title not in SECTIONS]
    assert others == ["Preparación", "Defensas sin falla mostrada", "Lo que queda"], (
        f"secciones que no están en la lista: {others}"
    )
    assert defences == sorted(defences, key=SECTIONS.index)
    assert len(complete(sections)) >= MIN_SECTIONS, sorted(complete(sections))
    assert set(complete(sections)) <= set(SECTIONS)


def test_every_defence_section_fails_then_exports_then_holds(sections):
    """Predicción → falla (agente de la lección) → #| export → defensa (agente de referencia)."""
    for title, cells in complete(sections).items():
        falla, defensa = tagged(cells, "falla"), tagged(cells, "defensa")
        assert len(falla) == 1 and len(defensa) == 1, title
        where = {name: cells.index(cell) for name, cell in (("falla", falla[0]), ("defensa", defensa[0]))}
        predictions = [cells.index(c) for c in tagged(cells, "prediccion")]
        exports = [i for i, c in enumerate(cells) if is_export(c)]
        if title != "Ctrl-C o SIGTERM mientras espera al modelo":  # su defensa es la sesión de main
            assert exports and where["falla"] < exports[0] and exports[-1] < where["defensa"], title
        assert predictions and predictions[0] < where["falla"], f"{title}: sin predicción antes de la falla"
        assert "compare(" in falla[0].source, f"{title}: la falla no compara con la predicción"
        assert "LESSON_AGENT" in falla[0].source, f"{title}: la falla no corre el agente de la lección"
        assert "REFERENCE_AGENT" in defensa[0].source, f"{title}: la defensa no corre el de referencia"


def test_every_fault_and_its_defence_have_stored_outputs_that_differ(sections):
    for title, cells in complete(sections).items():
        falla, defensa = tagged(cells, "falla")[0], tagged(cells, "defensa")[0]
        for cell in (falla, defensa):
            assert output_text(cell).strip(), f"{title}: la celda {cell.id} no tiene salida guardada"
            assert not any(o.output_type == "error" for o in cell.outputs), f"{title}: {cell.id} falló"
        assert output_text(falla) != output_text(defensa), (
            f"{title}: la defensa muestra lo mismo que la falla"
        )


def test_no_stored_output_has_a_path_or_a_traceback_of_the_notebook(sections):
    for cells in sections.values():
        for cell in cells:
            text = output_text(cell) if cell.cell_type == "code" else ""
            assert "/_trabajo/" not in text and os.path.expanduser("~") + "/" not in text, cell.id
            assert "Traceback" not in text, cell.id


# Lo que el issue pide ver en cada falla y en su defensa (los textos son los de la lección y del
# contrato: el falso [done] del tope, la línea de la interrupción, las copias del reporte).
SHOWN = {
    "El tope de turnos": (
        ["| 0 | [done] Se alcanzó el máximo de 2 turnos, deteniéndonos por nuestra cuenta"],
        ["| 1 | Se alcanzó el máximo de 2 turnos", "--resume | 0 | [done] Reporte escrito en report.txt"],
    ),
    "Dos agentes en la misma carpeta": (
        ["copias del reporte: 2"],
        ["copias del reporte: 1", "B (la segunda) | 1 |"],
    ),
    "Ctrl-C o SIGTERM mientras espera al modelo": (
        ["SIGINT | -2 | sí", "SIGTERM | -15 | no"],
        ["SIGINT | 130 | no | Interrumpido con Ctrl-C.", "SIGTERM | 143 | no | Interrumpido con SIGTERM."],
    ),
    "Dos tool_use en un turno": (
        ["los turnos guardados: [['read_notes'], ['count_words']"],
        ["así que no se ejecutó nada"],
    ),
    "Un disco que falla y sigue fallando": (
        ["con EIO | 0 | [done]", "copias del reporte: 0"],
        ["con EIO | 1 |", "copias del reporte: 1"],
    ),
    "Texto antes del tool_use": (["turno 3 | tool_use\n"], ["turno 3 | text, tool_use\n"]),
}


@pytest.mark.parametrize("title", sorted(SHOWN))
def test_the_fault_shows_the_failure_and_the_defence_holds_it(sections, title):
    cells = sections[title]
    failing, holding = SHOWN[title]
    falla, defensa = output_text(tagged(cells, "falla")[0]), output_text(tagged(cells, "defensa")[0])
    assert all(part in falla for part in failing), falla
    assert all(part in defensa for part in holding), defensa


def test_the_notebook_is_stored_and_points_to_mas_alla():
    assert NOTEBOOK in stored_notebooks()
    last = nbformat.read(NOTEBOOK, as_version=4).cells[-1]
    assert "mas_alla_motor_durable.ipynb" in last.source


# Dentro de la edición, cada import del notebook: el módulo, y el nombre que toma de él (None si es un
# «import módulo»). Imprime {módulo: de dónde vino} y los que faltan, sin importar nada de otra carpeta.
WHERE_FROM = """
import importlib, json, sys
found, missing = {}, []
for module, name in json.loads(sys.argv[1]):
    try:
        loaded = importlib.import_module(module)
    except ImportError as err:
        missing.append(f"{module}: {err}")
        continue
    found[module] = getattr(loaded, "__file__", None) or "(incorporado)"
    if name and not hasattr(loaded, name):
        try:
            importlib.import_module(f"{module}.{name}")
        except ImportError:
            missing.append(f"{name} de {module}")
print(json.dumps({"found": found, "missing": missing}))
"""


def imported_names(notebook):
    """[(módulo, nombre o None)] de cada ``import`` y ``from … import`` de las celdas de código."""
    import ast

    found = set()
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                found |= {(alias.name, None) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                found |= {(node.module, alias.name) for alias in node.names}
    return sorted(found, key=lambda pair: (pair[0], pair[1] or ""))


@pytest.mark.slow
def test_the_notebook_imports_only_what_the_student_edition_ships(tmp_path):
    """La edición para estudiantes, escrita en ``tmp_path``: cada import del notebook resuelve ahí (el
    arnés, desde la carpeta de la edición) y ninguno necesita maintainer/ ni toca ``sys.path``."""
    import json
    import subprocess
    import sys

    from solutions.grading.edicion_estudiantes import write_edition

    edition = tmp_path / "curso"
    write_edition(edition)
    assert not (edition / "maintainer").exists()
    notebook = edition / "notebooks" / PRODUCTION_NOTEBOOK
    sources = "\n".join(
        c.source for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"
    )
    assert "sys.path" not in sources and "maintainer" not in sources
    names = imported_names(notebook)
    assert ("harness.notebook.cut_states", "after_a_cut") in names  # el corte de luz (sección 1)
    done = subprocess.run(
        [sys.executable, "-c", WHERE_FROM, json.dumps(names)],
        cwd=notebook.parent,
        env={**os.environ, "PYTHONPATH": str(edition)},
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    assert not result["missing"], result["missing"]
    ours = {m: f for m, f in result["found"].items() if m.split(".")[0] in ("harness", "solutions")}
    assert ours and all(f.startswith(str(edition)) for f in ours.values()), ours

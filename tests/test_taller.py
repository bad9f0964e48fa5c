"""El taller «tu agente»: se genera de la lección, sus celdas «tu turno» no traen la respuesta, en blanco
cada comprobación dice «todavía no» (nunca una traza), y con el código de la lección pasa todo, también
la suite de conformidad como proceso aparte."""

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from harness.conformidad.checks import CAPABILITIES
from harness.notebook.workbook import DECIDED_BY, PREVIEW_WAITS, STUB
from maintainer import paths, taller
from solutions.grading.notebook_run import execute

WORKBOOK = taller.WORKBOOK
CHECK = "taller.comprobar("


def stored():
    return nbformat.read(WORKBOOK, as_version=4)


def outputs_text(cell):
    parts = []
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        parts.append(json.dumps(output.get("data", {}), ensure_ascii=False))
    return "".join(parts)


def test_the_workbook_is_what_the_lesson_and_the_template_generate():
    assert not taller.stale(), "corre «python -m maintainer prepare»"


def test_the_blank_workbook_has_at_least_five_stubs_and_no_answer():
    lesson = taller.lesson_cells()
    turns = [c for c in stored().cells if taller.TU_TURNO in c.metadata.get("tags", [])]
    assert len(turns) >= 5
    for cell in turns:
        original = lesson[cell.id.removeprefix("taller-")]
        assert "# TU CÓDIGO AQUÍ" in cell.source and "raise todavia_no(" in cell.source
        hidden = set(original.splitlines()) - set(cell.source.splitlines())
        assert hidden, cell.id  # algo de la lección quedó en blanco…
        assert not any(line.strip() and line in cell.source for line in hidden)  # …y no está en el taller


def test_the_blank_workbook_says_not_yet_and_never_a_traceback():
    cells = [c for c in stored().cells if c.cell_type == "code"]
    checks = [c for c in cells if c.source.startswith(CHECK) or c.source.startswith("taller.conformidad")]
    assert len(checks) >= 6
    for cell in checks:
        text = outputs_text(cell)
        assert "todavía no" in text and "Traceback" not in text, cell.id
    assert all(o.output_type != "error" for c in cells for o in c.outputs)


def test_the_blank_preview_of_production_says_why_it_waits_and_runs_nothing():
    preview = next(c for c in stored().cells if c.source == "taller.produccion()")
    (output,) = preview.outputs
    assert output.output_type == "stream" and output.text.count("\n") == 1, output
    assert output.text.startswith(PREVIEW_WAITS)


def test_what_each_check_waits_for_is_a_blank_of_the_workbook():
    """Cada nombre por el que espera una comprobación es un ``raise todavia_no(...)`` del taller (si la
    lección cambia sus marcas, el atajo no puede quedar esperando algo que ya no existe)."""
    text = "\n".join(c.source for c in stored().cells)
    blanks = set(STUB.findall(text))
    assert {name for name in DECIDED_BY.values() if name} <= blanks
    assert set(DECIDED_BY) <= set(CAPABILITIES)


def filled(tmp_path, replace=None):
    """Una copia del taller en ``tmp_path`` con cada celda «tu turno» escrita con el código de la lección
    (o el de ``replace`` para las que nombra), ejecutada de arriba abajo como en JupyterLab."""
    lesson, notebook = taller.lesson_cells(), stored()
    for cell in notebook.cells:
        if cell.id in (replace or {}):
            cell.source = replace[cell.id]
        elif taller.TU_TURNO in cell.metadata.get("tags", []):
            cell.source = lesson[cell.id.removeprefix("taller-")]
    shutil.copy(paths.LESSON, tmp_path)  # el taller enlaza la lección, como en notebooks/
    nbformat.write(notebook, tmp_path / "taller_tu_agente.ipynb")
    return execute(notebook, tmp_path, timeout=300)


# Lo que el taller no nombra: las defensas de producción (issue 33); el taller es el agente de la lección.
DEFENCES = (
    "stop_if_lasting",
    "warn(",
    "KEYED_WRITES",
    "keep_assistant_turn",
    "checked_turn",
    "write_durable",
    "remove_durably",
    "require_",
    "agent_session",
)


def test_the_workbook_names_no_production_defence():
    text = "\n".join(c.source for c in stored().cells)
    assert [name for name in DEFENCES if name in text] == []


def challenge(notebook):
    return next(c for c in notebook.cells if c.cell_type == "code" and c.source.startswith("#| desafio"))


@pytest.mark.slow
def test_the_workbook_filled_with_the_lesson_passes_every_check_and_the_suite(tmp_path):
    notebook = filled(tmp_path)
    checks = [c for c in notebook.cells if c.cell_type == "code" and "taller.co" in c.source]
    for cell in checks:
        text = outputs_text(cell)
        assert "✓" in text and "✗" not in text and "todavía no" not in text, (cell.id, text[-2000:])
    # El adelanto de producción: el agente de la lección no tiene sus defensas, y cada fila nombra su sección.
    preview = outputs_text(next(c for c in notebook.cells if c.source.endswith("taller.produccion()")))
    assert "✗" in preview and "De la lección a producción" in preview and "Traceback" not in preview
    # El desafío en blanco es opcional: lo dice, sin una tabla de fallas.
    blank = outputs_text(next(c for c in notebook.cells if c.source == "taller.desafio()"))
    assert "Todavía no escribiste el desafío" in blank
    agent = tmp_path / "_trabajo" / "taller" / "agent.py"
    done = subprocess.run(
        [sys.executable, "-m", "harness.conformidad", str(agent)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.slow
def test_writing_over_the_checkpoint_fails_with_a_hint_that_names_the_moment(tmp_path):
    direct = (
        "#| export\n"
        "def write_json_atomic(path, data):\n"
        "    with open(path, 'w', encoding='utf-8') as f:  # directo, sin temporal\n"
        "        json.dump(data, f, ensure_ascii=False, indent=2)\n\n\n"
        "def save_checkpoint(cp):\n"
        "    write_json_atomic(CHECKPOINT_PATH, cp)\n"
    )
    notebook = filled(tmp_path, {"taller-code-20": direct})
    check = next(c for c in notebook.cells if c.source == 'taller.comprobar("escritura")')
    text = outputs_text(check)
    assert "✗" in text and "escribió encima del archivo anterior" in text and "temporal" in text
    assert "Traceback" not in text


@pytest.mark.slow
def test_the_challenge_written_holds_at_every_crash_of_its_own_script(tmp_path):
    notebook = stored()
    solution = open(
        os.path.join(os.path.dirname(__file__), "data", "desafio_varias_llamadas.py"), encoding="utf-8"
    )
    done = filled(tmp_path, {challenge(notebook).id: solution.read()})
    text = outputs_text(next(c for c in done.cells if c.source == "taller.desafio()"))
    assert "✓" in text and "✗" not in text and "todavía no" not in text, text[-2000:]
    assert (
        "after-tool:4" in text
    )  # la segunda escritura del turno 2: una etiqueta que el guion de la lección no tiene

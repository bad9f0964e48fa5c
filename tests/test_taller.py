"""El taller «tu agente»: es su propio notebook, y solo sus celdas del agente vienen de la lección (cada una
dice de cuál, y ``maintainer.taller`` las mantiene al día sin tocar el resto); sus celdas «tu turno» no
traen la respuesta, en blanco cada comprobación dice «todavía no» (nunca una traza), y con el código de la
lección pasa todo, también la suite de conformidad como proceso aparte."""

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from harness.conformidad.checks import CAPABILITIES
from harness.notebook.workbook import DECIDED_BY, LESSON_ORIGIN, PIECE_ORDER, PREVIEW_WAITS, STUB
from maintainer import paths, taller
from solutions.grading.notebook_run import execute

WORKBOOK = taller.WORKBOOK
CHECK = "workbook.check("


def stored():
    return nbformat.read(WORKBOOK, as_version=4)


def outputs_text(cell):
    parts = []
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        parts.append(json.dumps(output.get("data", {}), ensure_ascii=False))
    return "".join(parts)


def test_the_workbooks_cells_from_the_lesson_are_what_the_lesson_gives():
    assert taller.drift() == [], "corre «python -m maintainer.taller write»"


def test_each_cell_from_the_lesson_says_where_it_comes_from_and_the_rest_is_the_workbooks():
    lesson = taller.lesson_cells()
    derived = [c for c in stored().cells if taller.origin(c)]
    assert [taller.origin(c) for c in derived] == list(lesson)  # todas, en el orden de la lección
    for cell in derived:
        origin = cell.metadata[taller.ORIGIN]
        assert origin["notebook"] == os.path.basename(paths.LESSON) and "no se edita a mano" in origin["note"]
        kind = taller.TU_TURNO if "raise not_yet(" in cell.source else taller.DE_LA_LECCION
        assert cell.metadata["tags"] == [kind, f"leccion:{origin['cell']}"], cell.id
        assert cell.metadata.get("editable", True) is (kind == taller.TU_TURNO), cell.id
    own = [c for c in stored().cells if not taller.origin(c)]
    assert not any(set(c.metadata.get("tags", [])) & {taller.TU_TURNO, taller.DE_LA_LECCION} for c in own)


def edited_by_hand(notebook):
    """``notebook`` con dos celdas de la lección y dos del taller editadas a mano; (ids de las de la
    lección, las del taller editadas)."""
    cells = {c.id: c for c in notebook.cells}
    cells["taller-code-34"].source += "\n# editada a mano"
    cells["taller-code-20"].metadata["tags"] = [taller.TU_TURNO]
    text = next(c for c in notebook.cells if c.cell_type == "markdown")
    text.source += "\n\nUn párrafo nuevo del taller."
    check = next(c for c in notebook.cells if c.source.startswith(CHECK))
    check.source += "  # una comprobación editada"
    return ["taller-code-34", "taller-code-20"], [text, check]


def test_write_brings_back_only_the_cells_from_the_lesson(tmp_path, monkeypatch, capsys):
    copy = tmp_path / "taller_tu_agente.ipynb"
    monkeypatch.setattr(taller, "WORKBOOK", str(copy))
    notebook = stored()
    drifted, own = edited_by_hand(notebook)
    nbformat.write(notebook, copy)
    assert taller.main(["check"]) == 1
    said = capsys.readouterr().err
    assert all(f"su celda {cell_id} no es lo que da" in said for cell_id in drifted), said
    assert taller.write() and not taller.write() and taller.drift() == []
    after, original = nbformat.read(copy, as_version=4), stored()
    assert len(after.cells) == len(original.cells)
    for cell, before in zip(after.cells, original.cells, strict=True):
        if cell.id in drifted:
            assert cell == before  # como la da la lección
        elif cell.id in {c.id for c in own}:
            assert cell.source != before.source and cell.get("outputs") == before.get("outputs")
        else:
            assert cell == before


def lesson_changed():
    """Las celdas de la lección con un cambio de cada clase: una celda bloqueada que cambia, una que
    ahora lleva una marca «tu turno», una nueva y una que ya no está."""
    lesson = dict(taller.lesson_cells())
    lesson["code-34"] += "\n\n\nEFFECTS_VERSION = 1"
    lesson["code-18"] = lesson["code-18"].replace("):\n", "):  # tu turno\n", 1)  # def checkpoint(…):
    gone = list(lesson)[-1]
    del lesson[gone]
    order = list(lesson)
    at = order.index("code-34") + 1
    new = {"code-35": "#| export\ndef effects_count():\n    return len(load_effects())"}
    return {i: lesson.get(i, new.get(i)) for i in [*order[:at], "code-35", *order[at:]]}, gone


def test_a_change_in_the_lesson_reaches_its_cells_and_nothing_else():
    lesson, gone = lesson_changed()
    before = stored()
    said = " · ".join(taller.problems(before, lesson))
    for expected in (
        f"ya no tiene: {gone}",
        "no trae las celdas #| export code-35",
        "taller-code-34",
        "taller-code-18",
    ):
        assert expected in said, said
    after = taller.synced(stored(), lesson)
    assert taller.problems(after, lesson) == []
    ids = [c.id for c in after.cells]
    assert ids[ids.index("taller-code-34") + 1] == "taller-code-35" and f"taller-{gone}" not in ids
    turned = next(c for c in after.cells if c.id == "taller-code-18")
    assert 'raise not_yet("checkpoint")' in turned.source and turned.metadata["tags"][0] == taller.TU_TURNO
    assert "editable" not in turned.metadata  # quien estudia la escribe
    own = [c for c in before.cells if not taller.origin(c)]
    assert [c for c in after.cells if not taller.origin(c)] == own  # el resto, igual y en su orden


def test_cells_from_the_lesson_out_of_its_order_are_left_to_a_person():
    notebook, lesson = stored(), taller.lesson_cells()
    first, second = (i for i, c in enumerate(notebook.cells) if taller.origin(c) in ("code-03", "code-18"))
    notebook.cells[first], notebook.cells[second] = notebook.cells[second], notebook.cells[first]
    assert any("en otro orden" in p for p in taller.problems(notebook, lesson))
    with pytest.raises(SystemExit, match="en otro orden"):
        taller.synced(notebook, lesson)


def test_the_blank_workbook_has_at_least_five_stubs_and_no_answer():
    lesson = taller.lesson_cells()
    turns = [c for c in stored().cells if taller.TU_TURNO in c.metadata.get("tags", [])]
    assert len(turns) >= 5
    for cell in turns:
        original = lesson[taller.origin(cell)]
        assert "# TU CÓDIGO AQUÍ" in cell.source and "raise not_yet(" in cell.source
        hidden = set(original.splitlines()) - set(cell.source.splitlines())
        assert hidden, cell.id  # algo de la lección quedó en blanco…
        assert not any(line.strip() and line in cell.source for line in hidden)  # …y no está en el taller


def test_the_blank_workbook_says_not_yet_and_never_a_traceback():
    cells = [c for c in stored().cells if c.cell_type == "code"]
    checks = [c for c in cells if c.source.startswith((CHECK, "workbook.conformance()"))]
    assert len(checks) >= 6
    for cell in checks:
        text = outputs_text(cell)
        assert "todavía no" in text and "Traceback" not in text, cell.id
    assert all(o.output_type != "error" for c in cells for o in c.outputs)


def test_the_blank_preview_of_production_says_why_it_waits_and_runs_nothing():
    preview = next(c for c in stored().cells if c.source == "workbook.production()")
    (output,) = preview.outputs
    assert output.output_type == "stream" and output.text.count("\n") == 1, output
    assert output.text.startswith(PREVIEW_WAITS)


def test_what_each_check_waits_for_is_a_blank_of_the_workbook():
    """Cada nombre por el que espera una comprobación es un ``raise not_yet(...)`` del taller (si la
    lección cambia sus marcas, el atajo no puede quedar esperando algo que ya no existe)."""
    text = "\n".join(c.source for c in stored().cells)
    blanks = set(STUB.findall(text))
    assert {name for name in DECIDED_BY.values() if name} <= blanks
    assert set(DECIDED_BY) <= set(CAPABILITIES)


def test_the_pieces_are_in_the_workbooks_order_and_each_knows_its_lesson_cell():
    """Una comprobación usa la versión de la lección de las piezas que vienen después de la suya: ese
    orden es el de las celdas del taller, y cada celda en blanco dice de qué celda de la lección viene."""
    cells = [c for c in stored().cells if STUB.search(c.source)]
    in_order = [name for c in cells for name in STUB.findall(c.source) if name in PIECE_ORDER]
    assert in_order == list(PIECE_ORDER)
    assert LESSON_ORIGIN == taller.ORIGIN and all(taller.origin(c) for c in cells)


def filled(tmp_path, replace=None):
    """Una copia del taller en ``tmp_path`` con cada celda «tu turno» escrita con el código de la lección
    (o el de ``replace`` para las que nombra), ejecutada de arriba abajo como en JupyterLab."""
    lesson, notebook = taller.lesson_cells(), stored()
    for cell in notebook.cells:
        if cell.id in (replace or {}):
            cell.source = replace[cell.id]
        elif taller.TU_TURNO in cell.metadata.get("tags", []):
            cell.source = lesson[taller.origin(cell)]
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
    checks = [c for c in notebook.cells if c.source.startswith((CHECK, "workbook.conformance()"))]
    for cell in checks:
        text = outputs_text(cell)
        assert "✓" in text and "✗" not in text and "todavía no" not in text, (cell.id, text[-2000:])
    # El adelanto de producción: el agente de la lección no tiene sus defensas, y cada fila nombra su sección.
    preview = outputs_text(next(c for c in notebook.cells if c.source == "workbook.production()"))
    assert "✗" in preview and "De la lección a producción" in preview and "Traceback" not in preview
    # El desafío en blanco es opcional: lo dice, sin una tabla de fallas.
    blank = outputs_text(next(c for c in notebook.cells if c.source == "workbook.challenge()"))
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
    check = next(c for c in notebook.cells if c.source == 'workbook.check("escritura")')
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
    text = outputs_text(next(c for c in done.cells if c.source == "workbook.challenge()"))
    assert "✓" in text and "✗" not in text and "todavía no" not in text, text[-2000:]
    assert (
        "after-tool:4" in text
    )  # la segunda escritura del turno 2: una etiqueta que el guion de la lección no tiene

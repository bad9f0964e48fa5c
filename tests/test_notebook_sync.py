"""El notebook de la lección, en sincronía con su ejecución, con la lección y con el arnés.

Re-ejecutar cada celda en un kernel nuevo y comparar sus salidas con las guardadas ya lo hace nbval
(``pytest notebooks/``, modo estricto, con tests/nbval_sanitize.cfg): si un cambio del arnés cambia lo
que imprime una celda, esa prueba falla. Estas pruebas cubren lo que nbval no mira: que las salidas
guardadas salgan de una sola corrida limpia de arriba abajo, que no tengan rastros de esta máquina,
que digan lo que dice la lección, y que el notebook siga el orden de la lección.
"""

import glob
import os
import re
import tempfile

import nbformat
import pytest
from course_files import output_text
from seed_text import SEED, transcript

from maintainer import prepare
from maintainer.paths import ROOT as REPO_ROOT
from solutions.grading.notebook_run import WIDGET_VIEW

NOTEBOOKS = os.path.join(REPO_ROOT, "notebooks")
LESSON = os.path.join(NOTEBOOKS, "leccion_6_puntos_de_control.ipynb")
RERUN = "re-ejecuta el notebook desde cero y guárdalo: python -m maintainer prepare --solo salidas"
# Donde empieza cada entrada entre corchetes de las transcripciones, que en la lección quedaron pegadas.
ENTRY = re.compile(r"(?=\[(?:turn \d+|kill|resume|done)\]|EXIT=)")


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(LESSON, as_version=4)


def code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def all_output(notebook):
    return "\n".join(output_text(cell) for cell in code_cells(notebook))


def test_stored_outputs_come_from_one_clean_run_from_the_top(notebook):
    counts = [cell.execution_count for cell in code_cells(notebook)]
    assert counts == list(range(1, len(counts) + 1)), f"las celdas no se ejecutaron en orden; {RERUN}"


def rerun_command(path):
    """Cómo se regenera cada notebook de notebooks/ (README, «Mantener los notebooks»)."""
    name = os.path.basename(path)
    if name.startswith("ejercicio_"):
        return "python -m maintainer prepare --solo ejercicios"
    return "python -m maintainer prepare --solo salidas"


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(NOTEBOOKS, "*.ipynb"))), ids=os.path.basename)
def test_stored_outputs_are_written_the_same_way_every_time(path):
    # Sin marcas de tiempo ni un print partido en dos streams: dos corridas limpias, el mismo archivo.
    rerun = f"re-ejecútalo desde cero y guárdalo: {rerun_command(path)}"
    for i, cell in enumerate(code_cells(nbformat.read(path, as_version=4)), 1):
        streams = [o.name for o in cell.outputs if o.output_type == "stream"]
        assert "execution" not in cell.metadata, f"la celda de código {i} guarda tiempos; {rerun}"
        assert len(streams) == len(set(streams)), f"la celda de código {i} tiene streams partidos; {rerun}"
        assert not any(WIDGET_VIEW in o.get("data", {}) for o in cell.outputs), (
            f"celda {i}: vista de widget; {rerun}"
        )


def test_no_cell_stored_an_error(notebook):
    for i, cell in enumerate(code_cells(notebook), 1):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors and "Traceback" not in output_text(cell), f"la celda de código {i} falló; {RERUN}"


def test_stored_outputs_hold_no_trace_of_this_machine(notebook):
    text = all_output(notebook)
    for leak in {REPO_ROOT, tempfile.gettempdir() + os.sep, os.path.expanduser("~") + os.sep}:
        assert leak not in text, f"una salida guardada muestra la ruta {leak}"
    assert not re.search(r"0x[0-9a-f]{6,}", text), "una salida guardada muestra una dirección de memoria"


def entries(text):
    """Una transcripción de la lección, una entrada entre corchetes por elemento."""
    return [entry for entry in ENTRY.split(text) if entry]


def stored_run(notebook, command):
    """Lo que imprimió la primera corrida guardada de ``$ command``, una línea por elemento."""
    lines = all_output(notebook).splitlines()
    after = lines[lines.index(f"$ {command}") + 1 :]
    return after[: next(i for i, line in enumerate(after) if not line.startswith(("[", "EXIT=")))]


def test_stored_terminal_runs_read_as_the_lessons_transcripts(notebook):
    crash = stored_run(notebook, "CRASH_AFTER=after-effect-write:3 python agent.py")
    assert crash == entries(transcript("CRASH_AFTER=after-effect-write:3 node agent.js"))
    resume = stored_run(notebook, "python agent.py --resume")
    assert resume == entries(transcript("node agent.js --resume"))


def test_each_reconcile_branch_prints_the_lessons_line(notebook):
    # Las dos líneas que la lección muestra tal cual, y la del acierto, de su transcripción.
    expected = re.findall(r"^\[resume\]\[reconcile\] tool_use_id=toolu_(?:ro|side) .*$", SEED, re.M)
    expected.append(entries(transcript("node agent.js --resume"))[1])
    assert len(set(expected)) == 3
    stored = all_output(notebook).splitlines()
    for line in expected:
        assert line in stored, f"ninguna salida guardada muestra la línea de la lección {line!r}"


def test_the_solo_b_experiment_shows_the_report_written_twice(notebook):
    # Lección, «Resumen»: sin punto A la llamada colgante es invisible; DESIGN: write_report agrega.
    resumed = "$ python agent_solo_b.py --resume"  # el mismo agente sin las líneas del punto A
    cell = next(c for c in code_cells(notebook) if resumed in output_text(c).splitlines())
    table = [line.split(" | ") for line in output_text(cell).splitlines() if " | " in line]
    header, report = table[0], next(row for row in table if row[0] == "report.txt")
    copies = {column: int(text.split()[0]) for column, text in zip(header[1:], report[1:], strict=True)}
    assert copies == {"solo_b": 2, "dos_puntos": 1}


def lesson_sections():
    """Las secciones de la lección en orden, de su índice al final del texto (las notas al pie,
    «Footnotes», son las «Referencias» del resumen)."""
    toc = SEED[SEED.rindex("Lección 6: Manos a la obra") :].splitlines()[1:]
    titles = [line.strip() for line in toc if line.strip()]
    titles = [title for title in titles[: titles.index("Ejercicios") + 1] if title != "Footnotes"]
    # El índice no nombra la sección del colega que propone quitar el punto A; va antes de main().
    titles.insert(
        titles.index("El punto de entrada: --resume en main()"), "¿Se sostiene guardar solo el punto B?"
    )
    return [title.split(":")[0] for title in titles]


def test_the_notebook_follows_the_lessons_sections_in_order(notebook):
    headings = [
        line.lstrip("#").strip().replace("`", "")
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    ]
    positions = []
    for section in lesson_sections():
        found = [i for i, heading in enumerate(headings) if heading.startswith(section)]
        assert found, f"falta la sección de la lección «{section}»"
        positions.append(found[0])
    assert positions == sorted(positions), "las secciones no siguen el orden de la lección"


def test_relative_links_point_to_files_that_exist(notebook):
    links = [
        target
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for target in re.findall(r"\]\(([^)#:]+)\)", re.sub(r"`[^`]*`", "", cell.source))  # sin el código
    ]
    assert {"ejercicio_nivel_1.ipynb", "ejercicio_nivel_2.ipynb"} <= set(links)
    for target in links:
        assert os.path.exists(os.path.join(NOTEBOOKS, target)), (
            f"el enlace {target} no lleva a ningún archivo"
        )


def test_check_names_outputs_that_came_from_other_code(tmp_path):

    copy = tmp_path / "leccion.ipynb"
    notebook = nbformat.read(LESSON, as_version=4)
    nbformat.write(prepare.stamped(notebook, LESSON), copy)
    assert prepare.stale_outputs(copy) == []
    # Una celda que cambió después de ejecutar: sus salidas ya no son lo que imprime el código.
    code = next(c for c in notebook.cells if c.cell_type == "code" and "[save B]" in c.source)
    code.source = code.source.replace("[save B]", "[guardado B]")
    nbformat.write(notebook, copy)
    assert prepare.stale_outputs(copy)


def test_the_fingerprint_follows_the_harness(tmp_path):

    (tmp_path / "harness").mkdir()
    (tmp_path / "solutions").mkdir()
    for name in ("agent_leccion.py", "agent.py"):
        (tmp_path / "solutions" / name).write_text("", encoding="utf-8")
    (tmp_path / "harness" / "contract.py").write_text('LINE = "[save B]"\n', encoding="utf-8")
    before = prepare.sources_digest(LESSON, root=tmp_path)
    (tmp_path / "harness" / "contract.py").write_text('LINE = "[guardado B]"\n', encoding="utf-8")
    assert prepare.sources_digest(LESSON, root=tmp_path) != before

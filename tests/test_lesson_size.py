"""La lección muestra sus ideas al tamaño de la lección: cada celda «#| export» cabe en una pantalla y
la primera celda de código trae pocas piezas del arnés; lo demás llega en una línea donde se usa."""

import ast
import json
import re
from pathlib import Path

from course_files import LESSON_NOTEBOOK

from harness.notebook.export import EXPORT_MARKER, export_cells
from maintainer.paths import LESSON_AGENT

MAX_EXPORT_LINES = 30
MAX_FIRST_CELL_NAMES = 12


def code_cells():
    with open(LESSON_NOTEBOOK, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    return [(c["id"], "".join(c["source"])) for c in cells if c["cell_type"] == "code"]


def test_every_export_cell_fits_in_thirty_lines():
    sizes = {cell_id: len(code.splitlines()) + 1 for cell_id, code in export_cells(LESSON_NOTEBOOK)}
    assert len(sizes) >= 10
    assert {cell_id: n for cell_id, n in sizes.items() if n > MAX_EXPORT_LINES} == {}


def test_the_first_code_cell_imports_few_names_from_the_harness():
    cell_id, code = code_cells()[0]
    assert EXPORT_MARKER.fullmatch(code.partition("\n")[0]), "la primera celda de código es la del agente"
    names = [
        alias.name
        for node in ast.walk(ast.parse(code.partition("\n")[2]))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness")
        for alias in node.names
    ]
    assert 0 < len(names) <= MAX_FIRST_CELL_NAMES, names


# —— El agente de la lección, a su tamaño (issue 31) ——

MAX_LESSON_AGENT_LINES = 200
MAX_HARNESS_NAMES = 9  # con WORKDIR_VAR: el nombre de la variable se escribe una vez, en harness.contract
# El issue 31 pide a lo sumo 6.000 palabras; la lección queda con margen para cualquier otra forma de
# contar (la de \w+ da unas 100 más que la de espacios).
MAX_LESSON_WORDS = 5700
MAX_LESSON_WORDS_BY_SPACES = 5500


def code_lines(text):
    """Las líneas de código: sin las en blanco ni los comentarios (los docstrings sí cuentan)."""
    return [line for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def harness_names(text):
    return [
        alias.asname or alias.name
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ImportFrom | ast.Import)
        for alias in node.names
        if (getattr(node, "module", None) or alias.name).split(".")[0] == "harness"
    ]


def test_the_lessons_agent_is_the_lessons_size():
    text = Path(LESSON_AGENT).read_text(encoding="utf-8")
    assert len(code_lines(text)) <= MAX_LESSON_AGENT_LINES
    names = harness_names(text)
    assert 0 < len(names) <= MAX_HARNESS_NAMES, names
    # Lo que la lección pone a la vista: el rename atómico y el conjunto de solo lectura.
    assert "os.replace(" in text and "in READ_ONLY" in text


def test_the_lessons_agent_holds_no_start_up_tuning():
    """Lo que importa el agente de la lección es la lección: nada del recolector de basura ni de la
    velocidad de arranque (eso vive en el arnés, ``harness.crash``)."""
    tree = ast.parse(Path(LESSON_AGENT).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not imported & {"gc", "atexit"}, imported


def lesson_markdown():
    with open(LESSON_NOTEBOOK, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_the_lesson_reads_in_under_an_hour():
    """Dos cuentas, y vale la más estricta: por espacios (``str.split``) y por palabras sueltas
    (``\\w+``: una ruta, una etiqueta como ``after-effect-write:3`` o un enlace cuentan cada parte)."""
    text = lesson_markdown()
    by_spaces, by_words = len(text.split()), len(re.findall(r"\w+", text))
    assert by_spaces <= MAX_LESSON_WORDS_BY_SPACES, f"{by_spaces} palabras de markdown (por espacios)"
    assert by_words <= MAX_LESSON_WORDS, f"{by_words} palabras de markdown (\\w+)"

"""La lección muestra sus ideas al tamaño de la lección: cada celda «#| export» cabe en una pantalla y
la primera celda de código trae pocas piezas del arnés; lo demás llega en una línea donde se usa."""

import ast
import json
import re
from pathlib import Path

import pytest
from course_files import LESSON_NOTEBOOK

from harness.notebook.export import EXPORT_MARKER, export_cells
from maintainer.paths import LESSON_AGENT, REFERENCE_AGENT

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
# El issue 45 pide a lo sumo 5000 palabras de markdown (una hora de lectura), con cualquiera de las dos
# formas de contar: la de \w+ da unas 100 más que la de espacios.
MAX_LESSON_WORDS = 5000
# La autoevaluación: al menos 8 preguntas que piden razonar, sin respuestas impresas.
MIN_SELF_CHECK_QUESTIONS = 8


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


# Lo que afina el arranque o el intérprete, no la lección: el recolector de basura, lo que corre al
# salir, la prioridad, los hilos, la recursión, y el hijo de un fork.
TUNING_MODULES = {"gc", "atexit", "resource", "sysconfig"}
TUNING_CALLS = {"setswitchinterval", "setrecursionlimit", "nice", "register_at_fork", "sched_setaffinity"}


def tuning(code):
    """Lo que ``code`` importa o llama para afinar el arranque: los módulos y las funciones de arriba."""
    tree = ast.parse(code)
    imported = {
        (a.name if isinstance(n, ast.Import) else n.module or "").split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    called = {
        n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }
    return sorted(imported & TUNING_MODULES) + sorted(called & TUNING_CALLS)


def test_the_agents_hold_no_start_up_tuning():
    """Lo que importa el agente de la lección es la lección: nada del recolector de basura ni de la
    velocidad de arranque (eso vive en el arnés, ``harness.crash``, donde quien estudia no lo lee). Ni en
    los agentes generados ni en las celdas ``#| export`` de ningún notebook, de las que salen."""
    for agent in (LESSON_AGENT, REFERENCE_AGENT):
        assert tuning(Path(agent).read_text(encoding="utf-8")) == [], agent
    notebooks = sorted(Path(LESSON_NOTEBOOK).parent.glob("*.ipynb"))
    found = {
        f"{path.name}:{cell_id}": tuning(code)
        for path in notebooks
        for cell_id, code in export_cells(path)
        if tuning(code)
    }
    assert len(notebooks) >= 2 and found == {}


@pytest.mark.parametrize(
    "code",
    ["import gc\ngc.freeze()", "import atexit", "import sys\nsys.setswitchinterval(1)", "os.nice(5)"],
)
def test_the_tuning_check_sees_each_kind(code):
    assert tuning(code)


def lesson_markdown():
    with open(LESSON_NOTEBOOK, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def word_counts(text):
    """Dos cuentas: por espacios (``str.split``) y por palabras sueltas (``\\w+``: una ruta, una
    etiqueta como ``after-effect-write:3`` o un enlace cuentan cada parte)."""
    return len(text.split()), len(re.findall(r"\w+", text))


def test_the_lesson_reads_in_about_an_hour():
    """A lo sumo 5000 palabras de markdown con las dos cuentas (la autoevaluación incluida)."""
    by_spaces, by_words = word_counts(lesson_markdown())
    assert by_spaces <= MAX_LESSON_WORDS, f"{by_spaces} palabras de markdown (por espacios)"
    assert by_words <= MAX_LESSON_WORDS, f"{by_words} palabras de markdown (\\w+)"


def test_the_word_count_counts_every_part_of_a_label():
    assert word_counts("`CRASH_AFTER=after-effect-write:3` y https://example.com/a") == (3, 10)


def lesson_cells():
    with open(LESSON_NOTEBOOK, encoding="utf-8") as f:
        return json.load(f)["cells"]


def self_check_questions(cells):
    """Las preguntas numeradas de la celda ``autoevaluacion`` (tiene que haber una, de markdown)."""
    (cell,) = [c for c in cells if "autoevaluacion" in c["metadata"].get("tags", [])]
    assert cell["cell_type"] == "markdown"
    return re.findall(r"^\d+\. (.+)$", "".join(cell["source"]), re.M)


def test_the_lesson_ends_with_a_self_check_without_answers():
    """Al final (junto al glosario, antes de los ejercicios), al menos 8 preguntas; cada ítem es una
    pregunta, y nada imprime respuestas: ni la celda (sin «Respuesta», sin bloques plegados) ni otra
    celda de la lección que la siga."""
    cells = lesson_cells()
    questions = self_check_questions(cells)
    assert len(questions) >= MIN_SELF_CHECK_QUESTIONS, questions
    assert all(q.rstrip().endswith("?") for q in questions), questions
    ids = [c["id"] for c in cells]
    at = next(i for i, c in enumerate(cells) if "autoevaluacion" in c["metadata"].get("tags", []))
    glossary = next(i for i, c in enumerate(cells) if "glosario" in c["metadata"].get("tags", []))
    exercises = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith("## Ejercicios"))
    assert abs(at - glossary) == 1 and at < exercises, ids[at - 2 : at + 2]
    after = "".join("".join(c["source"]) for c in cells[at:])
    assert not re.search(r"respuesta|<details", after, re.I), "la autoevaluación no trae sus respuestas"


def test_the_self_check_test_fails_when_questions_are_missing():
    cells = [{"cell_type": "markdown", "metadata": {"tags": ["autoevaluacion"]}, "source": ["1. ¿Por qué?"]}]
    assert len(self_check_questions(cells)) < MIN_SELF_CHECK_QUESTIONS

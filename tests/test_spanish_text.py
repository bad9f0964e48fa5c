"""El español que lee quien estudia: neutro, con tuteo y plurales de verdad.

En cada notebook, su texto (markdown) y todo lo que muestran sus salidas guardadas (texto, HTML, SVG y
el texto alternativo de los dibujos), y en el README y las páginas de ``docs/``: nada de «acá» (se dice
«aquí»), nada de voseo, nada de plurales perezosos como «copia(s)» o «paso(s)», y una sola palabra por
concepto, la del glosario: «estado guardado» (no «escena»), «llamada colgante» (no «pendiente»), y
«fallo» solo para el fallo en el registro (lo que se rompe es una «falla»). La prueba de
``test_lesson_claims.py`` revisa los plurales del texto plano de las salidas; esta suma el markdown,
las salidas en HTML o SVG, los documentos, «acá» y el voseo.
"""

import glob
import html
import os
import re

import nbformat
import pytest

from harness.text import number
from maintainer.paths import ROOT

NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
DOCS = [os.path.join(ROOT, "README.md"), *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]
# Lo que no va: «acá», un plural perezoso, o una forma del voseo que no es también otra cosa.
PROBLEMS = {
    "«acá» (di «aquí»)": re.compile(r"\bacá\b", re.I),
    "plural perezoso": re.compile(r"\w\((s|es)\)"),
    "voseo": re.compile(r"\b(podés|tenés|querés|sabés|fijate|mirá|probá|usá|corré|hacé|elegí vos)\b", re.I),
    # Una palabra por concepto, la del glosario de la lección (la celda «glosario»).
    "«escena» (di «estado guardado»)": re.compile(r"\bescenas?\b", re.I),
    "miles con coma o punto (di «5 546 532»: harness.text.number)": re.compile(
        r"(?<![\d.,])[1-9]\d{0,2}([.,]\d{3})+(?![\d.,]*\d)"
    ),
    "«llamada pendiente» (di «llamada colgante»)": re.compile(r"\bllamadas? pendientes?\b", re.I),
    "«fallo» fuera de «fallo en el registro» (lo que se rompe es una «falla»)": re.compile(
        r"\bfallos?\b(?! (en el registro|de solo lectura|con efectos))", re.I
    ),
}


# En el código que lee quien estudia (el paquete harness y las celdas de código), sus comentarios y
# textos: sin «acá» ni voseo (el plural perezoso no, porque ``len(s)`` es código).
CODE_PROBLEMS = {
    name: pattern for name, pattern in PROBLEMS.items() if not name.startswith(("plural perezoso", "miles"))
}
HARNESS = sorted(glob.glob(os.path.join(ROOT, "harness", "**", "*.py"), recursive=True))


def readable(text):
    """Lo que se lee de un texto o HTML: sin estilos ni etiquetas, con el texto alternativo de las imágenes."""
    alts = " ".join(re.findall(r'alt="([^"]*)"', text))
    return html.unescape(re.sub(r"<style>.*?</style>|<[^>]*>", " ", text, flags=re.S) + " " + alts)


def problems(where, text, patterns=PROBLEMS):
    found = []
    for name, pattern in patterns.items():
        for match in pattern.finditer(text):
            start = max(0, match.start() - 40)
            found.append(f"{where}: {name}: …{text[start : match.end() + 20]}…")
    return found


def notebook_texts(path):
    """(dónde, texto) de cada markdown y cada salida guardada del notebook."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            yield f"celda {i} (markdown)", cell.source
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                yield f"celda {i} (salida)", output.text
            for kind, value in output.get("data", {}).items():
                if isinstance(value, str) and not kind.startswith("image/png"):
                    yield f"celda {i} ({kind})", readable(value)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_text_and_outputs_read_as_neutral_spanish(path):
    found = [p for where, text in notebook_texts(path) for p in problems(where, text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", DOCS, ids=os.path.basename)
def test_docs_read_as_neutral_spanish(path):
    with open(path, encoding="utf-8") as f:
        found = problems(os.path.basename(path), f.read())
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", HARNESS, ids=lambda p: os.path.relpath(p, ROOT))
def test_the_harness_code_reads_as_neutral_spanish(path):
    with open(path, encoding="utf-8") as f:
        found = problems(os.path.relpath(path, ROOT), f.read(), CODE_PROBLEMS)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_code_cells_read_as_neutral_spanish(path):
    cells = nbformat.read(path, as_version=4).cells
    code = [(f"celda {i} (código)", c.source) for i, c in enumerate(cells) if c.cell_type == "code"]
    found = [p for where, text in code for p in problems(where, text, CODE_PROBLEMS)]
    assert not found, "\n".join(found)


def test_the_check_finds_each_problem():
    for bad in (
        "si muere acá",
        "2 copia(s)",
        "¿podés verlo?",
        "la escena del turno 2",
        "una llamada pendiente",
    ):
        assert problems("ejemplo", bad), bad
    assert problems("ejemplo", "un fallo del disco"), "un fallo que es una falla"
    assert not problems("ejemplo", "Aquí eliges dónde muere; elegí esta caída ayer y vi 2 copias.")
    fine = "fallo en el registro, herramienta de solo lectura; un fallo de solo lectura; una falla del disco"
    assert not problems("ejemplo", fine + "; el estado guardado; la llamada colgante; tres escenarios")


@pytest.mark.parametrize(
    ("n", "written"),
    [(7, "7"), (4332, "4332"), (-4332, "-4332"), (10_000, "10\u00a0000"), (5546532, "5\u00a0546\u00a0532")],
)
def test_numbers_are_written_as_in_spanish(n, written):
    assert number(n) == written and not problems("ejemplo", f"{number(n)} bytes")


def test_the_check_finds_english_and_dotted_thousands():
    for bad in ("5,546,532 bytes", "5.113.984 bytes", "hasta 1.000 turnos"):
        assert problems("ejemplo", bad), bad
    assert not problems("ejemplo", "Python 3.11.7, 0.125 s, 1.5 ms y 2.00 ms")

"""Los dibujos de la lección (harness.notebook.figures): cada paso, una imagen a su tamaño.

Que la letra no baje de 11 px en la pantalla lo mide tests/test_browser.py; aquí, lo que lo hace
posible: ningún paso más ancho que una salida angosta, ninguna letra de menos de 11 px en el SVG.
"""

import base64
import re

from harness.notebook import figures

ROWS = [figures.Row("dos puntos", figures.TURN, 2, "una nota"), figures.Row("solo B", figures.TURN[1:], 1)]
NARROW_OUTPUT = 268  # el ancho de una salida de JupyterLab en una ventana de 400 px


def steps_of(html):
    """[(texto alternativo, SVG)] de cada imagen del HTML."""
    found = re.findall(r'<img alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)"/>', html)
    return [(alt, base64.b64decode(data).decode("utf-8")) for alt, data in found]


def test_each_step_is_an_image_with_its_row_and_place():
    steps = steps_of(figures.figure_html("Título", ROWS))
    assert len(steps) == 4 + 3
    alts = [alt for alt, _ in steps]
    assert alts[2] == "dos puntos, paso 3 de 4: registro; aquí muere el proceso"
    assert alts[4] == "solo B, paso 1 de 3: herramienta"
    assert sum("muere" in alt for alt in alts) == 2


def test_no_step_is_wider_than_a_narrow_output_nor_has_small_letters():
    html = figures.figure_html("Título", ROWS, window=(0, 3))
    for _, svg in steps_of(html):
        assert int(re.search(r'width="(\d+)"', svg)[1]) <= NARROW_OUTPUT
        assert min(float(size) for size in re.findall(r'font-size="([\d.]+)"', svg)) >= 11
    # El título, los nombres y las notas van en texto, a la letra del notebook.
    assert "<b>Título</b>" in html and "una nota" in html


def test_the_whole_picture_keeps_its_title_description_and_letters():
    svg = figures.svg("Título", ROWS)
    assert "<title>Título</title>" in svg and "<desc>" in svg and not re.search(r"\sid=", svg)
    assert min(float(size) for size in re.findall(r'font-size="([\d.]+)"', svg)) >= 11

"""Dibujos de la lección en SVG, guardados en el notebook: se ven en cualquier visor sin ejecutar nada.

Cada dibujo es una fila (o varias) de pasos de un turno, con la caída del proceso marcada. El SVG es
determinista (sin ids al azar), trae su propio fondo claro (se lee igual con tema claro u oscuro) y
un ``<title>``/``<desc>`` más una versión en texto (``text/plain``) para quien no ve la imagen.

Lo que muestran JupyterLab, nbviewer y nbconvert es el HTML (``figure_html``): el título, el nombre de
cada fila y su nota en texto, y cada paso como una imagen chica con su texto alternativo, una tras
otra como palabras. En una salida angosta los pasos pasan a la línea siguiente en vez de achicarse: la
letra queda a su tamaño (un dibujo entero de 1224 px, achicado a lo ancho de la salida, la dejaba en
8 px). El HTML sin estilos ni ids pasa el filtro de un notebook sin confianza.
"""

import base64
from html import escape
from typing import NamedTuple

from harness.contract import CHECKPOINT_FILE, CRASH_VAR
from harness.scenario import KINDS

# Los pasos de un turno de la lección, en orden, y la etiqueta de la caída que sigue a cada uno.
TURN = ("punto A", "herramienta", "registro", "punto B")
LABELS = tuple(KINDS)

INK, PAPER, LINE, BOX, DEATH, WINDOW = "#1f2328", "#f6f8fa", "#8c959f", "#dde4ee", "#b42318", "#fff1c2"
STEP_W, STEP_H, GAP, LEFT, ROW_H = 112, 34, 40, 150, 78


class Row(NamedTuple):
    """Una fila: su nombre, sus pasos, después de qué paso muere (índice, o None) y una nota."""

    name: str
    steps: tuple
    death: object = None
    note: str = ""


def _x(i):
    return LEFT + i * (STEP_W + GAP)


FONT = 13  # la letra más chica del dibujo (el texto del notebook es de 14 px)
DEATH_TOP = 20  # el lugar sobre los pasos para «✕ muere»


def _text(x, y, text, size=FONT, anchor="start", weight="normal", color=INK):
    return (
        f'<text x="{x}" y="{y}" font-family="sans-serif" font-size="{size}" text-anchor="{anchor}" '
        f'font-weight="{weight}" fill="{color}">{escape(text)}</text>'
    )


def _row(row, top, window=None):
    parts = [_text(10, top + 22, row.name, weight="bold")]
    if window:  # la ventana A/B: desde el fin del punto A hasta el comienzo del punto B
        x0, x1 = _x(window[0]) + STEP_W, _x(window[1])
        parts.append(
            f'<rect x="{x0}" y="{top - 6}" width="{x1 - x0}" height="{STEP_H + 12}" fill="{WINDOW}"/>'
        )
    for i, step in enumerate(row.steps):
        x = _x(i)
        parts.append(
            f'<rect x="{x}" y="{top}" width="{STEP_W}" height="{STEP_H}" rx="6" fill="{BOX}" stroke="{LINE}"/>'
        )
        parts.append(_text(x + STEP_W / 2, top + 22, step, anchor="middle"))
        if i + 1 < len(row.steps):
            y = top + STEP_H / 2
            parts.append(
                f'<line x1="{x + STEP_W}" y1="{y}" x2="{x + STEP_W + GAP}" y2="{y}" stroke="{LINE}"/>'
            )
    if row.death is not None:
        x = _x(row.death) + STEP_W + GAP / 2
        parts.append(
            f'<line x1="{x}" y1="{top - 8}" x2="{x}" y2="{top + STEP_H + 8}" stroke="{DEATH}" stroke-width="3"/>'
        )
        parts.append(_text(x, top - 12, "✕ muere", anchor="middle", weight="bold", color=DEATH))
    if row.note:
        parts.append(_text(LEFT, top + STEP_H + 20, row.note))
    return parts


def svg(title, rows, window=None):
    """El dibujo: un título arriba y las filas, una bajo otra."""
    width = _x(max(len(r.steps) for r in rows)) + 10
    height = 46 + ROW_H * len(rows)
    desc = " ".join(describe_row(r) for r in rows)
    body = [_text(10, 24, title, size=15, weight="bold")]
    for n, row in enumerate(rows):
        body += _row(row, 52 + n * ROW_H, window)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">'
        f"<title>{escape(title)}</title><desc>{escape(desc)}</desc>"
        f'<rect width="{width}" height="{height}" rx="8" fill="{PAPER}"/>' + "".join(body) + "</svg>"
    )


def describe_row(row):
    """La fila en palabras: la versión en texto del dibujo."""
    steps = " → ".join(row.steps)
    death = f"; muere después de «{row.steps[row.death]}»" if row.death is not None else ""
    note = f" ({row.note})" if row.note else ""
    return f"{row.name}: {steps}{death}{note}."


def show(title, rows, window=None):
    """Muestra el dibujo en el notebook, con su versión en texto."""
    from IPython.display import display  # solo dentro de un kernel

    text = "\n".join([title, *(describe_row(r) for r in rows)])
    display(
        {
            "text/html": figure_html(title, rows, window),
            "image/svg+xml": svg(title, rows, window),
            "text/plain": text,
        },
        raw=True,
    )


# Una figura de matplotlib, a 100 ppp, como mucho de 7,5 pulgadas (750 px): cabe sin achicarse en una
# salida de JupyterLab con el explorador de archivos abierto (unos 830 px a 1280), con su letra de 10
# puntos en 14 px.
PNG_DPI, MAX_PNG_INCHES = 100, 7.5


def figure(fig, alt):
    """Muestra una figura de matplotlib como PNG con texto alternativo (nbconvert le pone «No
    description has been provided» a un PNG suelto) y la cierra."""
    import io

    import matplotlib.pyplot as plt
    from IPython.display import display  # solo dentro de un kernel

    width, height = fig.get_size_inches()
    if width > MAX_PNG_INCHES:  # más ancha, la salida la achica y su letra baja de 11 px
        fig.set_size_inches(MAX_PNG_INCHES, height)
        fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=PNG_DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    html = f'<img alt="{escape(alt, quote=True)}" src="data:image/png;base64,{data}"/>'
    display({"text/html": html, "image/png": data, "text/plain": alt}, raw=True)


def step_svg(row, i, window=None):
    """El paso ``i`` de la fila, solo: su caja, la línea al siguiente, la caída si muere después de él y
    el fondo de la ventana A/B donde la cubre. Los pasos de una fila, uno junto al otro, son el dibujo."""
    last = i + 1 == len(row.steps)
    width = STEP_W + (GAP if not last or row.death == i else 2)
    height, top = DEATH_TOP + STEP_H + 8, DEATH_TOP
    parts = []
    if window and window[0] <= i < window[1]:  # el hueco que sigue (y la caja, si está adentro)
        x0 = 0 if window[0] < i else STEP_W
        parts.append(
            f'<rect x="{x0}" y="{top - 6}" width="{width - x0}" height="{STEP_H + 12}" fill="{WINDOW}"/>'
        )
    parts.append(
        f'<rect x="1" y="{top}" width="{STEP_W - 2}" height="{STEP_H}" rx="6" fill="{BOX}" stroke="{LINE}"/>'
    )
    parts.append(_text(STEP_W / 2, top + 22, row.steps[i], anchor="middle"))
    if not last:
        y = top + STEP_H / 2
        parts.append(f'<line x1="{STEP_W - 1}" y1="{y}" x2="{width}" y2="{y}" stroke="{LINE}"/>')
    if row.death == i:
        x = STEP_W + GAP / 2
        parts.append(
            f'<line x1="{x}" y1="{top - 8}" x2="{x}" y2="{top + STEP_H + 8}" stroke="{DEATH}" stroke-width="3"/>'
        )
        parts.append(_text(width - 1, top - 8, "✕ muere", anchor="end", weight="bold", color=DEATH))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">' + "".join(parts) + "</svg>"
    )


def _step_alt(row, i):
    """El texto alternativo de un paso, con su fila y su lugar: «dos puntos, paso 3 de 4: registro»."""
    alt = f"{row.name}, paso {i + 1} de {len(row.steps)}: {row.steps[i]}"
    return f"{alt}; aquí muere el proceso" if row.death == i else alt


def figure_html(title, rows, window=None):
    """El dibujo en HTML: el título y, por fila, su nombre, sus pasos (una imagen cada uno, con su
    texto alternativo) y su nota. Los pasos siguen en la línea de abajo si no caben: nunca se achican."""
    html = [f"<p><b>{escape(title)}</b></p>"]
    for row in rows:
        steps = "".join(
            f'<img alt="{escape(_step_alt(row, i), quote=True)}" '
            f'src="data:image/svg+xml;base64,{_base64(step_svg(row, i, window))}"/>'
            for i in range(len(row.steps))
        )
        note = f"<br/>{escape(row.note)}" if row.note else ""
        html.append(f"<p><b>{escape(row.name)}</b><br/>{steps}{note}</p>")
    return "<div>" + "".join(html) + "</div>"


def _base64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def turn_timeline(death_after=None, title="Un turno: dos puntos de control y un registro"):
    """Un turno de la lección; ``death_after`` es la etiqueta del momento en que muere (p. ej.
    ``after-effect-write``), o None."""
    death = LABELS.index(death_after) if death_after else None
    note = f"{CRASH_VAR}={death_after}:<turno>" if death_after else ""
    show(title, [Row("dos puntos", TURN, death, note)])


def solo_b():
    """Las dos variantes muertas en el mismo lugar del turno 3, y lo que cada una dejó en disco."""
    show(
        "¿Solo el punto B? La misma caída, dos discos",
        [
            Row("dos puntos", TURN, 2, "en disco: turns=3, pendingToolUse=write_report"),
            Row(
                "solo el punto B", TURN[1:], 1, "en disco: turns=2, pendingToolUse=null (la llamada no está)"
            ),
        ],
    )


def ab_window():
    """La ventana entre los dos guardados: ahí el disco tiene una llamada colgante."""
    show(
        "La ventana A/B: pendingToolUse no es null entre el punto A y el punto B",
        [
            Row(
                "turno",
                TURN,
                None,
                f"fondo amarillo: si muere aquí, {CHECKPOINT_FILE} tiene la llamada colgante",
            )
        ],
        window=(0, 3),
    )


def messages_at_points():
    """El arreglo ``messages`` del turno 3, tal como lo guarda cada punto: en el A la llamada colgante va
    aparte (``pendingToolUse``), todavía no está en ``messages``; en el B ya está, con su resultado."""
    before = (
        "user: tarea",
        "asist.: read_notes",
        "user: result. 01",
        "asist.: count_words",
        "user: result. 02",
    )
    show(
        "messages en el turno 3: el punto A guarda la llamada aparte; el punto B, ya respondida",
        [
            Row("punto A", before, None, "pendingToolUse = write_report (toolu_03), fuera de messages"),
            Row(
                "punto B",
                (*before, "asist.: write_report", "user: result. 03"),
                None,
                "pendingToolUse = null",
            ),
        ],
    )

"""La imagen del informe de la clase (``informe.svg``): qué tiene bien la clase y cómo se reparten las notas.

A la izquierda, una barra por pregunta (y, debajo, una por cada dato del Nivel 1 y cada mecanismo del
Nivel 2): cuántas personas la tienen bien sobre cuántas se calificaron. A la derecha, la distribución
de la nota total. Arriba, la leyenda. Un SVG escrito a mano: el mismo archivo para los mismos datos, y
sin el medio segundo que tarda en cargarse un graficador en cada calificación.
"""

import html

from solutions.grading import puntos

QUESTION, PART, GRADED, SCORES = "#1f77b4", "#9ecae1", "#eeeeee", "#ff7f0e"
LEGEND = (
    (QUESTION, "pregunta con todos sus puntos"),
    (PART, "dato o mecanismo de esa pregunta, bien"),
    (GRADED, "estudiantes calificados"),
    (SCORES, "estudiantes con esa nota total"),
)
ROW_H, LABEL_W, BAR_W, TOP = 18, 330, 300, 76
HIST_X, HIST_W, HIST_H = LABEL_W + BAR_W + 150, 320, 220


def _text(x, y, words, **attributes):
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attributes.items())
    return f'<text x="{x:g}" y="{y:g}"{extra}>{html.escape(str(words))}</text>'


def _rect(x, y, width, height, fill):
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="{fill}"/>'


def legend(y):
    parts, x = [], LABEL_W
    for color, meaning in LEGEND:
        parts += [_rect(x, y - 10, 12, 12, color), _text(x + 16, y, meaning)]
        x += 24 + 5.6 * len(meaning)
    return parts


def bars(rows, label):
    """Las barras de las preguntas, con ``label(fila)`` a la izquierda de cada una."""
    most = max([r["de"] for r in rows] + [1])
    parts = []
    for i, row in enumerate(rows):
        y = TOP + i * ROW_H
        whole, got = BAR_W * row["de"] / most, BAR_W * row["bien"] / most
        late = f" ({row['pendientes']} a mano pendientes)" if row["pendientes"] else ""
        indent = 16 if row["parte"] else 0
        parts += [
            _text(LABEL_W - 6, y + 12, label(row), text_anchor="end", **_weight(row, indent)),
            _rect(LABEL_W, y + 2, whole, ROW_H - 4, GRADED),
            _rect(LABEL_W, y + 2, got, ROW_H - 4, PART if row["parte"] else QUESTION),
            _text(LABEL_W + whole + 4, y + 12, f"{row['bien']}/{row['de']}{late}"),
        ]
    return parts


def _weight(row, indent):
    return {"fill": "#555555"} if indent else {"font_weight": "bold"}


def histogram(totals):
    """La distribución de la nota total: una columna por tramo de puntos."""
    bins = totals.bins()
    most = max([count for *_, count in bins] + [1])
    width = HIST_W / len(bins)
    base = TOP + HIST_H
    parts = [
        _text(
            HIST_X,
            TOP - 8,
            f"Nota total (de {puntos.text(totals.top)}), estudiantes por tramo",
            font_weight="bold",
        ),
        f'<line x1="{HIST_X}" y1="{base}" x2="{HIST_X + HIST_W}" y2="{base}" stroke="#999999"/>',
    ]
    for i, (low, high, count) in enumerate(bins):
        x, height = HIST_X + i * width, (HIST_H - 20) * count / most
        parts += [
            _rect(x + 2, base - height, width - 4, height, SCORES),
            _text(x + width / 2, base - height - 3, count, text_anchor="middle"),
            _text(x + width / 2, base + 14, f"{puntos.text(low)}–{puntos.text(high)}", text_anchor="middle"),
        ]
    parts.append(_text(HIST_X, base + 32, "las respuestas a mano sin nota cuentan 0"))
    return parts


def write_picture(rows, totals, path, label):
    """Escribe ``informe.svg`` con las barras de ``rows``, la leyenda y la distribución de ``totals``."""
    height = max(TOP + ROW_H * len(rows) + 30, TOP + HIST_H + 50)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{HIST_X + HIST_W + 20}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        _text(LABEL_W, 20, "Lección 6: qué tiene bien la clase y cómo se reparten las notas", font_size=14),
        *legend(44),
        *bars(rows, label),
        *histogram(totals),
        _text(
            LABEL_W,
            height - 8,
            "barras: estudiantes con la pregunta (o la parte) bien, sobre los calificados",
        ),
        "</svg>",
    ]
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n' + "\n".join(parts) + "\n")

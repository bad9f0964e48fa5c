"""Tablas, archivos, el disco y código fuente en un notebook, cada uno con una versión en texto para
cualquier visor (y para nbval, que compara el texto)."""

import inspect
import re
from html import escape
from pathlib import Path

from harness.notebook.disk_state import read_disk_state

# La hora de cada anotación del registro cambia en cada corrida: se muestra con este marcador.
AT_FIELD = re.compile(r'("at": )\d+')
AT_SHOWN = r"\1«ms»"


def _show_raw(bundle):
    from IPython.display import display  # solo dentro de un kernel

    display(bundle, raw=True)


def _show(html, text):
    _show_raw({"text/html": html, "text/plain": text})


# Las marcas de un resultado, con color (y en negrita) en HTML; el texto plano las deja como están.
MARK_COLORS = {"✓": "#1a7f37", "✗": "#cf222e", "todavía no": "#6e7781", "no aplica": "#6e7781"}


def _shown_cell(value):
    text = escape(str(value))
    color = MARK_COLORS.get(str(value))
    return f"<strong style='color:{color}'>{text}</strong>" if color else text


def _cells(tag, row):
    return "".join(f"<{tag} style='text-align:left'>{_shown_cell(c)}</{tag}>" for c in row)


def show_table(headers, rows, note=""):
    """Una tabla HTML, con una versión en texto para quien no ve HTML; ``note``, una línea debajo (en la
    misma salida: una línea impresa aparte se guardaría junta con las demás, antes de la tabla)."""
    rows = [list(row) for row in rows]
    html = f"<table><tr>{_cells('th', headers)}</tr>"
    html += "".join(f"<tr>{_cells('td', row)}</tr>" for row in rows) + "</table>"
    text = "\n".join(" | ".join(map(str, row)) for row in [headers, *rows])
    _show(html + (f"<p>{escape(note)}</p>" if note else ""), text + (f"\n{note}" if note else ""))


def show_disk(*workdirs):
    """Lo que hay en disco: una fila por archivo, una columna por directorio de trabajo."""
    states = [read_disk_state(w).rows() for w in workdirs]
    rows = [[name, *(state[i][1] for state in states)] for i, (name, _) in enumerate(states[0])]
    show_table(["archivo", *(Path(w).name for w in workdirs)], rows)


def raw_text(path):
    """El texto de un archivo tal cual está en disco, salvo la hora ``at`` del registro."""
    return AT_FIELD.sub(AT_SHOWN, Path(path).read_text(encoding="utf-8"))


def show_file(path):
    """El archivo crudo, como lo mostraría ``cat`` (las horas ``at`` como «ms»)."""
    text = raw_text(path)
    note = (
        "\n(«ms»: la hora de la anotación en milisegundos; cambia en cada corrida)" if "«ms»" in text else ""
    )
    _show(
        f"<pre>$ cat {escape(Path(path).name)}\n{escape(text)}{escape(note)}</pre>",
        f"$ cat {Path(path).name}\n{text}{note}",
    )


def same_file(path_a, path_b, ignore_at=False):
    """¿Los dos archivos dicen lo mismo? Dos que faltan son iguales; ``ignore_at`` compara salvo la
    hora de cada anotación del registro."""
    paths = Path(path_a), Path(path_b)
    if not all(p.exists() for p in paths):
        return not any(p.exists() for p in paths)
    read = raw_text if ignore_at else Path.read_bytes
    return read(paths[0]) == read(paths[1])


def show_source(*objects):
    """El código fuente de funciones del arnés, resaltado como Python."""
    code = "\n\n".join(inspect.getsource(o).rstrip("\n") for o in objects)
    _show_raw({"text/markdown": f"```python\n{code}\n```", "text/plain": code})

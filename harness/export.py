"""Armar un ``agent.py`` desde las celdas ``#| export`` de un notebook (al estilo de nbdev).

Una celda de código cuya primera línea es ``#| export`` pertenece al agente: ``export_agent`` junta
esas celdas en el orden del notebook, sin la marca, debajo de un encabezado que dice de dónde vienen,
cada una tras una línea ``# %% <notebook> · celda <id>`` (una traza lleva a su celda), y agrega el
``sys.exit(main())`` final. Lee el archivo ``.ipynb`` guardado, no la memoria del kernel: lo que no
se guardó no se exporta.
"""

import json
import re
from pathlib import Path

from harness.errors import HarnessError

# La marca de nbdev, con o sin espacio después de «#|»; tiene que ser la primera línea de la celda.
EXPORT_MARKER = re.compile(r"#\|\s*export\s*")
# La línea que abre cada bloque exportado: de qué notebook y de qué celda (por su id) viene.
CELL_MARKER = re.compile(r"# %% (?P<notebook>\S+) · celda (?P<id>\S+)")
MAIN_GUARD = 'if __name__ == "__main__":\n    sys.exit(main())\n'


def export_cells(notebook_path):
    """[(id de la celda, código)] de cada celda ``#| export``, en orden y sin la línea de la marca."""
    with open(notebook_path, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    found = []
    for cell in cells:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        first, _, rest = text.partition("\n")
        if cell["cell_type"] == "code" and EXPORT_MARKER.fullmatch(first):
            found.append((cell.get("id", f"{len(found)}"), rest.strip("\n")))
    return found


def render_agent(notebook_path, shown_as=None, cells=None):
    """El texto de ``agent.py``; ``shown_as`` es cómo nombra el encabezado al notebook (relativo).
    ``cells`` ([(id, código)]) reemplaza a las celdas guardadas: las que el taller ejecutó."""
    notebook_path = Path(notebook_path)
    cells = export_cells(notebook_path) if cells is None else cells
    if not cells:
        raise HarnessError(f"{notebook_path.name} no tiene ninguna celda que empiece con «#| export».")
    shown_as = shown_as or notebook_path.name
    header = (
        f"# GENERADO desde {shown_as}: no lo edites a mano.\n"
        "# Cada bloque viene de la celda «#| export» que nombra su línea «# %%». Para cambiarlo, edita esa\n"
        "# celda, guarda el notebook y vuelve a exportar (harness.export.export_agent)."
    )
    blocks = [f"# %% {notebook_path.name} · celda {cell_id}\n{code}" for cell_id, code in cells]
    return "\n\n\n".join([header, *blocks, MAIN_GUARD])


def export_agent(notebook_path, out_path, shown_as=None, cells=None):
    """Escribe en ``out_path`` el agente armado desde ``notebook_path`` (o desde ``cells``) y devuelve
    ``out_path``."""
    out_path = Path(out_path)
    text = render_agent(notebook_path, shown_as, cells)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text, encoding="utf-8")
    return out_path

"""Armar un ``agent.py`` desde las celdas ``#| export`` de un notebook (al estilo de nbdev).

Una celda de código cuya primera línea es ``#| export`` pertenece al agente: ``export_agent`` junta
esas celdas en el orden del notebook, sin la marca, debajo de un encabezado corto, y agrega el
``sys.exit(main())`` final. Lee el archivo ``.ipynb`` guardado, no la memoria del kernel: lo que no
se guardó no se exporta.
"""

import json
import re
from pathlib import Path

from harness.errors import HarnessError

# La marca de nbdev, con o sin espacio después de «#|»; tiene que ser la primera línea de la celda.
EXPORT_MARKER = re.compile(r"#\|\s*export\s*")
MAIN_GUARD = 'if __name__ == "__main__":\n    sys.exit(main())\n'


def export_cells(notebook_path):
    """El código de cada celda ``#| export`` del notebook, en orden y sin la línea de la marca."""
    with open(notebook_path, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    sources = []
    for cell in cells:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        first, _, rest = text.partition("\n")
        if cell["cell_type"] == "code" and EXPORT_MARKER.fullmatch(first):
            sources.append(rest.strip("\n"))
    return sources


def export_agent(notebook_path, out_path):
    """Escribe en ``out_path`` el agente armado desde ``notebook_path`` y devuelve ``out_path``."""
    notebook_path, out_path = Path(notebook_path), Path(out_path)
    sources = export_cells(notebook_path)
    if not sources:
        raise HarnessError(f"{notebook_path.name} no tiene ninguna celda que empiece con «#| export».")
    header = (
        f"# Generado por harness.export desde {notebook_path.name}: no lo edites a mano.\n"
        "# Edita las celdas «#| export» del notebook, guárdalo y vuelve a exportar."
    )
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("\n\n\n".join([header, *sources, MAIN_GUARD]), encoding="utf-8")
    return out_path

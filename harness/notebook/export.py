"""Armar un agente desde las celdas ``#| export`` de uno o más notebooks (al estilo de nbdev).

Una celda de código cuya primera línea es ``#| export`` pertenece al agente. Con un solo notebook (la
lección), ``export_agent`` junta esas celdas en el orden del notebook: es el agente de la lección.
Con varios (la lección y «De la lección a producción»), las celdas se juntan como si se ejecutaran una
tras otra, con una regla: **una celda que vuelve a definir un nombre reemplaza la definición anterior en
su lugar** (la primera que reemplaza fija dónde va la celda entera; una celda que no reemplaza nada va
al final). Así el archivo generado es lo que queda de ejecutar todas las celdas, sin las versiones que
una defensa dejó atrás: es el agente de referencia.

Cada bloque va tras una línea ``# %% <notebook> · celda <id>`` (una traza lleva a su celda), debajo de
un encabezado que dice de dónde viene, y al final va el ``sys.exit`` de ``main()`` (``MAIN_GUARD``). Se lee el ``.ipynb``
guardado, no la memoria del kernel: lo que no se guardó no se exporta.
"""

import ast
import json
import re
from pathlib import Path
from typing import NamedTuple

from harness.errors import HarnessError

# La marca de nbdev, con o sin espacio después de «#|»; tiene que ser la primera línea de la celda.
EXPORT_MARKER = re.compile(r"#\|\s*export\s*")
# La línea que abre cada bloque exportado: de qué notebook y de qué celda (por su id) viene.
CELL_MARKER = re.compile(r"# %% (?P<notebook>\S+) · celda (?P<id>\S+)")
# Al final de cada agente, como en la lección: nada más (la puesta a punto de la velocidad vive en el
# arnés, donde quien estudia no la lee: ``harness.crash``).
MAIN_GUARD = 'if __name__ == "__main__":\n    sys.exit(main())\n'


class Chunk(NamedTuple):
    """Una sentencia de nivel superior de una celda, con los comentarios que la preceden."""

    notebook: str
    cell: str
    names: frozenset  # los nombres que enlaza («__doc__» para el docstring del módulo)
    text: str
    is_import: bool


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


def bound_names(node, first=False):
    """Los nombres que enlaza una sentencia de nivel superior."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).partition(".")[0] for alias in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if first and isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant):
        return {"__doc__"} if isinstance(node.value.value, str) else set()
    return set()


def cell_chunks(notebook, cell_id, code):
    """Las sentencias de una celda, cada una con los comentarios y líneas en blanco que la preceden."""
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        raise HarnessError(
            f"La celda {cell_id} de {notebook} no compila (línea {err.lineno}): {err.msg}."
        ) from None
    lines, start, found = code.splitlines(), 0, []
    for index, node in enumerate(tree.body):
        text = "\n".join(lines[start : node.end_lineno]).rstrip("\n")
        names = frozenset(bound_names(node, first=index == 0))
        found.append(Chunk(notebook, cell_id, names, text, isinstance(node, (ast.Import, ast.ImportFrom))))
        start = node.end_lineno
    tail = "\n".join(lines[start:]).strip("\n")
    if tail and found:  # un comentario al final de la celda va con su última sentencia
        found[-1] = found[-1]._replace(text=f"{found[-1].text}\n{tail}")
    return found


def compose(cells):
    """Las sentencias de ``cells`` ([(notebook, id, código)], en orden), con cada nombre definido una
    sola vez: la celda que vuelve a definirlo ocupa el lugar de la primera definición que reemplaza."""
    module = []
    for notebook, cell_id, code in cells:
        new = cell_chunks(notebook, cell_id, code)
        bound = frozenset().union(*(c.names for c in new))
        kept, place = [], None
        for chunk in module:
            if not chunk.names & bound:
                kept.append(chunk)
                continue
            if chunk.is_import and not chunk.names <= bound:  # la importación queda con los demás nombres
                kept.append(_without(chunk, bound))
                continue
            if place is None and not chunk.is_import:
                place = len(kept)
        module = kept + new if place is None else kept[:place] + new + kept[place:]
    return _used_imports_only(module)


def _used_imports_only(module):
    """Sin las importaciones que ya no usa nadie: las de una versión que una defensa reemplazó."""
    code = "\n".join([*(c.text for c in module if not c.is_import), MAIN_GUARD])
    used = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    kept = []
    for chunk in module:
        unused = chunk.names - used if chunk.is_import else frozenset()
        if unused == chunk.names and chunk.is_import:
            continue
        kept.append(_without(chunk, unused) if unused else chunk)
    return kept


def _without(chunk, names):
    """La misma importación sin ``names`` (los vuelve a importar una celda posterior)."""
    lines = chunk.text.splitlines()
    node = ast.parse(chunk.text).body[0]
    node.names = [a for a in node.names if (a.asname or a.name).partition(".")[0] not in names]
    leading = lines[: node.lineno - 1]  # los comentarios de encima se quedan con ella
    text = "\n".join([*leading, ast.unparse(node)])
    return chunk._replace(names=chunk.names - names, text=text)


def notebook_cells(notebook_paths):
    """[(notebook, id, código)] de las celdas ``#| export`` de cada notebook, en orden."""
    found = []
    for path in notebook_paths:
        cells = export_cells(path)
        if not cells:
            raise HarnessError(f"{Path(path).name} no tiene ninguna celda que empiece con «#| export».")
        found += [(Path(path).name, cell_id, code) for cell_id, code in cells]
    return found


def _paths(notebooks):
    return [Path(notebooks)] if isinstance(notebooks, (str, Path)) else [Path(p) for p in notebooks]


def render_agent(notebooks, shown_as=None, cells=None):
    """El texto del agente; ``notebooks`` es una ruta o una lista (la lección primero) y ``shown_as``
    cómo los nombra el encabezado. ``cells`` ([(id, código)]) reemplaza a las celdas guardadas de un
    solo notebook: las que el taller ejecutó."""
    paths = _paths(notebooks)
    if cells is None:
        found = notebook_cells(paths)
    else:
        found = [(paths[0].name, cell_id, code) for cell_id, code in cells]
    shown_as = shown_as or " y ".join(p.name for p in paths)
    header = (
        f"# GENERADO desde {shown_as}: no lo edites a mano.\n"
        "# Cada bloque viene de la celda «#| export» que nombra su línea «# %%». Para cambiarlo, edita esa\n"
        "# celda, guarda el notebook y vuelve a exportar (harness.notebook.export.export_agent)."
    )
    blocks, last = [], None
    for chunk in compose(found):
        if (chunk.notebook, chunk.cell) != last:  # otro bloque: sin las líneas en blanco de su celda
            blocks.append(f"# %% {chunk.notebook} · celda {chunk.cell}\n{chunk.text.lstrip(chr(10))}")
            last = (chunk.notebook, chunk.cell)
        else:
            blocks[-1] += "\n" + chunk.text
    return "\n\n\n".join([header, *blocks, MAIN_GUARD])


def export_agent(notebooks, out_path, shown_as=None, cells=None):
    """Escribe en ``out_path`` el agente armado desde ``notebooks`` (o desde ``cells``) y devuelve
    ``out_path``."""
    out_path = Path(out_path)
    text = render_agent(notebooks, shown_as, cells)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text, encoding="utf-8")
    return out_path


# Los notebooks de cada agente, por su nombre en notebooks/: la lección sola es el agente de la lección;
# la lección y «De la lección a producción», el de referencia.
LESSON_NOTEBOOK = "leccion_6_puntos_de_control.ipynb"
PRODUCTION_NOTEBOOK = "de_la_leccion_a_produccion.ipynb"
REFERENCE_NOTEBOOKS = (LESSON_NOTEBOOK, PRODUCTION_NOTEBOOK)

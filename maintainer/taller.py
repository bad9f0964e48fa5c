"""El taller es su propio notebook, como la lección (nbdev): su texto, sus predicciones y sus
comprobaciones se escriben en ``notebooks/taller_tu_agente.ipynb``. Solo sus celdas del agente vienen de
la lección: cada celda ``#| export`` de la lección, en su orden, tal cual y bloqueada (etiqueta
``de-la-leccion``) o con lo marcado ``# tu turno`` en blanco (etiqueta ``tu-turno``). Cada una dice de
qué celda de la lección viene (sus metadatos ``derived_from`` y su etiqueta ``leccion:ID``) y en el
repositorio no se edita a mano:

    python -m maintainer.taller write    # lleva a esas celdas lo que da hoy la lección (a ninguna otra)
    python -m maintainer.taller check    # falla si alguna no es lo que da hoy la lección

``write`` también agrega la celda de una celda ``#| export`` nueva de la lección (después de la de su
anterior: el texto que la rodea lo escribe quien mantiene) y quita la de una que la lección ya no tiene;
no mueve celdas. ``python -m maintainer prepare`` corre ``write`` y después guarda las salidas del taller.

Una marca ``# tu turno`` al final de una línea ``def`` deja en blanco el cuerpo de esa función (salvo su
docstring); ``# tu turno: NOMBRE`` al final de una sentencia, esa sentencia (y las que la siguen con la
misma marca). Lo que queda en su lugar es ``# TU CÓDIGO AQUÍ`` y ``raise not_yet("NOMBRE")``.
"""

import ast
import copy
import json
import os
import re
import sys

import nbformat

from maintainer import paths
from solutions.grading import notebook_run

WORKBOOK = paths.NOTEBOOKS + "/taller_tu_agente.ipynb"
DEF_MARK = re.compile(r"def \w+\(.*\):\s+# tu turno$")
STATEMENT_MARK = re.compile(r"# tu turno: (\w+)$")
FIRST_HARNESS_IMPORT = "from harness.scripted_model import"  # harness.errors va antes, en orden alfabético
STUB_IMPORT = "from harness.errors import not_yet  # lo que dice una pieza que todavía no escribiste\n"
TU_TURNO, DE_LA_LECCION = "tu-turno", "de-la-leccion"
# Los metadatos que dicen de qué celda de la lección viene una celda del taller; sin ellos, es del taller.
ORIGIN = "derived_from"
NOTE = (
    "La escribe «python -m maintainer.taller write» desde esa celda de la lección: en el repositorio no se "
    "edita a mano (quien estudia sí escribe su código en las celdas «tu turno»)."
)
OWNED = (ORIGIN, "tags", "editable", "deletable")  # lo que ``write`` escribe en los metadatos de esas celdas


def _regions(code):
    """[(primera línea, última línea, sangría, nombre)] (desde 0, inclusive) de lo que va en blanco."""
    lines, found = code.splitlines(), []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef) and DEF_MARK.search(lines[node.lineno - 1].strip()):
            body = node.body[1:] if ast.get_docstring(node) else node.body
            start = node.body[0].end_lineno if ast.get_docstring(node) else node.lineno
            found.append((start, node.end_lineno - 1, body[0].col_offset, node.name))
        for field in ("body", "orelse"):
            for stmt in getattr(node, field, []) if isinstance(getattr(node, field, None), list) else []:
                mark = isinstance(stmt, ast.stmt) and STATEMENT_MARK.search(lines[stmt.lineno - 1])
                if mark:
                    found.append((stmt.lineno - 1, stmt.end_lineno - 1, stmt.col_offset, mark[1]))
    return _merged(sorted(found))


def _merged(regions):
    """Las regiones seguidas con el mismo nombre, juntas."""
    merged = []
    for start, end, indent, name in regions:
        if merged and merged[-1][3] == name and merged[-1][1] + 1 == start:
            merged[-1] = (merged[-1][0], end, indent, name)
        else:
            merged.append((start, end, indent, name))
    return merged


def blank(code):
    """(código con lo marcado en blanco, si había algo marcado)."""
    lines, regions = code.splitlines(), _regions(code)
    for start, end, indent, name in reversed(regions):
        pad = " " * indent
        lines[start : end + 1] = [f"{pad}# TU CÓDIGO AQUÍ", f"{pad}raise not_yet({json.dumps(name)})"]
    return "\n".join(lines), bool(regions)


def lesson_cells():
    """{id: código} de las celdas ``#| export`` de la lección, con su marca, en su orden."""
    lesson = nbformat.read(paths.LESSON, as_version=4)
    return {
        c.id: c.source for c in lesson.cells if c.cell_type == "code" and c.source.startswith("#| export")
    }


def derived_cell(lesson_id, code, first):
    """(id, código, metadatos) de la celda del taller que trae ``code`` de la lección: en blanco y
    editable, o tal cual y bloqueada."""
    code, blanked = blank(code)
    if first:  # la primera celda del agente trae también lo que lanza una pieza en blanco
        if FIRST_HARNESS_IMPORT not in code:
            raise SystemExit(
                f"La celda {lesson_id} de la lección ya no tiene «{FIRST_HARNESS_IMPORT}»: el taller pone "
                "antes su «from harness.errors import not_yet» (cambia FIRST_HARNESS_IMPORT en maintainer/taller.py)."
            )
        code = code.replace(FIRST_HARNESS_IMPORT, STUB_IMPORT + FIRST_HARNESS_IMPORT, 1)
    metadata = {
        ORIGIN: {"notebook": os.path.basename(paths.LESSON), "cell": lesson_id, "note": NOTE},
        "tags": [TU_TURNO if blanked else DE_LA_LECCION, f"leccion:{lesson_id}"],
    }
    if not blanked:
        metadata.update(editable=False, deletable=False)
    return f"taller-{lesson_id}", code, metadata


def derived_cells(lesson):
    """{id de la celda de la lección: (id, código, metadatos)} de lo que el taller trae de ``lesson``."""
    first = next(iter(lesson), None)
    return {i: derived_cell(i, code, i == first) for i, code in lesson.items()}


def origin(cell):
    """El id de la celda de la lección de la que viene ``cell`` (None si es del taller)."""
    return cell.metadata.get(ORIGIN, {}).get("cell")


def _current(cell):
    """(id, código, metadatos) de una celda del taller, solo con lo que escribe ``write``."""
    return cell.id, cell.source, {k: cell.metadata[k] for k in OWNED if k in cell.metadata}


def _order_problems(notebook, lesson):
    """Lo que ``write`` no arregla: una celda de la lección traída dos veces, o en otro orden que en ella
    (el agente se arma en el orden del notebook; mover celdas entre el texto es trabajo de una persona)."""
    kept = [origin(c) for c in notebook.cells if origin(c) in lesson]
    twice = sorted({i for i in kept if kept.count(i) > 1})
    if twice:
        return [f"trae dos veces las celdas {', '.join(twice)} de la lección: borra una a mano"]
    if kept != [i for i in lesson if i in kept]:
        return ["trae las celdas de la lección en otro orden que la lección: muévelas a mano"]
    return []


def problems(notebook, lesson):
    """Lo que no coincide entre las celdas del taller que vienen de la lección y lo que ella da hoy."""
    expected, found = derived_cells(lesson), _order_problems(notebook, lesson)
    derived = [origin(c) for c in notebook.cells if origin(c)]
    gone = [i for i in derived if i not in lesson]
    missing = [i for i in lesson if i not in derived]
    if gone:
        found.append(f"trae celdas que la lección ya no tiene: {', '.join(gone)}")
    if missing:
        found.append(f"no trae las celdas #| export {', '.join(missing)} de la lección")
    found += [
        f"su celda {c.id} no es lo que da la celda {origin(c)} de la lección"
        for c in notebook.cells
        if origin(c) in expected and _current(c) != expected[origin(c)]
    ]
    return found


def _slot(cells, previous):
    """Dónde va la celda de una celda nueva de la lección: después de la de su anterior en la lección
    (``previous``), o si es la primera, antes de la primera que viene de la lección."""
    if previous is not None:
        return next(i for i, c in enumerate(cells) if c is previous) + 1
    return next((i for i, c in enumerate(cells) if origin(c)), len(cells))


def synced(notebook, lesson):
    """``notebook`` con cada celda que viene de la lección como la da hoy ``lesson``; las demás, intactas."""
    stuck = _order_problems(notebook, lesson)
    if stuck:
        raise SystemExit(f"{WORKBOOK}: {stuck[0]}.")
    cells = [c for c in notebook.cells if origin(c) is None or origin(c) in lesson]
    previous = None
    for lesson_id, (cell_id, code, metadata) in derived_cells(lesson).items():
        cell = next((c for c in cells if origin(c) == lesson_id), None)
        if cell is None:  # una celda nueva de la lección
            cell = nbformat.v4.new_code_cell(id=cell_id)
            cells.insert(_slot(cells, previous), cell)
        cell.id, cell.source = cell_id, code
        for key in OWNED:
            cell.metadata.pop(key, None)
        cell.metadata.update(copy.deepcopy(metadata))
        previous = cell
    notebook.cells = cells
    return notebook


def drift():
    """Lo que no coincide hoy entre el taller guardado y la lección ([] si nada)."""
    return problems(nbformat.read(WORKBOOK, as_version=4), lesson_cells())


def write(dry_run=False):
    """Lleva al taller guardado lo que da hoy la lección, sin tocar sus salidas; si cambia."""
    notebook = synced(nbformat.read(WORKBOOK, as_version=4), lesson_cells())
    return notebook_run.write(notebook, WORKBOOK, dry_run=dry_run)


def main(argv=None):
    command = (argv or sys.argv[1:] or ["check"])[0]
    if command == "write":
        print(
            f"taller_tu_agente.ipynb: {'actualizadas sus celdas de la lección' if write() else 'sin cambios'}"
        )
    elif command == "check":
        found = drift()
        for problem in found:
            print(f"notebooks/taller_tu_agente.ipynb {problem}", file=sys.stderr)
        if found:
            print("corre «python -m maintainer.taller write» (ver docs/mantenimiento.md)", file=sys.stderr)
            return 1
        print("las celdas del taller que vienen de la lección coinciden con ella")
    else:
        print("uso: python -m maintainer.taller [write|check]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

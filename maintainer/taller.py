"""El taller se genera de la lección, como los ejercicios de sus fuentes: las celdas ``#| export`` de la
lección, en su orden, con lo marcado ``# tu turno`` en blanco, entre el texto y las comprobaciones de
``PLANTILLA``.

    python -m maintainer.taller write    # escribe notebooks/taller_tu_agente.ipynb (sin salidas)
    python -m maintainer.taller check    # falla si el guardado no es el que se genera

``python -m maintainer prepare`` lo escribe y después guarda sus salidas (las del taller en blanco).

Una marca ``# tu turno`` al final de una línea ``def`` deja en blanco el cuerpo de esa función (salvo su
docstring); ``# tu turno: NOMBRE`` al final de una sentencia, esa sentencia (y las que la siguen con la
misma marca). Lo que queda en su lugar es ``# TU CÓDIGO AQUÍ`` y ``raise todavia_no("NOMBRE")``.
"""

import ast
import json
import re
import sys

import nbformat

from maintainer import paths

WORKBOOK = paths.NOTEBOOKS + "/taller_tu_agente.ipynb"
DEF_MARK = re.compile(r"def \w+\(.*\):\s+# tu turno$")
STATEMENT_MARK = re.compile(r"# tu turno: (\w+)$")
FIRST_HARNESS_IMPORT = "from harness.scripted_model import"  # todavia_no va antes, en orden alfabético
STUB_IMPORT = "from harness.errors import todavia_no  # lo que dice una pieza que todavía no escribiste\n"
TU_TURNO, DE_LA_LECCION = "tu-turno", "de-la-leccion"


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
        lines[start : end + 1] = [f"{pad}# TU CÓDIGO AQUÍ", f"{pad}raise todavia_no({json.dumps(name)})"]
    return "\n".join(lines), bool(regions)


def lesson_cells():
    """{id: código} de las celdas ``#| export`` de la lección, con su marca."""
    lesson = nbformat.read(paths.LESSON, as_version=4)
    return {
        c.id: c.source for c in lesson.cells if c.cell_type == "code" and c.source.startswith("#| export")
    }


def workbook_cell(lesson_id, code, first):
    """La celda del taller que trae ``code`` de la lección: en blanco y editable, o tal cual y bloqueada."""
    code, blanked = blank(code)
    if first:  # la primera celda del agente trae también lo que lanza una pieza en blanco
        code = code.replace(FIRST_HARNESS_IMPORT, STUB_IMPORT + FIRST_HARNESS_IMPORT, 1)
    cell = nbformat.v4.new_code_cell(code, id=f"taller-{lesson_id}")
    if blanked:
        cell.metadata["tags"] = [TU_TURNO]
    else:
        cell.metadata.update(tags=[DE_LA_LECCION], editable=False, deletable=False)
    return cell


def render():
    """El notebook del taller, sin salidas: la plantilla con las celdas de la lección en su lugar."""
    from maintainer.taller_plantilla import PLANTILLA

    lesson, cells = lesson_cells(), []
    missing = [i for kind, i, _ in PLANTILLA if kind == "leccion" and i not in lesson]
    if missing:
        raise SystemExit(
            f"La plantilla del taller nombra celdas que la lección ya no tiene: {', '.join(missing)}"
        )
    first = next(i for kind, i, _ in PLANTILLA if kind == "leccion")
    for kind, cell_id, text in PLANTILLA:
        if kind == "leccion":
            cells.append(workbook_cell(cell_id, lesson[cell_id], cell_id == first))
        elif kind == "md":
            cells.append(nbformat.v4.new_markdown_cell(text, id=cell_id))
        else:
            cells.append(nbformat.v4.new_code_cell(text, id=cell_id))
    used = {i for kind, i, _ in PLANTILLA if kind == "leccion"}
    if set(lesson) - used:
        raise SystemExit(
            f"La lección tiene celdas #| export que el taller no trae: {', '.join(sorted(set(lesson) - used))}"
        )
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = nbformat.read(paths.LESSON, as_version=4).metadata
    return notebook


def sources(notebook):
    """Lo que el taller tiene que ser, sin salidas: (tipo, id, metadatos, código) de cada celda."""
    keep = ("tags", "editable", "deletable")
    return [
        (c.cell_type, c.id, {k: c.metadata[k] for k in keep if k in c.metadata}, c.source)
        for c in notebook.cells
    ]


def stale():
    """¿El taller guardado no es el que se genera de la lección y la plantilla?"""
    try:
        stored = nbformat.read(WORKBOOK, as_version=4)
    except FileNotFoundError:
        return True
    return sources(stored) != sources(render())


def write(dry_run=False):
    """Escribe el taller sin salidas (``prepare`` guarda después las de una corrida); si cambia."""
    changed = stale()
    if changed and not dry_run:
        nbformat.write(render(), WORKBOOK)
    return changed


def main(argv=None):
    command = (argv or sys.argv[1:] or ["check"])[0]
    if command == "write":
        print("taller_tu_agente.ipynb " + ("regenerado" if write() else "sin cambios"))
    elif command == "check":
        if stale():
            print(
                "notebooks/taller_tu_agente.ipynb no es lo que generan la lección y la plantilla: corre «python -m maintainer prepare».",
                file=sys.stderr,
            )
            return 1
        print("el taller coincide con la lección y su plantilla")
    else:
        print("uso: python -m maintainer.taller [write|check]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

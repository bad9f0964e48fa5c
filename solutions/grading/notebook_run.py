"""Ejecutar un notebook como un «Restart & Run All» y guardar salidas que no cambian entre corridas.

Los ejercicios repartidos se regeneran con esto (``solutions.grading.release``), y la lección y el
laboratorio también (``python -m maintainer prepare``): dos corridas limpias dejan el mismo archivo,
byte a byte (nbval compara esas salidas).
"""

import os

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def cleared(path):
    """El notebook como lo deja «Clear All Outputs»: sin salidas, contadores ni tiempos."""
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return notebook


def execute(notebook, cwd, timeout=120):
    """Ejecuta todas las celdas en un kernel nuevo que arranca en ``cwd`` (como JupyterLab, en la
    carpeta del notebook). Una celda marcada ``raises-exception`` puede fallar; cualquier otra, no."""
    NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": os.fspath(cwd)}},
        coalesce_streams=True,  # un print partido en dos mensajes se guarda igual que entero
        record_timing=False,
        store_widget_state=False,  # el estado de los widgets lleva ids al azar
    ).execute()
    return notebook


def text(notebook):
    """El archivo que guarda ``write``: sin la vista de widget de las salidas, que apunta a un modelo
    con id al azar que solo vivió en el kernel que lo creó; queda el texto alternativo, igual en cada
    corrida."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    written = nbformat.writes(notebook)
    return written if written.endswith("\n") else written + "\n"


def write(notebook, path, dry_run=False):
    """Guarda el notebook en ``path`` (con ``dry_run``, no); devuelve si el archivo cambia."""
    new = text(notebook)
    try:
        with open(path, encoding="utf-8") as f:
            changed = f.read() != new
    except FileNotFoundError:
        changed = True
    if changed and not dry_run:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    return changed

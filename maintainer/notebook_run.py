"""Ejecutar un notebook como un «Restart & Run All» y guardar salidas que no cambian entre corridas.

Para quien mantiene el curso: la lección, el laboratorio y los ejercicios repartidos se regeneran con
esto, así que dos corridas limpias dejan el mismo archivo, byte a byte (nbval compara esas salidas).
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


def write(notebook, path):
    """Guarda el notebook sin la vista de widget de sus salidas: apunta a un modelo con id al azar que
    solo vivió en el kernel que lo creó; queda el texto alternativo, igual en cada corrida."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    nbformat.write(notebook, path)

"""Mide un «Restart & Run All» limpio del notebook de la lección: kernel nuevo, todas las celdas.

    python benchmarks/notebook_run_all.py [--runs 5] [--write] [--notebook notebooks/otro.ipynb]

Cada corrida parte del notebook sin salidas, arranca un kernel nuevo en notebooks/ (como JupyterLab),
ejecuta todo y apaga el kernel; imprime la mediana, el mínimo y el máximo del tiempo de pared.
``--write`` guarda en el notebook las salidas de la última corrida, con los streams unidos por celda
y sin marcas de tiempo: así dos corridas limpias dejan el mismo archivo, byte a byte.
"""

import argparse
import os
import statistics
import time

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "notebooks")
LESSON = os.path.join(NOTEBOOKS, "leccion_6_puntos_de_control.ipynb")
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


def run_all(path):
    """(segundos, notebook ejecutado) de una corrida completa en un kernel nuevo."""
    notebook = cleared(path)
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
        coalesce_streams=True,  # un print partido en dos mensajes se guarda igual que entero
        record_timing=False,
        store_widget_state=False,  # el estado de los widgets lleva ids al azar: cambiaría en cada corrida
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start, notebook


def without_widget_views(notebook):
    """Quita de las salidas la vista de widget: apunta a un modelo con id al azar que solo vive en el
    kernel que la creó; queda el texto alternativo, igual en cada corrida."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    return notebook


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="guardar las salidas de la última corrida")
    parser.add_argument("--notebook", default=LESSON, help="otro notebook de notebooks/ (por omisión, la lección)")
    args = parser.parse_args()
    times = []
    for _ in range(args.runs):
        seconds, notebook = run_all(args.notebook)
        times.append(seconds)
    print(f"Restart & Run All de {os.path.basename(args.notebook)}, {args.runs} corrida(s):")
    print(f"mediana {statistics.median(times):.2f} s · mín {min(times):.2f} s · máx {max(times):.2f} s")
    if args.write:
        nbformat.write(without_widget_views(notebook), args.notebook)
        print("salidas guardadas en el notebook")


if __name__ == "__main__":
    main()

"""Mide un «Restart & Run All» limpio de un notebook, frente al de un notebook de una sola celda.

    python -m benchmarks.notebook_run_all [--runs 5] [--notebook notebooks/otro.ipynb ...]

Cada corrida parte del notebook sin salidas, arranca un kernel nuevo en notebooks/ (como JupyterLab),
ejecuta todo y apaga el kernel (``maintainer.prepare.rerun``). En cada ronda corre también un notebook
de una celda (``print(1)``), en la misma carpeta: la proporción entre los dos es lo que comparan las metas
(la lección, a lo sumo 5×; «De la lección a producción», 10×; el taller, 4×; «Más allá», 15×), y se
mantiene aunque la máquina esté cargada. Imprime la mediana, el mínimo y el máximo de cada uno y la
proporción de las medianas. No guarda nada: las salidas guardadas las regenera
``python -m maintainer prepare``, con esa misma corrida.
"""

import argparse
import os
import statistics
import time

import nbformat

from maintainer.paths import LESSON, NOTEBOOKS
from maintainer.prepare import rerun


def run_all(path):
    """Segundos de una corrida completa en un kernel nuevo."""
    start = time.perf_counter()
    rerun(path)
    return time.perf_counter() - start


def one_cell_notebook():
    """Un notebook de una celda en notebooks/ (se borra al terminar): la base de la proporción."""
    path = os.path.join(NOTEBOOKS, "_una_celda.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")]), path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--notebook", nargs="+", default=[LESSON], help="notebooks de notebooks/ (por omisión, la lección)"
    )
    args = parser.parse_args()
    baseline = one_cell_notebook()
    try:
        times = {path: [] for path in [baseline, *args.notebook]}
        for _ in range(args.runs):
            for path in times:
                times[path].append(run_all(path))
    finally:
        os.remove(baseline)
    base = statistics.median(times.pop(baseline))
    print(f"Restart & Run All, {args.runs} corrida(s); un notebook de una celda: mediana {base:.2f} s")
    for path, runs in times.items():
        median = statistics.median(runs)
        print(
            f"{os.path.basename(path)}: mediana {median:.2f} s · mín {min(runs):.2f} s · máx {max(runs):.2f} s"
            f" · {median / base:.1f}× la de una celda"
        )


if __name__ == "__main__":
    main()

"""Mide un «Restart & Run All» limpio del notebook de la lección: kernel nuevo, todas las celdas.

    python -m benchmarks.notebook_run_all [--runs 5] [--notebook notebooks/otro.ipynb]

Cada corrida parte del notebook sin salidas, arranca un kernel nuevo en notebooks/ (como JupyterLab),
ejecuta todo y apaga el kernel (``maintainer.prepare.rerun``); imprime la mediana, el mínimo y el
máximo del tiempo de pared. No guarda nada: las salidas guardadas las regenera
``python -m maintainer prepare``, con esa misma corrida.
"""

import argparse
import os
import statistics
import time

from maintainer.paths import LESSON
from maintainer.prepare import rerun


def run_all(path):
    """Segundos de una corrida completa en un kernel nuevo."""
    start = time.perf_counter()
    rerun(path)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--notebook", default=LESSON, help="otro notebook de notebooks/ (por omisión, la lección)"
    )
    args = parser.parse_args()
    times = [run_all(args.notebook) for _ in range(args.runs)]
    print(f"Restart & Run All de {os.path.basename(args.notebook)}, {args.runs} corrida(s):")
    print(f"mediana {statistics.median(times):.2f} s · mín {min(times):.2f} s · máx {max(times):.2f} s")


if __name__ == "__main__":
    main()

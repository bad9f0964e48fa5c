"""Mide un «Restart & Run All» limpio del notebook de la lección: kernel nuevo, todas las celdas.

    python benchmarks/notebook_run_all.py [--runs 5] [--write] [--notebook notebooks/otro.ipynb]

Cada corrida parte del notebook sin salidas, arranca un kernel nuevo en notebooks/ (como JupyterLab),
ejecuta todo y apaga el kernel; imprime la mediana, el mínimo y el máximo del tiempo de pared.
``--write`` guarda en el notebook las salidas de la última corrida (``harness.notebook_run``): dos
corridas limpias dejan el mismo archivo, byte a byte.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # maintainer/

from maintainer.notebook_run import cleared, execute, write  # noqa: E402
from maintainer.paths import ROOT as REPO_ROOT  # noqa: E402

LESSON = os.path.join(REPO_ROOT, "notebooks", "leccion_6_puntos_de_control.ipynb")


def run_all(path):
    """(segundos, notebook ejecutado) de una corrida completa en un kernel nuevo."""
    notebook = cleared(path)
    start = time.perf_counter()
    execute(notebook, os.path.dirname(os.path.abspath(path)))
    return time.perf_counter() - start, notebook


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="guardar las salidas de la última corrida")
    parser.add_argument(
        "--notebook", default=LESSON, help="otro notebook de notebooks/ (por omisión, la lección)"
    )
    args = parser.parse_args()
    times = []
    for _ in range(args.runs):
        seconds, notebook = run_all(args.notebook)
        times.append(seconds)
    print(f"Restart & Run All de {os.path.basename(args.notebook)}, {args.runs} corrida(s):")
    print(f"mediana {statistics.median(times):.2f} s · mín {min(times):.2f} s · máx {max(times):.2f} s")
    if args.write:
        write(notebook, args.notebook)
        print("salidas guardadas en el notebook")


if __name__ == "__main__":
    main()

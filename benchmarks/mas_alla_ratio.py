"""Cuántas veces un notebook de una sola celda tarda el Restart & Run All de «Más allá», en la misma corrida.

    python -m benchmarks.mas_alla_ratio [--runs 3] [--notebook notebooks/mas_alla_motor_durable.ipynb]

Alterna una corrida de un notebook de una celda (``print(1)``, en una carpeta temporal) con una del
notebook medido, cada una en un kernel nuevo (``benchmarks.notebook_run_all.run_all``), e imprime las
medianas y su cociente: así la carga de la máquina pesa igual en las dos. El objetivo del issue 34 es
a lo sumo 15×.
"""

import argparse
import os
import statistics
import tempfile

import nbformat

from benchmarks.notebook_run_all import run_all
from maintainer.paths import NOTEBOOKS

TARGET = 15


def one_cell(folder):
    path = os.path.join(folder, "una_celda.ipynb")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--notebook", default=os.path.join(NOTEBOOKS, "mas_alla_motor_durable.ipynb"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="una-celda-") as folder:
        baseline = one_cell(folder)
        pairs = [(run_all(baseline), run_all(args.notebook)) for _ in range(args.runs)]
    small, big = (statistics.median(times) for times in zip(*pairs, strict=True))
    print(f"una celda: mediana {small:.2f} s · {os.path.basename(args.notebook)}: mediana {big:.2f} s")
    print(f"cociente {big / small:.1f}× (objetivo: a lo sumo {TARGET}×), {args.runs} corrida(s) de cada uno")


if __name__ == "__main__":
    main()

"""Tiempo y bytes escritos por turno, hasta 1000 turnos, en los tres formatos de «Más allá».

    python -m benchmarks.cost_per_turn [--turns 1000]

Imprime, en algunos turnos, los bytes que escribe ese turno, la mediana del tiempo de los turnos
vecinos (±5 %) y el total escrito hasta ahí, para el formato de la lección (JSON entero por guardado),
un registro JSON lines con fsync por línea y el SQLite de DBOS (``harness.beyond.cost_formats``).
"""

import argparse
import os
import statistics
import tempfile

from harness.beyond.cost_formats import FORMATS, measure
from harness.text import number

NAMES = {"json": "JSON entero (lección)", "jsonl": "JSON lines + fsync", "dbos": "DBOS (SQLite)"}


def marks(turns):
    return [t for t in (1, 10, 100, 250, 500, 1000, turns) if t <= turns][:7]


def row(fmt, runs, t):
    window = max(1, t // 20)
    times = [s for s, _ in runs[max(0, t - 1 - window) : t + window]]
    total = sum(b for _, b in runs[:t])
    return f"| {NAMES[fmt]} | {t} | {number(runs[t - 1][1])} | {statistics.median(times) * 1000:.2f} | {number(total)} |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args()
    print("| formato | turno | bytes escritos en el turno | ms por turno (mediana) | bytes acumulados |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in FORMATS:
            runs = measure(fmt, args.turns, os.path.join(tmp, fmt))
            for t in sorted(set(marks(args.turns))):
                print(row(fmt, runs, t))


if __name__ == "__main__":
    main()

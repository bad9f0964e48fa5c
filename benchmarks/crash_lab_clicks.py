"""Mide cuánto tarda un clic del laboratorio de caídas en mostrar su resultado (por la API de Python).

    python benchmarks/crash_lab_clicks.py [--rounds 3]

Para cada punto de caída de la variante de dos puntos pulsa Ejecutar y luego Reanudar
(``button.click()``): el tiempo va desde el clic hasta que el widget ya muestra el log y el disco.
Imprime la mediana sobre las etiquetas (y el mínimo y el máximo). La meta es menos de 0,5 s.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # maintainer/

from harness.crash_lab import CrashLab  # noqa: E402
from harness.crash_lab.view import crash_labels  # noqa: E402
from maintainer.paths import REFERENCE_AGENT  # noqa: E402

GOAL_MS = 500


def timed_click(button):
    start = time.perf_counter()
    button.click()
    return (time.perf_counter() - start) * 1000


def measure(rounds):
    times = {"Ejecutar": [], "Reanudar": []}
    with tempfile.TemporaryDirectory() as work:
        lab = CrashLab(workdir=os.path.join(work, "laboratorio"), agent=REFERENCE_AGENT)
        for _ in range(rounds):
            for label in crash_labels():
                lab.choose(label=label, variant="dos-puntos")
                times["Ejecutar"].append(timed_click(lab.run_button))
                times["Reanudar"].append(timed_click(lab.resume_button))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="vueltas por todas las etiquetas")
    times = measure(parser.parse_args().rounds)
    print(f"{'clic':<10} {'mediana':>9} {'mín':>9} {'máx':>9}   (meta: < {GOAL_MS} ms)")
    for name, ms in times.items():
        print(f"{name:<10} {statistics.median(ms):7.1f}ms {min(ms):7.1f}ms {max(ms):7.1f}ms")


if __name__ == "__main__":
    main()

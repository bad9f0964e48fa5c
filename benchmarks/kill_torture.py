"""Tortura con muertes reales: mata a un agente (por omisión, el de referencia) con SIGKILL y reanuda.

    python -m benchmarks.kill_torture [--tasks 300] [--workers 2] [--max-seconds 900] [--seed 0]
                                      [--agent solutions/agent.py]

Cada tarea: una corrida nueva que muere en un instante al azar, y después --resume (matando también
algunas reanudaciones) hasta que termina. Imprime la tabla de confiabilidad, en cuántas muertes cayó
cada ventana del turno, la última línea impresa antes de morir y qué rama de reconcile tomó cada
reanudación. Sale con 1 si alguna tarea tuvo un problema (y los muestra).
"""

import argparse
import sys
import time

from harness.contract import JITTER_VAR
from maintainer.paths import REFERENCE_AGENT
from maintainer.torture import JITTER_MS, summary, torture


def print_counter(title, counter):
    print(f"\n{title}")
    for key, n in counter.most_common():
        print(f"  {n:>5}  {key}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--max-seconds", type=float, default=900, help="no lanza tareas nuevas pasado este tiempo"
    )
    parser.add_argument("--seed", type=int, default=0, help="semilla de la primera tarea")
    parser.add_argument(
        "--agent", default=REFERENCE_AGENT, help="el agent.py a torturar (por omisión, el de referencia)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    results, horizon = torture(args.tasks, args.workers, args.max_seconds, args.seed, agent=args.agent)
    figures = summary(results)
    print(
        f"{args.agent}: {len(results)} tareas en {time.perf_counter() - start:.0f} s · "
        f"{args.workers} procesos · "
        f"{JITTER_VAR}={JITTER_MS} · SIGKILL al azar en [0, {horizon * 1000:.0f} ms]\n"
    )
    print("| qué | cifra |\n|---|---|")
    for key, value in figures.items():
        if not hasattr(value, "most_common"):
            print(f"| {key} | {value} |")
    print_counter("Muertes por ventana del turno (deducida del disco):", figures["ventanas"])
    print_counter("Muertes por última línea impresa:", figures["última línea impresa"])
    print_counter(
        "Rama de reconcile de cada reanudación que llegó a leer el punto de control:",
        figures["ramas de reconcile"],
    )
    bad = [r for r in results if r.problems]
    for r in bad:
        print(f"\nsemilla {r.seed}: " + "; ".join(r.problems))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

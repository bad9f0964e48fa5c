"""Barrido de fallas con strace: SIGKILL, ENOSPC, EIO y EACCES en cada llamada que toca el directorio.

    python -m benchmarks.fault_sweep [--every 1] [--workers 2] [--faults SIGKILL,ENOSPC,EIO,EACCES]
                                     [--agent solutions/agent.py]

Para cada uno de los 15 escenarios (corrida nueva; nueva sobre una terminada y sobre una caída;
--resume tras cada una de las 12 etiquetas) graba la corrida con strace y, para cada ``openat``,
``write``, ``rename``, ``fsync`` y ``unlink`` que toca el directorio de trabajo o la salida estándar
(una de cada ``--every``), la repite con esa llamada fallada (``strace -e inject=…:when=N``). Después
de cada falla: sin traza ni mensaje del sistema en inglés, archivos que faltan o cargan, y reanudar
hasta ``[done]`` deja el reporte exactamente una vez. Imprime cuentas, violaciones y tiempo; sale con
1 si hubo alguna violación.
"""

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from harness.runs.strace_log import STRACE
from maintainer.faults import FAULTS, expected_report, plan, run_trial, templates
from maintainer.paths import REFERENCE_AGENT


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="una llamada de cada N (1: todas)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--agent", default=REFERENCE_AGENT)
    args = parser.parse_args()
    if STRACE is None:
        sys.exit("Falta strace (apt-get install strace).")
    agent, faults = os.path.abspath(args.agent), tuple(args.faults.split(","))
    start = time.perf_counter()
    expected = expected_report(agent)
    with tempfile.TemporaryDirectory(prefix="barrido-") as base:
        dirs = templates(base, agent)
        trials = [t for s, d in dirs.items() for t in plan(s, d, agent, faults)[:: args.every]]
        with ProcessPoolExecutor(args.workers) as pool:
            found = list(
                pool.map(
                    run_trial,
                    trials,
                    [dirs[t.scenario] for t in trials],
                    [agent] * len(trials),
                    [expected] * len(trials),
                    chunksize=4,
                )
            )
    bad = [(t, p) for t, p in zip(trials, found, strict=True) if p]
    print(
        f"{agent}: {len(trials)} fallas inyectadas en {len(dirs)} escenarios, "
        f"{time.perf_counter() - start:.0f} s con {args.workers} procesos (una llamada de cada {args.every})\n"
    )
    print("| falla | inyectadas | violaciones |\n|---|---|---|")
    per_fault = Counter(t.fault for t in trials)
    for fault in faults:
        print(f"| {fault} | {per_fault[fault]} | {sum(t.fault == fault for t, _ in bad)} |")
    print(f"| todas | {len(trials)} | {len(bad)} |")
    print("\nLlamadas falladas:", dict(Counter(t.syscall for t in trials)))
    for t, problems in bad[:40]:
        print(f"  {t.scenario.name} · {t.fault} en {t.syscall}#{t.when} ({t.target}): {problems[:3]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

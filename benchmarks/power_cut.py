"""Modelo de corte de luz (al estilo de ALICE): cada estado que POSIX permite dejar, cargado y reanudado.

    python -m benchmarks.power_cut [--workers 2] [--agent solutions/agent.py]

Para cada uno de los 15 escenarios graba la corrida con strace, enumera lo que un corte de luz después
de cada operación puede dejar en disco (``harness/runs/power_cut.py``: lo sincronizado con fsync es
seguro, lo demás puede haber llegado o no, un write a medias o en ceros) y, para cada estado distinto,
exige que los archivos carguen y que reanudar deje el reporte exactamente una vez. Imprime cuentas,
violaciones y tiempo; sale con 1 si hubo alguna violación.
"""

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

from harness.runs.strace_log import STRACE
from maintainer.crash_states import check_state, scenario_states
from maintainer.faults import expected_report, templates
from maintainer.paths import REFERENCE_AGENT


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--agent", default=REFERENCE_AGENT)
    args = parser.parse_args()
    if STRACE is None:
        sys.exit("Falta strace (apt-get install strace).")
    agent = os.path.abspath(args.agent)
    start = time.perf_counter()
    expected = expected_report(agent)
    rows, bad = [], []
    with tempfile.TemporaryDirectory(prefix="corte-") as base, ProcessPoolExecutor(args.workers) as pool:
        for scenario, template in templates(base, agent).items():
            states, walked, ops = scenario_states(scenario, template, agent)
            found = list(pool.map(check_state, states, [agent] * len(states), [expected] * len(states)))
            bad += [(scenario.name, sorted(s), p) for s, p in zip(states, found, strict=True) if p]
            rows.append((scenario.name, len(ops), walked, len(states), sum(bool(p) for p in found)))
    print(f"{agent}: {time.perf_counter() - start:.0f} s con {args.workers} procesos\n")
    print(
        "| escenario | operaciones | cortes recorridos | estados distintos | violaciones |\n|---|---|---|---|---|"
    )
    for row in rows:
        print("| " + " | ".join(map(str, row)) + " |")
    totals = [sum(r[i] for r in rows) for i in range(1, 5)]
    print("| todos | " + " | ".join(map(str, totals)) + " |")
    for name, files, problems in bad[:40]:
        print(f"  {name} · {files}: {problems[:3]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

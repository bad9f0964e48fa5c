"""El barrido completo de señales: una corrida por cada llamada al sistema, con la señal justo antes.

    python -m benchmarks.signal_sweep [--signal SIGTERM] [--scenario nueva] [--every 1] [--agent RUTA]

Graba una corrida (``maintainer.signal_sweep``), y para cada llamada desde que la sesión pone sus
manejadores hasta la salida del proceso, corre otra que recibe la señal antes de esa llamada. Imprime
cuántas llamadas hubo antes de los manejadores (el arranque de Python y los imports: la señal tiene ahí
su efecto de siempre), cuántas corridas se señalaron, cómo terminaron, y cada problema. Sale con 1 si
hubo alguno.
"""

import argparse
import sys
import tempfile
from collections import Counter

from maintainer import signal_sweep
from maintainer.faults import scenarios
from maintainer.paths import REFERENCE_AGENT


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signal", default="SIGTERM", choices=list(signal_sweep.SIGNALS))
    parser.add_argument("--scenario", default="nueva", choices=[s.name for s in scenarios()])
    parser.add_argument("--every", type=int, default=1, help="una llamada de cada tantas")
    parser.add_argument("--agent", default=REFERENCE_AGENT)
    args = parser.parse_args()
    scenario = signal_sweep.scenario_named(args.scenario)
    with tempfile.TemporaryDirectory(prefix="barrido-senales-") as base:
        template = signal_sweep.template_for(base, scenario, args.agent)
        before, points = signal_sweep.kill_points(template, args.agent, scenario.resume)
        chosen = points[:: args.every]
        endings, problems = Counter(), {}
        for i, point in enumerate(chosen, 1):
            result = signal_sweep.signalled(template, args.agent, scenario.resume, point, args.signal)
            endings[result[0]] += 1
            found = signal_sweep.problems(result, args.signal)
            if found:
                problems[point] = found
            if i % 50 == 0:
                print(f"  {i}/{len(chosen)}…", file=sys.stderr, flush=True)
    print(
        f"{args.signal}, escenario «{scenario.name}»: {before} llamadas antes de los manejadores de la sesión"
    )
    print(f"{len(chosen)} corridas señaladas (de {len(points)} llamadas hasta la salida); códigos de salida:")
    for code, n in sorted(endings.items()):
        print(f"  {code:>4}: {n}")
    print(f"problemas: {len(problems)}")
    for point, found in problems.items():
        print(f"  antes de {point.syscall} n.º {point.when} (llamada {point.index}): {'; '.join(found)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

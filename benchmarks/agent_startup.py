"""Mide cuánto tarda una corrida guionada de solutions/agent.py, cada una en un proceso nuevo.

    python benchmarks/agent_startup.py [--runs 21]

Imprime la mediana (y el mínimo y el máximo) de la corrida con caída en after-effect-write:3 y de
la reanudación, y como referencia el arranque de un intérprete vacío de Python en la misma máquina.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "solutions", "agent.py")


def wall(cmd, cwd, env):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def measure(runs):
    rows = {"python -c pass": [], "crash run": [], "--resume": []}
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, AGENT_WORKDIR=work)
        crash_env = dict(env, CRASH_AFTER="after-effect-write:3")
        for _ in range(runs):
            rows["python -c pass"].append(wall([sys.executable, "-c", "pass"], work, env))
            rows["crash run"].append(wall([sys.executable, AGENT], work, crash_env))
            rows["--resume"].append(wall([sys.executable, AGENT, "--resume"], work, env))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    rows = measure(parser.parse_args().runs)
    print(f"{'qué':<16} {'mediana':>9} {'mín':>9} {'máx':>9}")
    for name, times in rows.items():
        ms = [t * 1000 for t in times]
        print(f"{name:<16} {statistics.median(ms):7.1f}ms {min(ms):7.1f}ms {max(ms):7.1f}ms")


if __name__ == "__main__":
    main()

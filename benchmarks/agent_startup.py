"""Mide cuánto tarda una corrida guionada de solutions/agent.py, cada una en un proceso nuevo.

    python -m benchmarks.agent_startup [--runs 21]

Imprime la mediana (y el mínimo y el máximo) de la corrida con caída en after-effect-write:3 y de la
reanudación, y como referencia el arranque de un intérprete vacío en la misma máquina. La última fila
corre el agente con ``python -S`` (sin los archivos .pth de site-packages, que en esta máquina importan
certifi en cada arranque): es lo que cuesta el agente mismo, sin el arranque propio de la máquina.

Antes compila el bytecode de harness y solutions, como hace Python solo en la primera corrida de una
máquina normal (aquí PYTHONDONTWRITEBYTECODE lo impide y cada proceso recompilaría todo).
"""

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time

from harness.contract import CRASH_VAR, WORKDIR_VAR
from harness.scenario import EFFECT, SCRIPT, label
from maintainer.paths import REFERENCE_AGENT as AGENT
from maintainer.paths import ROOT


def wall(cmd, cwd, env):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def measure(runs):
    rows = {"python -c pass": [], "corrida con caída": [], "--resume": [], "con caída, python -S": []}
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, WORKDIR_VAR: work}
        crash_env = {**env, CRASH_VAR: label(EFFECT, len(SCRIPT))}
        bare_env = {**crash_env, "PYTHONPATH": ROOT}  # sin site-packages, harness se busca en el repo
        for _ in range(runs):
            rows["python -c pass"].append(wall([sys.executable, "-c", "pass"], work, env))
            rows["corrida con caída"].append(wall([sys.executable, AGENT], work, crash_env))
            rows["--resume"].append(wall([sys.executable, AGENT, "--resume"], work, env))
            rows["con caída, python -S"].append(wall([sys.executable, "-S", AGENT], work, bare_env))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    for folder in ("harness", "solutions"):
        compileall.compile_dir(os.path.join(ROOT, folder), quiet=1)
    rows = measure(runs)
    print(f"{'qué':<22} {'mediana':>9} {'mín':>9} {'máx':>9}")
    for name, times in rows.items():
        ms = [t * 1000 for t in times]
        print(f"{name:<22} {statistics.median(ms):7.1f}ms {min(ms):7.1f}ms {max(ms):7.1f}ms")


if __name__ == "__main__":
    main()

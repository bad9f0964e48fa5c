"""Cuánta CPU cuesta una caída y su reanudación de cada agente, lado a lado con el agente de la lección en
Node (el ``agent.js`` de la lección, en ``tests/data/node_agent/``).

    python -m benchmarks.agent_cpu [--runs 11]

Cada ronda corre, en una carpeta nueva y en este orden, los tres agentes: ``CRASH_AFTER=after-effect-write:3``
y después ``--resume``, cada uno en un proceso nuevo. Mide la CPU de los hijos (usuario + sistema, con
``resource.getrusage``), que no depende de cuánto espera la máquina cargada; imprime la mediana de cada
agente y su proporción frente a Node. Las metas del issue 31: a lo sumo 0,5× para ``solutions/agent.py``
y 0,4× para ``solutions/agent_leccion.py``.

Antes compila el bytecode de harness y solutions, como hace Python solo en la primera corrida de una
máquina normal (en esta, PYTHONDONTWRITEBYTECODE lo impide y cada proceso recompilaría todo).
"""

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

from harness.contract import CRASH_VAR, EXIT_DONE, EXIT_KILLED, WORKDIR_VAR
from harness.scenario import EFFECT, SCRIPT, label
from maintainer.paths import LESSON_AGENT, REFERENCE_AGENT, ROOT

NODE_AGENT = os.path.join(ROOT, "tests", "data", "node_agent", "agent.js")


def commands():
    """{nombre: argumentos} de cada agente que se mide."""
    found = {
        "solutions/agent_leccion.py": [sys.executable, LESSON_AGENT],
        "solutions/agent.py": [sys.executable, REFERENCE_AGENT],
    }
    node = shutil.which("node")
    if node:
        found["agent.js (Node)"] = [node, NODE_AGENT]
    return found


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def crash_and_resume(command, workdir):
    """Segundos de CPU de una caída en after-effect-write:3 y su --resume, en ``workdir``."""
    env = {**os.environ, WORKDIR_VAR: workdir, CRASH_VAR: label(EFFECT, len(SCRIPT))}
    before = children_cpu()
    crashed = subprocess.run(command, cwd=workdir, env=env, capture_output=True, check=False)
    env.pop(CRASH_VAR)
    resumed = subprocess.run([*command, "--resume"], cwd=workdir, env=env, capture_output=True, check=False)
    if crashed.returncode != EXIT_KILLED or resumed.returncode != EXIT_DONE:
        raise SystemExit(f"{' '.join(command)}: la caída o la reanudación no salió como se espera")
    return children_cpu() - before


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    runs = parser.parse_args().runs
    for folder in ("harness", "solutions"):
        compileall.compile_dir(os.path.join(ROOT, folder), quiet=1)
    agents = commands()
    cpu = {name: [] for name in agents}
    for _ in range(runs):
        for name, command in agents.items():
            with tempfile.TemporaryDirectory() as workdir:
                cpu[name].append(crash_and_resume(command, workdir))
    medians = {name: statistics.median(times) * 1000 for name, times in cpu.items()}
    node = medians.get("agent.js (Node)")
    print(f"{'agente':<28} {'CPU (mediana)':>14} {'frente a Node':>14}")
    for name, ms in medians.items():
        ratio = f"{ms / node:.2f}×" if node else "sin Node"
        print(f"{name:<28} {ms:11.1f} ms {ratio:>14}")


if __name__ == "__main__":
    main()

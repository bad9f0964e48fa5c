"""Mide cuánto tarda el nivel de la lección de la suite de conformidad, contra una caída + --resume del
mismo agente, en la misma corrida (el objetivo del issue 44: a lo sumo 15 veces), contado desde que arranca
el comando, como lo corre una persona.

    python -m benchmarks.conformidad_speed [--agente solutions/agent.py] [--rondas 3]

Cada ronda mide primero una caída en after-effect-write:3 más su --resume (dos procesos, uno tras
otro, en una carpeta nueva, lanzados como en la terminal: ``python agent.py``) y después el nivel de la
lección entero tal como lo corre una persona: ``python -m harness.conformidad agent.py`` desde que arranca
el intérprete hasta que sale (en paralelo: un trabajador por núcleo; sus corridas de Python nacen de un
servidor de corridas, ``harness.runs.fork_server``, y ``CONFORMANCE_RUN_SERVER=0`` lo apaga). Se informa la
mediana de cada medida (tiempo de reloj y CPU de los procesos hijos, la suite, sus servidores y sus
corridas incluidos) y sus cocientes; las rondas alternan las dos medidas, así
un cambio de ritmo de la máquina les toca a ambas. Al final, la carga de la máquina (``os.getloadavg``)
antes y después.
"""

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

from harness.conformidad.suite import workers
from harness.runs.launcher import launch, run_agent_process
from harness.scenario import EFFECT, SCRIPT, label
from maintainer.paths import REFERENCE_AGENT

TARGET = 15
CRASH = label(EFFECT, len(SCRIPT))  # la caída de la medida: after-effect-write:3


def children_cpu(who=resource.RUSAGE_CHILDREN):
    """Segundos de CPU (usuario + sistema) de los procesos hijos que ya terminaron (o de este, con
    ``RUSAGE_SELF``)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def one_crash_and_resume(agent):
    """(segundos, segundos de CPU) de una caída en ``CRASH`` y su --resume (``python agent.py``, como en
    la terminal: sin servidor de corridas)."""
    with tempfile.TemporaryDirectory() as w:
        start, cpu = time.perf_counter(), children_cpu()
        run_agent_process(w, agent=agent, crash_after=CRASH)
        run_agent_process(w, agent=agent, resume=True)
        return time.perf_counter() - start, children_cpu() - cpu


def lesson_tier(agent):
    """(segundos, segundos de CPU, código de salida) de ``python -m harness.conformidad agent.py``."""
    start, cpu = time.perf_counter(), children_cpu()
    done = launch([sys.executable, "-m", "harness.conformidad", agent], timeout=None, output_cap=1 << 20)
    return time.perf_counter() - start, children_cpu() - cpu, done.returncode


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.conformidad_speed")
    p.add_argument("--agente", default=REFERENCE_AGENT)
    p.add_argument("--rondas", type=int, default=3)
    args = p.parse_args(argv)
    agent, before = os.path.abspath(args.agente), os.getloadavg()
    single, suite = [], []
    for _ in range(args.rondas):
        single.append(one_crash_and_resume(agent))
        *measure, code = lesson_tier(agent)
        suite.append(measure)
        if code != 0:
            print("Aviso: el agente no pasa el nivel de la lección; la medida vale igual, pero revísalo.")
    (one, one_cpu), (whole, whole_cpu) = (
        [statistics.median(m) for m in zip(*x, strict=True)] for x in (single, suite)
    )
    print(f"una caída + --resume: {one:.2f} s, {one_cpu:.2f} s de CPU (mediana de {args.rondas})")
    print(
        f"nivel de la lección (el comando entero): {whole:.2f} s, {whole_cpu:.2f} s de CPU, {workers()} trabajadores"
    )
    print(f"cociente: {whole / one:.1f}× (objetivo: a lo sumo {TARGET}×)")
    # Con la máquina ocupada por otros, el reloj no mide la suite: el trabajo (CPU) sí, y repartido entre
    # los trabajadores da el cociente que tendría la máquina libre.
    print(
        f"cociente de CPU: {whole_cpu / one_cpu:.1f}×; repartido en {workers()}: {whole_cpu / one_cpu / workers():.1f}×"
    )
    print(f"carga de la máquina: {before[0]:.2f} antes, {os.getloadavg()[0]:.2f} después")


if __name__ == "__main__":
    main()

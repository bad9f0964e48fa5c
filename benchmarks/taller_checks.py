"""Mide cada comprobación de pieza del taller sobre el taller lleno con el código de la lección.

    python -m benchmarks.taller_checks [--runs 3]

Llena una copia del taller en un kernel nuevo (``maintainer.taller_kernel``: cada celda «tu turno» con
el código de la lección, cada celda con su id, como desde JupyterLab) y ejecuta cada celda
``workbook.check(...)`` como la ejecuta quien estudia: su agente corre como procesos de verdad. Imprime,
por comprobación, la mediana y el máximo en segundos de reloj, los segundos de CPU que gastó (el kernel y
los procesos del agente: en una máquina cargada el reloj se estira y la CPU no; con N núcleos libres el
reloj no baja de CPU/N) y su resumen (todo ✓ con el código de la lección). La meta (issue 33): cada una,
a lo sumo 5 s de reloj en una máquina sin otra carga. No guarda nada.
"""

import argparse
import statistics
import tempfile
import time

from maintainer.taller_kernel import filled_workbook

TARGET = 5.0  # segundos por comprobación, en una máquina sin otra carga


# Lo que el kernel lleva gastado de CPU, él y sus procesos hijos ya terminados (las corridas del agente).
CPU_SPENT = (
    "import resource as _r; print(sum(getattr(_r.getrusage(w), f) for w in (_r.RUSAGE_SELF, _r.RUSAGE_CHILDREN)"
    " for f in ('ru_utime', 'ru_stime')))"
)


def summary_line(shown):
    """La última línea que mostró la comprobación: «N comprobaciones: …»."""
    return shown.strip().splitlines()[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        kernel, checks = filled_workbook(folder)
        try:
            for source, cell_id in checks.items():
                times, cpu = [], []
                for _ in range(args.runs):
                    before = float(kernel.run(CPU_SPENT, "medida"))
                    start = time.perf_counter()
                    shown = kernel.run(source, cell_id)
                    times.append(time.perf_counter() - start)
                    cpu.append(float(kernel.run(CPU_SPENT, "medida")) - before)
                median = statistics.median(times)
                verdict = "dentro de la meta" if median <= TARGET else f"más de {TARGET:.0f} s de reloj"
                print(
                    f"{source}: mediana {median:.2f} s · máx {max(times):.2f} s · CPU {statistics.median(cpu):.2f} s"
                    f" · {summary_line(shown)} · {verdict}"
                )
        finally:
            kernel.stop()


if __name__ == "__main__":
    main()

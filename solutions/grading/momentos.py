"""La familia de momentos del Nivel 1 y de la Práctica: cuántos hay y la verdad de cada uno.

    python -m solutions.grading.momentos [--medir] [--lista]

Dice el tamaño de la familia (con nota y de práctica, por dificultad) y para cuántos estudiantes alcanza
la lista de la clase (``variantes``). Con ``--medir``, mide la verdad de todos sus momentos por corridas
de verdad (``truth``: una vez por momento, guardada con su huella); con ``--lista``, los describe uno por
línea. La familia misma se arma en ``harness.notebook.moments`` (lo que la persona estudiante lee).
"""

import sys
import time
from collections import Counter

from harness.conformidad.spanish_args import command_parser
from harness.notebook.moments import FAMILY, GRADED, PRACTICE
from solutions.grading import truth, variantes


def summary():
    """Las líneas del tamaño de la familia."""
    lines = []
    for name, family in (("con nota", GRADED), ("de práctica", PRACTICE)):
        levels = Counter(m.difficulty for m in family.values())
        each = ", ".join(f"{levels[d]} de dificultad {d}" for d in sorted(levels))
        lines.append(f"{len(family)} momentos {name} ({each})")
    lines.append(f"la lista de la clase alcanza para {len(variantes.triples())} estudiantes")
    return lines


def main(argv=None):
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("--medir", action="store_true", help="medir la verdad de cada momento")
    parser.add_argument("--lista", action="store_true", help="describir cada momento")
    args = parser.parse_args(argv)
    print(f"La familia: {len(FAMILY)} momentos")
    for line in summary():
        print(f"  {line}")
    if args.lista:
        for moment in FAMILY.values():
            print(moment.describe())
    if args.medir:
        start = time.perf_counter()
        measured = truth.measured(FAMILY)
        print(f"verdad de {len(measured)} momentos, medida o leída en {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

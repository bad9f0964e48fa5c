"""Las tareas de quien mantiene el curso, desde la raíz del repositorio.

    python -m maintainer prepare                   # regenera lo generado y después lo comprueba
    python -m maintainer prepare --sin-escribir    # ejecuta todo y dice qué cambiaría, sin guardar
    python -m maintainer prepare --solo salidas    # un paso: agente, ejercicios, taller o salidas (se repite)
    python -m maintainer check                     # solo las comprobaciones: no escribe ni ejecuta notebooks

``prepare`` es el ``nbdev_prepare`` del curso: ``solutions/agent.py`` desde la lección, los ejercicios
repartidos desde sus fuentes y las salidas guardadas de cada notebook, y después ``check``. Sale con 1
si alguna comprobación falla. Las pruebas (``python -m pytest``) van aparte.
"""

import sys

from harness.conformidad.spanish_args import SpanishArgumentParser
from harness.text import plural
from maintainer import prepare
from solutions.grading.release import NbgraderError


def parser():
    main = SpanishArgumentParser(
        prog="python -m maintainer", description=__doc__.splitlines()[0], allow_abbrev=False
    )
    commands = main.add_subparsers(dest="command", required=True, metavar="{prepare,check}")
    prep = commands.add_parser(
        "prepare", help="regenerar lo generado y comprobarlo", description=prepare.__doc__.splitlines()[0]
    )
    prep.add_argument(
        "--sin-escribir", action="store_true", help="ejecutar y decir qué cambiaría, sin guardar nada"
    )
    prep.add_argument(
        "--solo",
        action="append",
        choices=prepare.STEPS,
        metavar="PASO",
        help=f"solo este paso ({', '.join(prepare.STEPS)}); se puede repetir",
    )
    commands.add_parser("check", help="solo las comprobaciones, sin escribir nada")
    return main


def main(argv=None):
    try:
        return run(parser().parse_args(argv))
    except NbgraderError as err:  # una línea con la causa, no la traza de subprocess
        print(err, file=sys.stderr)
        return 1


def run(args):
    if args.command == "prepare":
        steps = [step for step in prepare.STEPS if step in (args.solo or prepare.STEPS)]
        changed = prepare.prepare(steps, dry_run=args.sin_escribir)
        verb = "cambiarían" if args.sin_escribir else "cambiaron"
        prepare.say(
            f"en total {verb} {sum(changed.values())} de {plural(len(changed), 'archivo', 'archivos')}"
        )
    problems = prepare.checks()
    for problem in problems:
        print(f"FALLA: {problem}", file=sys.stderr)
    if problems:
        print("corre «python -m maintainer prepare» (ver docs/mantenimiento.md)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

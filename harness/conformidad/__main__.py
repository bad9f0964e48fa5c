"""``python -m harness.conformidad RUTA/agent.py``: la suite sobre ese agente, con un informe en español;
sale con 0 solo si pasa todo."""

import argparse
import os
import sys

from .checks import CAPABILITIES
from .processes import Context
from .report import all_passed, piece_text, summary
from .suite import run_suite


def parser():
    p = argparse.ArgumentParser(
        prog="python -m harness.conformidad",
        description="La suite de conformidad del agente de la lección, sobre cualquier agent.py.",
    )
    p.add_argument("agente", help="la ruta del agent.py que se prueba (corre siempre en procesos nuevos)")
    p.add_argument(
        "--solo",
        action="append",
        choices=list(CAPABILITIES),
        metavar="PIEZA",
        help=f"solo esta pieza ({', '.join(CAPABILITIES)}); se puede repetir",
    )
    p.add_argument(
        "--varias-llamadas",
        action="store_true",
        help="el agente pide varias herramientas por turno (otro guion): solo se prueban las caídas",
    )
    p.add_argument(
        "--produccion",
        action="store_true",
        help="también el nivel de producción: las defensas de «De la lección a producción»",
    )
    p.add_argument(
        "--entorno",
        action="append",
        default=[],
        metavar="NOMBRE=VALOR",
        help="una variable de entorno para el agente (p. ej. LESSON_AGENT=…); se puede repetir",
    )
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    if not os.path.isfile(args.agente):
        print(f"No existe el archivo {args.agente}: pásale la ruta de un agent.py.", file=sys.stderr)
        return 2
    bad = [pair for pair in args.entorno if "=" not in pair]
    if bad:
        print(f"--entorno {bad[0]}: usa NOMBRE=VALOR.", file=sys.stderr)
        return 2
    # Una ruta relativa a esta carpeta se vuelve absoluta: el agente corre en otra (su carpeta de trabajo).
    env = {
        name: os.path.abspath(value) if os.path.exists(value) else value
        for name, value in (pair.split("=", 1) for pair in args.entorno)
    }
    ctx = Context(os.path.abspath(args.agente), env, args.varias_llamadas)
    rows = []
    for title, piece_rows in run_suite(
        ctx, args.solo, production=args.produccion, progress=lambda t: print(f"… {t}", flush=True)
    ):
        print(piece_text(title, piece_rows), flush=True)
        rows += piece_rows
    print(summary(rows))
    return 0 if all_passed(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

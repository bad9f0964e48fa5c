"""``python -m harness.conformidad RUTA/agent.py``: la suite sobre ese agente, con un informe en español;
sale con 0 solo si pasa todo (una fila que no se pudo comprobar en esta máquina, p. ej. sin strace, no
es un pase: el resumen dice cuántas se comprobaron de cuántas).

``--comando "node agent.js"`` juzga un agente en otro lenguaje: el comando corre en la carpeta de trabajo
con el mismo contrato (AGENT_WORKDIR, CRASH_AFTER, --resume; la suite le deja los archivos de la tarea),
y las filas que importan el agente dicen «no aplica»; ``--help`` dice lo que se le da y lo que se espera. Antes de la primera fila, un agent.py que no se puede importar es una sola línea; una suite
cuyo agente no termina en dos corridas seguidas se detiene con una línea; y al final, lo que el agente
escribió o borró fuera de su carpeta de trabajo es una sección más del informe."""

import argparse
import os
import shlex
import shutil
import sys

from harness.contract import (
    CHECKPOINT_FILE,
    CRASH_VAR,
    EFFECTS_FILE,
    EXIT_DONE,
    EXIT_FAILED,
    EXIT_KILLED,
    EXIT_USAGE,
    HIT,
    LESSON_AGENT_VAR,
    WORKDIR_VAR,
    crash_message,
    done_line,
    kill_line,
    reconcile_line,
    resume_line,
    save_a_line,
    save_b_line,
)
from harness.runs.containment import kill_adopted, own_children
from harness.scenario import KINDS
from harness.tools import NOTES_PATH, REPORT_PATH

from .checks import CAPABILITIES
from .processes import Context, SuiteStopped, import_problem
from .report import all_passed, piece_text, summary
from .rows import judged
from .spanish_args import SpanishArgumentParser
from .suite import run_suite

OUTSIDE_TITLE = "fuera de la carpeta de trabajo"
MAX_SHOWN = 10  # filas de hallazgos; el resto se cuenta en una


EXIT_TEXT = """Sale con 0 solo si pasa cada fila que aplica; con 1 si alguna falló, todavía no está escrita
o no se pudo comprobar en esta máquina (p. ej. sin strace: no es un pase)."""


def command_contract():
    """Lo que la suite le da a un agente de --comando y lo que espera de él: sin esto, quien lo escribe
    en otro lenguaje no sabe de quién es cada archivo (las notas de ventas las pone la suite)."""
    return f"""Con --comando, la suite le da al agente:
  - una carpeta de trabajo nueva por corrida: el comando corre dentro de ella, y {WORKDIR_VAR}
    la nombra;
  - los archivos de la tarea antes de cada corrida nueva: {NOTES_PATH} (las notas de ventas)
    y ningún {REPORT_PATH} anterior; un --resume encuentra la carpeta como quedó;
  - {CRASH_VAR}=<tipo>:<n>, para morir la n-ésima vez que pasa por ese momento
    ({", ".join(KINDS)}),
    y --resume, para retomar desde {CHECKPOINT_FILE}.
Y espera de él:
  - códigos de salida: {EXIT_DONE} al terminar, {EXIT_KILLED} en la caída simulada, {EXIT_FAILED} ante un error
    esperado (una línea en stderr, sin traza), {EXIT_USAGE} ante un argumento desconocido (sin tocar nada);
  - las líneas de log de la lección: «{save_a_line("N", "…")}», «{save_b_line("N")}»,
    «{resume_line("N", "…")}», «{reconcile_line("toolu_…", "…", HIT)}» (o una de sus otras dos ramas),
    «{kill_line(crash_message("<etiqueta>"))}» y «{done_line("…")}»;
  - {CHECKPOINT_FILE} y {EFFECTS_FILE} con la forma de la lección, guardados con un temporal
    y un rename, y {REPORT_PATH} escrito por su write_report (sus copias se cuentan por la
    primera línea de lo que pidió escribir).

{EXIT_TEXT}"""


def parser():
    p = SpanishArgumentParser(
        prog="python -m harness.conformidad",
        description="La suite de conformidad del agente de la lección, sobre cualquier agent.py.",
        epilog=command_contract(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "agente", nargs="?", help="la ruta del agent.py que se prueba (corre siempre en procesos nuevos)"
    )
    p.add_argument(
        "--comando",
        metavar="COMANDO",
        help='un agente en otro lenguaje, p. ej. "node agent.js": corre en la carpeta de trabajo, con '
        f"{WORKDIR_VAR}, {CRASH_VAR} y --resume como agent.py (abajo, lo que se le da y lo que se espera); "
        "las filas que lo importan no aplican",
    )
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
        help=f"una variable de entorno para el agente (p. ej. {LESSON_AGENT_VAR}=…); se puede repetir",
    )
    return p


def command_words(text):
    """Las palabras de ``--comando``; las que nombran un archivo de aquí se vuelven rutas absolutas,
    porque el comando corre en otra carpeta (la de trabajo)."""
    words = shlex.split(text)
    return tuple(os.path.abspath(w) if i and os.path.isfile(w) else w for i, w in enumerate(words))


def _problem(args):
    """La línea de un error en la línea de comandos, o ''."""
    if bool(args.agente) == bool(args.comando):
        return (
            'Pásale la ruta de un agent.py, o --comando "…" para un agente en otro lenguaje (uno de los dos).'
        )
    if args.agente and not os.path.isfile(args.agente):
        return f"No existe el archivo {args.agente}: pásale la ruta de un agent.py."
    if args.comando:
        try:
            words = shlex.split(args.comando)
        except ValueError:
            return f"--comando {args.comando}: las comillas no cierran."
        if not words:
            return '--comando está vacío: pásale el comando que corre el agente, p. ej. "node agent.js".'
        if shutil.which(words[0]) is None:
            return f"--comando {args.comando}: no se encuentra el programa {words[0]} (¿está instalado y en el PATH?)."
    bad = [pair for pair in args.entorno if "=" not in pair]
    return f"--entorno {bad[0]}: usa NOMBRE=VALOR." if bad else ""


def outside_rows(ctx):
    """La sección de lo escrito o borrado fuera de la carpeta de trabajo: una fila ✗ por hallazgo
    (ninguna si no hubo: se mira en cada corrida, no es una comprobación aparte)."""
    found = ctx.bounds.outside_findings()
    scenario, expected = "cada corrida del agente", "nada escrito ni borrado fuera de su carpeta de trabajo"
    hint = f"el agente escribe y borra solo dentro de {WORKDIR_VAR} (las rutas de sus archivos, relativas a ella)"
    rows = [judged(scenario, expected, f, False, hint) for f in found[:MAX_SHOWN]]
    if len(found) > MAX_SHOWN:
        rows.append(judged(scenario, expected, f"y {len(found) - MAX_SHOWN} cambios más", False, hint))
    return rows


def main(argv=None):
    args = parser().parse_args(argv)
    problem = _problem(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    # Una ruta relativa a esta carpeta se vuelve absoluta: el agente corre en otra (su carpeta de trabajo).
    env = {
        name: os.path.abspath(value) if os.path.exists(value) else value
        for name, value in (pair.split("=", 1) for pair in args.entorno)
    }
    agent = os.path.abspath(args.agente) if args.agente else None
    command = command_words(args.comando) if args.comando else ()
    ctx = Context(agent, env, args.varias_llamadas, command)
    own_children()  # los hijos de este proceso son todos de las corridas: un huérfano muere con la suya
    try:
        return _run(ctx, args.solo, args.produccion)
    finally:
        kill_adopted()  # un huérfano que dejó el grupo y borró su marca: la suite no lo deja vivo


def _run(ctx, pieces, production=False):
    problem = import_problem(ctx)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    rows = []
    try:
        for title, piece_rows in run_suite(
            ctx, pieces, production=production, progress=lambda t: print(f"… {t}", flush=True)
        ):
            print(piece_text(title, piece_rows), flush=True)
            rows += piece_rows
    except SuiteStopped as stop:
        print(stop, file=sys.stderr)
        return 1
    extra = outside_rows(ctx)
    if extra:
        print(piece_text(OUTSIDE_TITLE, extra))
        rows += extra
    print(summary(rows))
    return 0 if all_passed(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

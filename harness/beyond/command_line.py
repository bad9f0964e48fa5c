"""El ``main`` que comparten los agentes de «Más allá»: el contrato de línea de comandos de la lección.

``[--resume] [--live]``, la variante en ``AGENT_VARIANT``, el directorio en ``AGENT_WORKDIR``, la
caída en ``CRASH_AFTER`` (137 al morir), ``[done] …`` y 0 al terminar; un problema esperado es una
línea en español en stderr (2 si la línea de comandos no vale, 1 si falló la corrida), nunca una traza.
"""

import os
import sys

from harness.crash import SimulatedCrash, crash_after
from harness.errors import HarnessError, disk_failure
from harness.lock import workdir_lock
from harness.runner import KILLED
from harness.workdir import enter_workdir

FLAGS = ("--resume", "--live")


def command_line_problem(args, variant, variants):
    """Qué está mal en los argumentos o en ``AGENT_VARIANT`` ('' si nada)."""
    unknown = set(args) - set(FLAGS)
    if unknown:
        return f"Argumento desconocido: {' '.join(sorted(unknown))}"
    if variant not in variants:
        return f"AGENT_VARIANT={variant} no es una variante conocida: usa {' o '.join(variants)}"
    return ""


def agent_main(argv, *, variants, usage, run):
    """Corre ``run(resume, live, variant)`` en el directorio de trabajo, con su candado, y devuelve el
    código de salida; la primera de ``variants`` es la de omisión."""
    args = sys.argv[1:] if argv is None else argv
    variant = os.environ.get("AGENT_VARIANT") or variants[0]
    problem = command_line_problem(args, variant, variants)
    if problem:
        print(f"{problem}. {usage}", file=sys.stderr)
        return 2
    try:
        enter_workdir(os.environ.get("AGENT_WORKDIR"))
        crash_after()
        with workdir_lock():
            result = run("--resume" in args, "--live" in args, variant)
    except SimulatedCrash as err:
        print(f"[kill] {err}")
        return KILLED
    except HarnessError as err:
        print(err, file=sys.stderr)
        return 1
    except OSError as err:
        print(disk_failure(err), file=sys.stderr)
        return 1
    print(f"[done] {result}")
    return 0

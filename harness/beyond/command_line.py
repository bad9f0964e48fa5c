"""El ``main`` que comparten los agentes de «Más allá»: el contrato de línea de comandos de la lección.

``[--resume] [--live]``, la variante en ``AGENT_VARIANT``, el directorio en ``AGENT_WORKDIR``, la
caída en ``CRASH_AFTER`` (137 al morir), ``[done] …`` y 0 al terminar; Ctrl-C, una línea y 130; un
problema esperado es una línea en español en stderr (2 si la línea de comandos no vale, 1 si falló la
corrida), nunca una traza. Las banderas, los códigos y la sesión (``harness.defenses.session``) son los mismos
que usa el ``main`` de la lección; una prueba los fija para los tres agentes.
"""

import os
import sys

from harness.contract import EXIT_KILLED, EXIT_USAGE, VARIANT_VAR, command_line_problem, done_line, kill_line
from harness.crash import SimulatedCrash
from harness.defenses.session import AgentFailure, agent_session
from harness.errors import one_line, print_final


def agent_main(argv, *, variants, usage, run):
    """Corre ``run(resume, live, variant)`` en la sesión del agente y devuelve el código de salida; la
    primera de ``variants`` es la de omisión."""
    args = sys.argv[1:] if argv is None else argv
    variant = os.environ.get(VARIANT_VAR) or variants[0]
    problem = command_line_problem(args, variant, variants)
    if problem:
        print(one_line(f"{problem}. {usage}"), file=sys.stderr)  # un salto de línea ajeno, escapado
        return EXIT_USAGE
    try:
        with agent_session():
            result = run("--resume" in args, "--live" in args, variant)
    except SimulatedCrash as err:
        print(kill_line(err))
        return EXIT_KILLED
    except AgentFailure as err:
        print(err, file=sys.stderr)
        return err.code
    return print_final(done_line(result))  # 0, o 1 con la salida cerrada: una línea, sin traza

"""Las variantes del motor en el laboratorio de caídas: «dbos» y «dbos-idempotente», registradas al importar.

    import harness.beyond.lab_variants  # noqa: F401 (agrega las dos al menú «Variante»)

Corren la misma tarea sobre DBOS (``harness.beyond.dbos_agent``, sin importarlo: dbos tarda en
cargar) y mueren en los mismos cuatro momentos que la lección, dichos con lo que anota el motor. El
disco es lo que el motor tiene en ``dbos.sqlite`` (``engine_view``) y la historia sale de su log
(``engine_timeline``). El laboratorio no importa este módulo: lo importa quien quiere estas variantes.
"""

import importlib.util

from harness import scenario
from harness.beyond import engine_timeline
from harness.beyond.engine_view import DATABASE, DATABASE_URL_ENV, ENGINE_FILES, ID_PATH, read_engine_state
from harness.contract import CHECKPOINT_FILE, HIT, RERUN
from harness.crash_lab.timeline import EFFECT, SAVE_A, SAVE_B
from harness.crash_lab.variants import Variant, Words, register
from harness.tools import NOTES_PATH, REPORT_PATH

ENGINE_MODULE = "harness.beyond.dbos_agent"
ENGINE_AGENT = importlib.util.find_spec(ENGINE_MODULE).origin

# Los mismos cuatro momentos de la lección, con lo que el motor tiene anotado en cada uno.
ENGINE_KINDS = {
    scenario.SAVE_A: "① salida del paso del modelo anotada, herramienta sin ejecutar",
    scenario.TOOL: "② herramienta ejecutada, salida de su paso sin anotar",
    scenario.EFFECT: "salida del paso de la herramienta anotada",
    scenario.SAVE_B: "③ fin del turno (el motor no anota nada más)",
}
# Lo que hace el motor con el paso que la caída dejó abierto (engine_view.BRANCH_MARKERS).
ENGINE_BRANCHES = {
    HIT: "el paso tiene su salida anotada: el motor reutiliza la salida guardada del paso, sin ejecutarlo",
    RERUN: "el paso no tiene salida anotada: el motor vuelve a ejecutar el paso (al menos una vez)",
}
ENGINE_BRANCH_SHORT = {HIT: "reutiliza", RERUN: "repite el paso"}
ENGINE_WORDS = Words(
    kinds=ENGINE_KINDS,
    branches=ENGINE_BRANCHES,
    branch_short=ENGINE_BRANCH_SHORT,
    branch_title="Qué hizo el motor al reanudar",
    boxes={
        SAVE_A: ("paso modelo", "pending={tool}"),
        EFFECT: ("salida anotada", DATABASE),
        SAVE_B: ("fin del turno", "motor: {branch}"),
    },
    idle="sin escribir",
    unread="el flujo en la base",
    # Con la escritura idempotente un paso repetido no agrega copias: se cuentan copias, no ejecuciones.
    copies=("Copias del reporte en report.txt", "copia", "copias"),
)


def _engine_branch(run):
    return engine_timeline.engine_branch(run.stdout)


def engine_variant(name, label, agent_variant, twice_why=""):
    """Una variante que corre el agente de DBOS con ``AGENT_VARIANT=agent_variant``."""
    return Variant(
        name,
        label,
        words=ENGINE_WORDS,
        read_state=read_engine_state,
        build_timeline=engine_timeline.build,
        read_branch=_engine_branch,
        files=(REPORT_PATH, NOTES_PATH, *ENGINE_FILES),
        resume_file=ID_PATH,
        agent=ENGINE_AGENT,
        agent_variant=agent_variant,
        # Siempre el SQLite de la carpeta, aunque el entorno nombre un Postgres: es lo que se dibuja.
        env={DATABASE_URL_ENV: ""},
        agent_name=f"agente de DBOS ({ENGINE_MODULE})",
        command=f"python -m {ENGINE_MODULE}",
        cut_blocker=f"El motor no tiene {CHECKPOINT_FILE}: lo que anota está en {DATABASE}.",
        twice_why=twice_why,
    )


DBOS = register(
    engine_variant(
        "dbos",
        "motor durable (DBOS)",
        "al-menos-una-vez",
        twice_why=(
            " Es la ventana ② en el motor: el paso de write_report murió antes de anotar su salida, el "
            "motor lo volvió a ejecutar (al menos una vez) y la escritura no es idempotente."
        ),
    )
)
DBOS_IDEMPOTENT = register(engine_variant("dbos-idempotente", "DBOS + escritura idempotente", "idempotente"))

"""Las variantes del laboratorio de caídas: un registro que el menú, el dibujo y los paneles consultan.

Cada variante dice qué agente corre y con qué ``AGENT_VARIANT``, cómo leer su disco, cómo armar su
historia y con qué palabras se cuenta. El laboratorio registra las dos de la lección («dos-puntos» y
«solo-b»); otro módulo agrega las suyas llamando a ``register`` al importarse (las del motor durable
las registra el módulo que importa el notebook de «Más allá»). El
laboratorio no importa a nadie para conocerlas: el menú muestra las registradas, en el orden en que
se registraron.
"""

import pathlib
from collections.abc import Callable
from typing import NamedTuple

from harness import scenario
from harness.contract import (
    BRANCH_MARKERS,
    CHECKPOINT_FILE,
    EFFECTS_FILE,
    HIT,
    IS_ERROR,
    NO_PENDING,
    RERUN,
    TMP_FILES,
    VARIANT_VAR,
)
from harness.crash_lab import timeline
from harness.crash_lab.timeline import EFFECT, SAVE_A, SAVE_B
from harness.crash_lab.words import NO_CRASH, split_label
from harness.notebook.disk_state import read_disk_state
from harness.scenario import KINDS
from harness.tools import NOTES_PATH, REPORT_PATH


class Words(NamedTuple):
    """Cómo cuenta una variante lo que pasó: momentos, ramas al reanudar, cajas del dibujo y copias del reporte."""

    kinds: dict  # tipo de caída → el momento en palabras («① punto A guardado, herramienta sin ejecutar»)
    branches: dict  # rama al reanudar → qué hizo, en una frase
    branch_short: dict  # rama → una palabra, para la última caja del turno en el dibujo
    branch_title: str  # el título de esa rama en el panel del disco («Rama de reconcile»)
    boxes: dict  # paso (SAVE_A, EFFECT, SAVE_B) → (título, detalle); el detalle rellena {tool} y {branch}
    idle: str  # el detalle de la última caja de un turno sin rama («pending=null»)
    unread: str  # lo que una reanudación fallida no pudo leer («el punto de control»)
    copies: tuple  # (título, singular, plural) de cuántas veces quedó el reporte en disco
    branch_log: dict = {}  # rama → sus palabras en el log («acierto en el registro»), si las tiene


class Variant(NamedTuple):
    """Una entrada del menú «Variante» y todo lo que el laboratorio necesita para correrla y contarla."""

    name: str  # la clave del menú y de choose(variant=...)
    label: str  # el texto del menú
    words: Words
    read_state: Callable  # carpeta → su disco (DiskState, o uno con su forma: rows, report_copies)
    build_timeline: Callable  # (variante, [(acción, AgentRun)], disco) → harness.crash_lab.timeline.Timeline
    read_branch: Callable  # AgentRun de una reanudación → la rama que tomó (una clave de words.branches)
    files: tuple  # lo que deja una corrida en la carpeta: Reiniciar lo borra
    resume_file: str  # sin este archivo en la carpeta no hay nada que reanudar
    agent: str | None = None  # la ruta del agente; None: el del laboratorio (CrashLab(agent=...))
    agent_variant: str | None = None  # el AGENT_VARIANT que se le pasa (None: ninguno)
    env: dict | None = None  # más variables de entorno para el proceso
    agent_name: str | None = None  # cómo se nombra su agente (None: por su archivo)
    command: str = "python agent.py"  # cómo se muestra el comando en el log
    missing_kind: str | None = None  # el tipo de caída que en esta variante nunca ocurre
    missing_why: str = ""  # por qué («no se guarda el punto A»)
    cut_blocker: str = ""  # por qué cortar checkpoint.json no tiene sentido ('' si lo tiene)
    twice_why: str = ""  # qué explica un reporte escrito dos veces
    not_followed: tuple = ()  # (marca del log, aviso) si el agente no implementa la variante


_registry = {}


def register(variant):
    """Agrega ``variant`` al menú (al final; si ya había una con su nombre, la reemplaza en su lugar)."""
    _registry[variant.name] = variant
    return variant


def names():
    """Los nombres registrados, en el orden del menú."""
    return list(_registry)


def get(name):
    """La variante registrada con ese nombre; si no hay, un ValueError que dice qué hacer."""
    if name in _registry:
        return _registry[name]
    raise ValueError(
        f"Variante desconocida: {name}. Usa una de: {', '.join(_registry)}. Las del motor durable (DBOS) "
        "aparecen después de importar el módulo que las registra, como hace el notebook de «Más allá»."
    )


def lab_files():
    """Todo lo que puede dejar una corrida de cualquier variante registrada, sin repetir, en orden."""
    return tuple(dict.fromkeys(name for variant in _registry.values() for name in variant.files))


def agent_name_of(path):
    """Cómo nombra a ``path`` la variante que lo corre (None si ninguna le da un nombre)."""
    real = pathlib.Path(path).resolve()
    named = (v for v in _registry.values() if v.agent and v.agent_name)
    return next((v.agent_name for v in named if pathlib.Path(v.agent).resolve() == real), None)


# —— Las etiquetas de caída, dichas con las palabras de cada variante ——


def exists_in(label, variant):
    return label == NO_CRASH or split_label(label)[0] != get(variant).missing_kind


def describe_label(label, variant=None):
    """«turno 3 · ② herramienta ejecutada, registro sin escribir», o «sin caída»."""
    if label == NO_CRASH:
        return "sin caída: la corrida llega hasta [done]"
    kind, turn = split_label(label)
    if variant is None:
        return f"turno {turn} · {KINDS[kind]}"
    text = f"turno {turn} · {get(variant).words.kinds[kind]}"
    return text if exists_in(label, variant) else f"{text} (no existe con {get(variant).label})"


def missing_note(label, variant):
    """Por qué una etiqueta no se puede elegir en esta variante ('' si se puede)."""
    if exists_in(label, variant):
        return ""
    return (
        f"Con «{get(variant).label}» {get(variant).missing_why}, así que la caída «"
        f"{describe_label(label)}» nunca ocurriría: la corrida llegaría hasta el final. Elige otro punto."
    )


# —— Las dos variantes de la lección ——

# Las ramas de reconcile (harness.runs.launcher.AgentRun.branch), en palabras llanas; las de la lección y su
# log («acierto en el registro», «agregando is_error») van aparte: harness.contract.BRANCH_MARKERS.
BRANCHES = {
    HIT: "está en el registro: reutiliza el resultado anotado, no vuelve a ejecutar",
    RERUN: "no está en el registro y es de solo lectura: la vuelve a ejecutar y la anota",
    IS_ERROR: (
        "no está en el registro y tiene efectos secundarios: no adivina, devuelve un tool_result con "
        "is_error y el modelo verifica por su cuenta"
    ),
    NO_PENDING: "sin llamada colgante (pendingToolUse=null): reconcile devuelve null y se sigue",
}
# Una palabra por rama: la de la caja del punto B en el dibujo y la primera del texto de la rama.
BRANCH_SHORT = {HIT: "acierto", RERUN: "repetición", IS_ERROR: "is_error", NO_PENDING: "ninguna"}
LESSON_WORDS = Words(
    kinds=KINDS,
    branches=BRANCHES,
    branch_short=BRANCH_SHORT,
    branch_title="Rama de reconcile",
    boxes={
        SAVE_A: ("punto A", "pending={tool}"),
        EFFECT: ("registro", EFFECTS_FILE),
        SAVE_B: ("punto B", "reconcile: {branch}"),
    },
    idle="pending=null",
    unread="el punto de control",
    copies=("write_report se ejecutó de verdad", "vez", "veces"),
    branch_log=BRANCH_MARKERS,  # las palabras de la línea [resume][reconcile] del log
)
LESSON_FILES = (CHECKPOINT_FILE, EFFECTS_FILE, REPORT_PATH, NOTES_PATH, *TMP_FILES)


def _reconcile_branch(run):
    return run.branch


_lesson = {
    "words": LESSON_WORDS,
    "read_state": read_disk_state,
    "build_timeline": timeline.build,
    "read_branch": _reconcile_branch,
    "files": LESSON_FILES,
    "resume_file": CHECKPOINT_FILE,
}
register(Variant("dos-puntos", "dos puntos (A y B)", **_lesson))
register(
    Variant(
        "solo-b",
        "solo el punto B",
        **_lesson,
        agent_variant="solo-b",
        # En la variante solo-b no se guarda el punto A, así que esa caída nunca ocurre.
        missing_kind=scenario.SAVE_A,
        missing_why="no se guarda el punto A",
        twice_why=(
            " Es la falla que la lección le señala a quien propone guardar solo el punto B: sin el punto A, "
            "la llamada colgante no quedó en el punto de control y la reanudación volvió a pedir y ejecutar "
            "write_report."
        ),
        not_followed=(
            "[save A]",
            f" Ojo: este agente no implementa {VARIANT_VAR}=solo-b (guardó el punto A).",
        ),
    )
)

"""Las palabras del laboratorio: etiquetas de caída, variantes, ramas de reconcile y plurales.

Lo que se lee va con las palabras de la lección (① punto A guardado, ② herramienta ejecutada…);
la etiqueta cruda (``after-tool:3``) solo aparece como el valor de ``CRASH_AFTER``. Las variantes del
motor (DBOS, de «Más allá») mueren en los mismos momentos, dichos con lo que el motor anota.
"""

from harness.crash import KINDS

TURNS = 3  # la corrida guionada: read_notes, count_words, write_report
VARIANTS = {
    "dos-puntos": "dos puntos (A y B)",
    "solo-b": "solo el punto B",
    "dbos": "motor durable (DBOS)",
    "dbos-idempotente": "DBOS + escritura idempotente",
}
# Las variantes que corren harness.beyond.dbos_agent, con el AGENT_VARIANT que le pasan.
ENGINE_VARIANTS = {"dbos": "al-menos-una-vez", "dbos-idempotente": "idempotente"}
# Los mismos cuatro momentos de la lección, con lo que el motor tiene anotado en cada uno.
ENGINE_KINDS = {
    "after-save-a": "① salida del paso del modelo anotada, herramienta sin ejecutar",
    "after-tool": "② herramienta ejecutada, salida de su paso sin anotar",
    "after-effect-write": "salida del paso de la herramienta anotada",
    "after-save-b": "③ fin del turno (el motor no anota nada más)",
}
NO_CRASH = ""
# En la variante solo-b no se guarda el punto A, así que esa caída nunca ocurre.
MISSING_IN = {"solo-b": "after-save-a"}

# Las ramas de reconcile (harness.runner.BRANCH_MARKERS), en palabras.
BRANCHES = {
    "hit": "está en el registro: reutiliza el resultado, no vuelve a ejecutar",
    "rerun": "no está en el registro y es de solo lectura: la vuelve a ejecutar",
    "is_error": (
        "no está en el registro y tiene efectos secundarios: agrega un tool_result con is_error "
        "y el modelo verifica por su cuenta"
    ),
    "none": "sin llamada colgante (pendingToolUse=null): reconcile devuelve null y se sigue",
}
BRANCH_SHORT = {"hit": "acierto", "rerun": "repetida", "is_error": "is_error", "none": "nada"}
# Lo que hace el motor con el paso que la caída dejó abierto (harness.beyond.engine_view.BRANCH_MARKERS).
ENGINE_BRANCHES = {
    "hit": "el paso tiene su salida anotada: el motor reutiliza la salida guardada del paso, sin ejecutarlo",
    "rerun": "el paso no tiene salida anotada: el motor vuelve a ejecutar el paso (al menos una vez)",
}
ENGINE_BRANCH_SHORT = {"hit": "reutiliza", "rerun": "re-ejecuta"}
ACTIONS = {
    "ready": "Listo",
    "run": "Ejecutar",
    "resume": "Reanudar",
    "reset": "Reiniciar",
    "cut": "Cortar checkpoint.json",
}


def is_engine(variant):
    return variant in ENGINE_VARIANTS


def plural(n, one, many):
    return f"{n} {one if n == 1 else many}"


def times(n):
    return plural(n, "vez", "veces")


def crash_labels():
    """Todas las etiquetas de la corrida de 3 turnos, en el orden en que ocurren."""
    return [NO_CRASH] + [f"{kind}:{turn}" for turn in range(1, TURNS + 1) for kind in KINDS]


def split_label(label):
    kind, _, turn = label.partition(":")
    return kind, int(turn)


def exists_in(label, variant):
    return label == NO_CRASH or split_label(label)[0] != MISSING_IN.get(variant)


def describe_label(label, variant=None):
    """«turno 3 · ② herramienta ejecutada, registro sin escribir», o «sin caída»."""
    if label == NO_CRASH:
        return "sin caída: la corrida llega hasta [done]"
    kind, turn = split_label(label)
    text = f"turno {turn} · {(ENGINE_KINDS if is_engine(variant) else KINDS)[kind]}"
    return text if variant is None or exists_in(label, variant) else f"{text} (no existe con solo el punto B)"


def missing_note(label, variant):
    """Por qué una etiqueta no se puede elegir en esta variante ('' si se puede)."""
    if exists_in(label, variant):
        return ""
    return (
        "Con «solo el punto B» no se guarda el punto A, así que la caída «"
        f"{describe_label(label)}» nunca ocurriría: la corrida llegaría hasta el final. Elige otro punto."
    )

"""Las palabras de todo el laboratorio: etiquetas de caída, acciones y plurales.

Lo que se lee va con las palabras de la lección (① punto A guardado, ② herramienta ejecutada…);
la etiqueta cruda (``after-tool:3``) solo aparece como el valor de ``CRASH_AFTER``. Las palabras de
cada variante (sus momentos, sus ramas al reanudar) van con ella, en ``harness.crash_lab.variants``.
"""

from harness.contract import CHECKPOINT_FILE
from harness.crash import KINDS

TURNS = 3  # la corrida guionada: read_notes, count_words, write_report
NO_CRASH = ""
ACTIONS = {
    "ready": "Listo",
    "run": "Ejecutar",
    "resume": "Reanudar",
    "reset": "Reiniciar",
    "cut": f"Cortar {CHECKPOINT_FILE}",
}


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

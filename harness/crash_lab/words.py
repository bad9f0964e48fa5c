"""Las palabras de todo el laboratorio: etiquetas de caída, acciones y veces.

Lo que se lee va con las palabras de la lección (① punto A guardado, ② herramienta ejecutada…);
la etiqueta cruda (``after-tool:3``) solo aparece como el valor de ``CRASH_AFTER``. Las palabras de
cada variante (sus momentos, sus ramas al reanudar) van con ella, en ``harness.crash_lab.variants``.
"""

from harness.contract import CHECKPOINT_FILE
from harness.scenario import LABELS
from harness.scenario import split as split_label  # noqa: F401 (el nombre que usan los dibujos)
from harness.text import plural

NO_CRASH = ""
ACTIONS = {
    "ready": "Listo",
    "run": "Ejecutar",
    "resume": "Reanudar",
    "reset": "Reiniciar",
    "cut": f"Cortar {CHECKPOINT_FILE}",
}


def times(n):
    return plural(n, "vez", "veces")


def crash_labels():
    """«Sin caída» y las etiquetas de la corrida guionada (``harness.scenario``), en el orden en que ocurren."""
    return [NO_CRASH, *LABELS]

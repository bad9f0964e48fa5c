"""Puntos de caída simulada: «morir después de la enésima X» como una etiqueta exacta.

Una etiqueta es ``<tipo>:<n>``; n cuenta las veces que ese tipo ocurrió en este proceso, desde 1.
Si coincide con la variable de entorno ``CRASH_AFTER``, ``crash_point`` lanza ``SimulatedCrash``.
"""

import atexit
import gc
import os
from collections import Counter

from harness.contract import CRASH_VAR, crash_message, kill_line
from harness.errors import HarnessError
from harness.jitter import jitter
from harness.scenario import KINDS
from harness.scenario import label as label_of

# Cada corrida es un proceso: al cerrarse, el intérprete recorre con el recolector de basura todo lo que
# creó; congelado antes, se lo salta (alrededor de un décimo de la CPU de una caída y su reanudación:
# python -m benchmarks.agent_cpu). Aquí y no en el agente: todo agente importa este módulo, y la lección
# no tiene por qué leer esto.
atexit.register(gc.freeze)

_counts = Counter()


class SimulatedCrash(Exception):  # noqa: N818 (el nombre es el de la lección)
    """La muerte simulada del proceso: solo main() la atrapa, para salir con 137."""


def crash_after():
    """La etiqueta pedida en ``CRASH_AFTER`` ('' si no hay), validada para que un error de tipeo
    no haga que la caída pedida no ocurra nunca en silencio."""
    label = os.environ.get(CRASH_VAR, "")
    kind, _, n = label.partition(":")
    # Solo cifras ASCII, y pocas: «²» es un dígito para isdigit, pero int() no lo lee (ni miles de cifras).
    if label and (kind not in KINDS or not (n.isascii() and n.isdigit() and len(n) < 10) or int(n) < 1):
        raise HarnessError(
            f"{CRASH_VAR}={label} no es una etiqueta válida: usa <tipo>:<n> con n ≥ 1 y tipo "
            f"uno de {', '.join(KINDS)}."
        )
    return label


def crash_point(kind):
    """Cuenta una ocurrencia de ``kind`` y muere si su etiqueta es la de ``CRASH_AFTER``."""
    jitter()  # solo con AGENT_JITTER_MS: da tiempo a que un SIGKILL real caiga justo en este momento
    _counts[kind] += 1
    label = label_of(kind, _counts[kind])
    if label == crash_after():
        raise SimulatedCrash(crash_message(label))


def reset_crash_points():
    """Vuelve los contadores a cero, como un proceso nuevo (para notebooks y pruebas)."""
    _counts.clear()


def crash_at(label):
    """Como ``CRASH_AFTER=label`` en la terminal, pero dentro del kernel: la caída se imprime como
    ``[kill]`` y el bloque termina ahí (``with crash_at("after-tool:2"): ...``)."""
    import contextlib  # solo en un kernel: cada proceso del agente importa este módulo y no lo usa

    return contextlib.contextmanager(_crash_block)(label)


def _crash_block(label):
    os.environ[CRASH_VAR] = label
    reset_crash_points()  # cada bloque cuenta desde 1, como un proceso nuevo
    try:
        yield
    except SimulatedCrash as err:
        print(kill_line(err))
    finally:
        del os.environ[CRASH_VAR]
        reset_crash_points()

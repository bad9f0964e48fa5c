"""Demoras al azar para repartir las muertes reales a lo largo de todo el turno.

Con ``AGENT_JITTER_MS=N`` (apagado por omisión) cada herramienta, cada llamada al modelo guionado y
cada punto de caída esperan entre 0 y N milisegundos. Así un SIGKILL enviado en un instante al azar
cae en cualquier ventana del turno, no solo en el arranque del intérprete (lo usa la prueba de tortura).
"""

import os
import time

from harness.contract import JITTER_VAR
from harness.errors import HarnessError


def jitter_ms():
    """El máximo pedido en ``AGENT_JITTER_MS`` (0 si no hay), validado para no ignorar un error de tipeo."""
    raw = os.environ.get(JITTER_VAR, "")
    try:
        value = float(raw or 0)
    except ValueError:
        value = -1
    if not 0 <= value <= 60_000:
        raise HarnessError(f"{JITTER_VAR}={raw} no es válido: usa milisegundos entre 0 y 60000.")
    return value


def jitter():
    """Espera entre 0 y ``AGENT_JITTER_MS`` milisegundos; sin la variable, no hace nada."""
    top = jitter_ms()
    if top:
        import random  # solo se necesita con la variable puesta

        time.sleep(random.uniform(0, top) / 1000)

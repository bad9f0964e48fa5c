"""El laboratorio de caídas: el widget y su API (``widget``) y lo que dibuja (``view``).

El agente nunca importa este paquete: ipywidgets queda fuera de su camino.
"""

from harness.crash_lab.widget import PLAIN_FALLBACK, CrashLab

__all__ = ["CrashLab", "PLAIN_FALLBACK"]

"""Para los notebooks: el laboratorio de caídas, su widget y lo que dibuja (el agente nunca lo importa: ipywidgets queda fuera)."""

from harness.crash_lab.widget import PLAIN_FALLBACK, CrashLab

__all__ = ["CrashLab", "PLAIN_FALLBACK"]

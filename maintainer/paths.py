"""Dónde está cada cosa en el repositorio, para quien mantiene el curso (``harness`` no lo sabe).

Son las rutas del código de quien califica (``solutions.grading.paths``): una sola definición.
"""

from solutions.grading.paths import LESSON, NOTEBOOKS, REFERENCE_AGENT, ROOT

__all__ = ["LESSON", "NOTEBOOKS", "REFERENCE_AGENT", "ROOT"]

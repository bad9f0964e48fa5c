"""Dónde está cada cosa en el repositorio, para quien mantiene el curso (``harness`` no lo sabe).

Las rutas que comparte con quien califica vienen de ``solutions.grading.paths``: una sola definición.
"""

import os

from harness.notebook.export import PRODUCTION_NOTEBOOK
from solutions.grading.paths import LESSON, NOTEBOOKS, REFERENCE_AGENT, ROOT

# La segunda fuente del agente de referencia, y el agente de la lección a su tamaño.
PRODUCTION = os.path.join(NOTEBOOKS, PRODUCTION_NOTEBOOK)
LESSON_AGENT = os.path.join(ROOT, "solutions", "agent_leccion.py")
# Las soluciones comentadas para instructores: no se reparten (la edición deja afuera solutions/grading/).
ANNOTATED = os.path.join(ROOT, "solutions", "grading", "soluciones_comentadas.ipynb")

__all__ = ["ANNOTATED", "LESSON", "LESSON_AGENT", "NOTEBOOKS", "PRODUCTION", "REFERENCE_AGENT", "ROOT"]

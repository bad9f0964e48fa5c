"""Dónde encuentra el código de quien califica cada pieza del repositorio, a partir de este archivo.

``harness`` no sabe nada de esto (se instala solo, sin el repositorio); quien mantiene el curso usa
las mismas rutas desde ``maintainer.paths``.
"""

import os

GRADING = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(GRADING))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
LESSON = os.path.join(NOTEBOOKS, "leccion_6_puntos_de_control.ipynb")
REFERENCE_AGENT = os.path.join(ROOT, "solutions", "agent.py")
# El agente de la lección a su tamaño: el que corren los ejercicios, que vienen antes de producción.
LESSON_AGENT = os.path.join(ROOT, "solutions", "agent_leccion.py")
# Las fuentes de nbgrader (las versiones de instructor) y su configuración.
SOURCE = os.path.join(GRADING, "source")
NBGRADER_CONFIG = os.path.join(GRADING, "nbgrader_config.py")

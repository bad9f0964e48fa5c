"""Dónde está cada cosa en el repositorio (solo para quien lo mantiene: ``harness`` no lo sabe)."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
LESSON = os.path.join(NOTEBOOKS, "leccion_6_puntos_de_control.ipynb")
REFERENCE_AGENT = os.path.join(ROOT, "solutions", "agent.py")

"""Una corrida del agente en una fila de tabla: su código, si trajo una traza y lo último que dijo.

Así muestra «De la lección a producción» cada falla, en el agente de la lección y en el de referencia.
"""

import os
from pathlib import Path


def said(run, workdir=None):
    """Lo último que imprimió una corrida (en stderr, si escribió ahí), sin la ruta de su carpeta."""
    last = (run.stderr.strip() or run.stdout.strip() or "(nada)").splitlines()[-1]
    for shown in {str(Path(workdir).resolve()), os.path.abspath(workdir)} if workdir else ():
        last = last.replace(shown, "…")
    return last


def traceback(run):
    """«sí» si la corrida terminó en una traza de Python (lo que el agente nunca debería mostrar)."""
    return "sí" if "Traceback" in run.stderr else "no"


def outcome(run):
    """Cómo terminó, en las palabras de las predicciones: una traza, [done] o un error de una línea."""
    if "Traceback" in run.stderr:
        return "una traza"
    return "[done]" if run.returncode == 0 else "un error de una línea"


def summary_row(case, run, workdir=None):
    """[caso, código, traza, lo último que dijo]: las columnas de las tablas de fallas."""
    return [case, run.returncode, traceback(run), said(run, workdir)]

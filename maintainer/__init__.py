"""Herramientas de quien mantiene el curso: no se instalan con ``harness`` ni las importa un notebook.

Se corren como módulos desde la raíz del repositorio (``python -m maintainer prepare``).

- ``prepare`` (``python -m maintainer prepare``/``check``): todo lo generado, regenerado y comprobado.
- ``agent_source``: ``solutions/agent.py`` generado desde la lección, y de vuelta (como nbdev_update).
- ``torture``: muertes reales con SIGKILL en instantes al azar (pruebas y benchmarks).

Ejecutar un notebook y guardar salidas deterministas lo hace ``solutions.grading.notebook_run``: lo
usan también los ejercicios que reparte quien dicta el curso.
"""

import sys

# Corrido sin el entorno del curso (``python -m maintainer …`` con otro python): una línea que dice
# qué activar o instalar, no la traza de un ModuleNotFoundError.
if sys.argv[:1] == ["-m"]:
    from harness.conformidad.spanish_args import explain_missing_modules
    from solutions.grading.paths import ROOT

    explain_missing_modules((), "test", ROOT)

"""Configuración de nbgrader para los ejercicios de la Lección 6 (ver docs/instructores.md).

La carpeta del curso (release/, submitted/, autograded/, feedback/, gradebook.db) es aquella donde
se corre nbgrader, fuera del repositorio. Su propio ``nbgrader_config.py`` carga este sin guardar rutas
(lo busca por el paquete ``solutions``: ``load_subconfig(NBGRADER_CONFIG)``), y lo escribe ``release.course_config``.

Los pasos propios de autograde viven en ``solutions.grading``: nbgrader tiene que poder importarlo.
``grade_class`` corre desde la raíz del repositorio (``python -m``) y ``release.nbgrader`` lanza
nbgrader con el repositorio en PYTHONPATH; a mano, lo mismo: ``PYTHONPATH=<repo> nbgrader …``. Si no
puede, nbgrader se detiene aquí: sin esta configuración calificaría sin aislamiento.
"""

import os
import sys

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

try:
    from solutions.grading import alembic_head, paths, sandbox
except ModuleNotFoundError as missing:
    if missing.name not in ("solutions", "solutions.grading"):
        raise
    # SystemExit, no una excepción: nbgrader anota las de un archivo de configuración y sigue sin él.
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    raise SystemExit(
        "nbgrader no encuentra el código de calificación de la Lección 6 (el paquete solutions de "
        f"{repo}). Córrelo con el repositorio en PYTHONPATH, por ejemplo: "
        f"PYTHONPATH={repo} nbgrader autograde leccion_6"
    ) from None
from solutions.grading.preprocessors import (
    DisarmFolder,
    JudgeAnswers,
    RestoreStructure,
    WarmExecute,
)

# Una base nueva anota la versión de su esquema sin lanzar otro proceso (alembic_head.py).
alembic_head.install()

c = get_config()  # noqa: F821 (lo inyecta traitlets al cargar el archivo)

# Las versiones de instructor viven en el repositorio, no en la carpeta del curso.
c.CourseDirectory.source_directory = paths.SOURCE
# Lo que los notebooks crean al ejecutarse no se reparte ni pisa entregas.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "_trabajo"]

# Lo que ve cada estudiante en lugar de la solución, en español.
c.ClearSolutions.code_stub = {"python": "# TU CÓDIGO AQUÍ\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "ESCRIBE AQUÍ TU RESPUESTA"

# Una celda que no termina (un bucle infinito) se interrumpe y cuenta como error; la calificación de
# la clase sigue. Las celdas de prueba no vuelven a correr código de la entrega: un bucle cuesta uno.
c.Execute.timeout = 30
c.JudgeAnswers.timeout = 30  # el código del Nivel 2 corre fuera del kernel con el mismo corte
# Al terminar, el kernel (y su aislamiento) se mata sin esperar un cierre ordenado: nada que guardar.
c.Execute.shutdown_kernel = "immediate"
# La entrega se rearma sobre el notebook repartido (RestoreStructure): no hace falta agregar celdas.
c.OverwriteCells.add_missing_cells = False
# Cada kernel corre aislado (sandbox.py); sin aislamiento, calificar se detiene con un mensaje claro.
c.Execute.kernel_manager_class = "solutions.grading.sandbox.SandboxKernelManager"
if os.environ.get("NBGRADER_EXECUTION") is None and "autograde" in sys.argv:
    sandbox.required()
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    RestoreStructure,
    OverwriteCells,
    CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    WarmExecute,
    DisarmFolder,  # antes de escribir en la carpeta de la entrega, fuera del aislamiento
    JudgeAnswers,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

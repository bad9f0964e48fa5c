"""Configuración de nbgrader para los ejercicios de la Lección 6 (ver «Para instructores» en el README).

La carpeta del curso (release/, submitted/, autograded/, feedback/, gradebook.db) es aquella donde
se corre nbgrader, fuera del repositorio. Su propio ``nbgrader_config.py`` carga este con una línea,
``load_subconfig("<repo>/solutions/grading/nbgrader_config.py")``, que escribe ``release.course_config``.
"""

import os

c = get_config()  # noqa: F821 (lo inyecta traitlets al cargar el archivo)

# Las versiones de instructor viven en el repositorio, no en la carpeta del curso.
c.CourseDirectory.source_directory = os.path.join(os.path.dirname(os.path.abspath(__file__)), "source")
# Lo que los notebooks crean al ejecutarse no se reparte ni pisa entregas.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "_trabajo"]

# Lo que ve cada estudiante en lugar de la solución, en español.
c.ClearSolutions.code_stub = {"python": "# TU CÓDIGO AQUÍ\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "ESCRIBE AQUÍ TU RESPUESTA"

# Una celda que no termina (un bucle infinito) se interrumpe y cuenta como error; la calificación de
# la clase sigue. Cada celda de estos ejercicios tarda alrededor de un segundo.
c.Execute.timeout = 30
# Una celda de prueba borrada vuelve desde la base de datos y se ejecuta igual.
c.OverwriteCells.add_missing_cells = True

"""Genera las versiones de estudiante de los ejercicios y las deja, ejecutadas, en notebooks/.

    python solutions/grading/release.py

1. ``nbgrader generate_assignment leccion_6`` en una carpeta de curso temporal, con la configuración
   de esta carpeta (las fuentes son ``source/leccion_6/*.ipynb``);
2. copia cada notebook generado a ``notebooks/``;
3. lo ejecuta desde ``notebooks/``, como lo hace nbval, y guarda las salidas reales.

Correrlo después de cada cambio en una fuente: una prueba compara lo generado con lo guardado.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import nbformat

# Se corre como script desde la raíz: maintainer/ no está instalado, así que se agrega el repositorio.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from maintainer.notebook_run import execute, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "nbgrader_config.py")
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
NOTEBOOKS = os.path.join(REPO_ROOT, "notebooks")
ASSIGNMENT = "leccion_6"
EXERCISES = ("ejercicio_nivel_1", "ejercicio_nivel_2")


def course_config(course_dir):
    """Deja en ``course_dir`` el ``nbgrader_config.py`` de una línea que carga el de esta carpeta."""
    with open(os.path.join(course_dir, "nbgrader_config.py"), "w", encoding="utf-8") as f:
        f.write(f"load_subconfig({CONFIG!r})\n")


def nbgrader(course_dir, *args, check=True):
    """``nbgrader <args>`` dentro de la carpeta del curso, como lo correría quien dicta el curso."""
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course_dir,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=check,
    )


def generate(course_dir):
    """Corre generate_assignment en ``course_dir`` y devuelve {nombre: ruta del notebook generado}."""
    course_config(course_dir)
    nbgrader(course_dir, "generate_assignment", ASSIGNMENT, "--force")
    release = os.path.join(course_dir, "release", ASSIGNMENT)
    return {name: os.path.join(release, f"{name}.ipynb") for name in EXERCISES}


def execute_in_notebooks(path):
    """Ejecuta el notebook desde notebooks/, como nbval, y guarda sus salidas reales. Las celdas sin
    responder lanzan NotImplementedError: van marcadas raises-exception; cualquier otro error falla."""
    write(execute(nbformat.read(path, as_version=4), NOTEBOOKS), path)


def main():
    with tempfile.TemporaryDirectory() as course_dir:
        for name, generated in generate(course_dir).items():
            target = os.path.join(NOTEBOOKS, f"{name}.ipynb")
            shutil.copyfile(generated, target)
            execute_in_notebooks(target)
            print(f"notebooks/{name}.ipynb")


if __name__ == "__main__":
    main()

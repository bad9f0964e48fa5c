"""La edición para estudiantes: una copia del curso sin nada de quien califica.

    python -m solutions.grading.edicion_estudiantes DESTINO

Copia de este repositorio (lo que hay y git no ignora) los notebooks, el arnés (``harness/``), el
agente de la lección y el de referencia (``solutions/agent_leccion.py``, ``solutions/agent.py``), el README, la
documentación del agente, ``pyproject.toml`` (y lo que instala como ``data-files``), ``environment.yml``
y lo que las pruebas de los notebooks necesitan (``tests/nbval_sanitize.cfg``: el comando 2 del README
compara cada notebook con nbval). Deja afuera ``solutions/grading/`` (fuentes de nbgrader con respuestas modelo,
rúbricas y pruebas ocultas), la documentación de instructores y de mantenimiento, ``maintainer/``,
``benchmarks/`` y las pruebas del repositorio (usan esas carpetas). Del README quita la sección «Para
instructores» y las filas de esas carpetas.

Antes de terminar revisa cada archivo copiado: si alguno tiene ``BEGIN SOLUTION``, ``BEGIN HIDDEN
TESTS``, la marca de las soluciones comentadas o el texto de una respuesta modelo, borra la copia y sale con código 1 nombrándolo. ``DESTINO``
no puede existir (o tiene que estar vacío). Se instala y se abre con el comando 1 de su README.
"""

import argparse
import os
import re
import shutil
import sys

import nbformat

from harness.runs.launcher import launch
from solutions.grading import paths

# Lo que va, por prefijo de la ruta relativa a la raíz.
INCLUDED = (
    "notebooks/",
    "harness/",
    "solutions/__init__.py",
    "solutions/agent_leccion.py",
    "solutions/agent.py",
    "docs/agente.md",
    "tests/nbval_sanitize.cfg",
    "jupyter-config/",
    "README.md",
    "pyproject.toml",
    "environment.yml",
    ".gitignore",
    ".gitattributes",
    "LICENSE",
)
# Las marcas de nbgrader, y la de las soluciones comentadas (sus salidas son las respuestas medidas).
MARKERS = ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "NO SE REPARTE · soluciones comentadas")
# Las secciones del README que son para otros y las filas de la tabla de carpetas que no van.
DROPPED_SECTIONS = ("## Para instructores",)
DROPPED_ROWS = ("| `solutions/`", "| `maintainer/`")
STUDENT_ROW = (
    "| `solutions/` | estudiantes | `agent_leccion.py`, el agente de la lección, y `agent.py`, el de referencia "
    "(generados desde los notebooks), para correrlos en la terminal |"
)


class EditionError(Exception):
    """Lo que impide escribir la edición, en una línea en español."""


def tracked_files(root=paths.ROOT):
    """Las rutas relativas de lo que hay en ``root`` y git no ignora (sin git: todo, salvo lo oculto y
    las cachés)."""
    done = launch(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root, timeout=None
    )
    if done.returncode == 0:
        found = [p for p in done.stdout.split("\0") if p]
    else:  # sin git (127) o fuera de un repositorio
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "_trabajo")]
            found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(p for p in found if os.path.isfile(os.path.join(root, p)))


def chosen(files):
    return [
        p for p in files if any(p == inc or (inc.endswith("/") and p.startswith(inc)) for inc in INCLUDED)
    ]


def student_readme(text):
    """El README sin las secciones ni las filas que no son para estudiantes."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            skipping = line.strip() in DROPPED_SECTIONS
        if skipping:
            continue
        if line.startswith(DROPPED_ROWS):
            if line.startswith(DROPPED_ROWS[0]):
                out.append(STUDENT_ROW + "\n")
            continue
        out.append(line)
    return "".join(out)


def _flat(text):
    return re.sub(r"\s+", " ", text).strip()


def model_answers(source=paths.SOURCE):
    """El texto de cada respuesta modelo de las fuentes de nbgrader (lo que va entre las marcas de
    solución), aplanado; solo los de más de 40 caracteres (uno corto podría estar en cualquier parte)."""
    answers = []
    for folder, _, files in os.walk(source):
        for name in sorted(f for f in files if f.endswith(".ipynb")):
            for cell in nbformat.read(os.path.join(folder, name), as_version=4).cells:
                for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.DOTALL):
                    if len(_flat(block)) > 40:
                        answers.append(_flat(block))
    return answers


def readable_text(path):
    """El texto de un archivo (de un notebook, también el de sus celdas); None si no es texto."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        return None
    if path.endswith(".ipynb"):
        try:
            nb = nbformat.reads(text, as_version=4)
        except Exception:  # noqa: BLE001 (un notebook ilegible se revisa como texto)
            return text
        text += "\n".join(c.source for c in nb.cells)
    return text


def leaks(dest, answers=None):
    """[(ruta relativa, qué tiene)] de los archivos de ``dest`` con marcas o respuestas modelo."""
    answers = model_answers() if answers is None else answers
    found = []
    for folder, _, files in os.walk(dest):
        for name in sorted(files):
            path = os.path.join(folder, name)
            text = readable_text(path)
            if text is None:
                continue
            flat = _flat(text)
            what = [m for m in MARKERS if m in text]
            if any(answer in flat for answer in answers):
                what.append("una respuesta modelo")
            if what:
                found.append((os.path.relpath(path, dest), ", ".join(what)))
    return found


def write_edition(dest, progress=None):
    """Escribe la edición en ``dest``; devuelve cuántos archivos copió."""
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise EditionError(f"{dest} ya existe y no está vacío: elige una carpeta nueva")
    files = chosen(tracked_files())
    try:
        for relative in files:
            target = os.path.join(dest, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if relative == "README.md":
                with open(os.path.join(paths.ROOT, relative), encoding="utf-8") as f:
                    readme = student_readme(f.read())
                with open(target, "w", encoding="utf-8") as f:
                    f.write(readme)
            else:
                shutil.copy2(os.path.join(paths.ROOT, relative), target)
        if progress:
            progress(f"{len(files)} archivos copiados; revisando que ninguno tenga respuestas")
        found = leaks(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    if found:
        shutil.rmtree(dest, ignore_errors=True)
        raise EditionError(
            "la edición tendría respuestas y no se escribió: "
            + "; ".join(f"{path} ({what})" for path, what in found)
        )
    return len(files)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("destino", help="una carpeta nueva (o vacía) para la copia de estudiantes")
    args = parser.parse_args(argv)
    dest = os.path.abspath(args.destino)
    try:
        count = write_edition(dest, progress=lambda text: print(text, file=sys.stderr, flush=True))
    except EditionError as err:
        print(err, file=sys.stderr)
        return 1
    print(
        f"edición para estudiantes en {args.destino} ({count} archivos): se instala y se abre con el "
        "comando 1 de su README"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

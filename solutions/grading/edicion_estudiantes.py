"""La edición para estudiantes: una copia del curso sin nada de quien califica.

    python -m solutions.grading.edicion_estudiantes DESTINO

Copia lo que este repositorio guardó en su último commit (``HEAD``, con ``git archive``), nunca la
carpeta de trabajo: una respuesta que quien dicta el curso escribió en su copia de un ejercicio, un
archivo sin commit o uno a medio editar no llegan a estudiantes. Si la carpeta de trabajo tiene algo
distinto de lo que la edición lleva, el comando nombra cada archivo que dejó afuera (y por qué). Sin
git, o en una copia sin ``.git``, no escribe nada y lo dice.

Del commit copia los notebooks, el arnés (``harness/``), el agente de la lección y el de referencia
(``solutions/agent_leccion.py``, ``solutions/agent.py``), el README, la documentación del agente,
``pyproject.toml`` (y lo que instala como ``data-files``), ``environment.yml`` y lo que las pruebas de
los notebooks necesitan (``tests/nbval_sanitize.cfg``: el comando 2 del README compara cada notebook
con nbval). Deja afuera ``solutions/grading/`` (fuentes de nbgrader con respuestas modelo, rúbricas y
pruebas ocultas), la documentación de instructores y de mantenimiento, ``maintainer/``,
``benchmarks/`` y las pruebas del repositorio (usan esas carpetas). Del README quita la sección «Para
instructores» y las filas de esas carpetas.

Antes de terminar revisa cada archivo copiado: si alguno tiene ``BEGIN SOLUTION``, ``BEGIN HIDDEN
TESTS``, la marca de las soluciones comentadas o el texto de una respuesta modelo, borra la copia y sale
con código 1 nombrándolo. ``DESTINO`` no puede existir (o tiene que estar vacío). Se instala y se abre
con el comando 1 de su README.
"""

import os
import re
import shutil
import sys
import tarfile
import tempfile

import nbformat

from harness.conformidad.spanish_args import command_parser
from harness.runs.launcher import launch
from harness.text import plural
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


# Los modos de git de un archivo común (sin ejecutar y ejecutable): ni enlaces ni submódulos.
REGULAR_MODES = ("100644", "100755")
# Lo que dice ``git diff --name-status`` de un archivo de la carpeta de trabajo, y lo que eso deja afuera.
CHANGES = {
    "M": "cambiado sin commit: va el del commit",
    "T": "cambiado sin commit: va el del commit",
    "D": "borrado sin commit: va el del commit",
    "A": "agregado sin commit: no va",
}
UNTRACKED = "fuera de git: no va"
SHORT = 10  # los caracteres de un id de commit que se muestran


def _git(root, *args):
    """``git args`` en ``root``, hasta que termina (su ``Outcome``)."""
    return launch(["git", *args], cwd=root, timeout=None)


def _said(done):
    """La última línea que dijo git (para un error), o ""."""
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return lines[-1] if lines else ""


def head_commit(root=paths.ROOT):
    """El id del último commit de ``root`` (todo sale de ese: un commit nuevo a mitad de camino no cambia
    nada). Sin git, fuera de un repositorio o sin commits, un
    ``EditionError`` que lo dice: la edición nunca sale de la carpeta de trabajo."""
    done = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if done.returncode == 0:
        return done.stdout.strip()
    why = (
        "la edición sale de lo que el repositorio guardó en su último commit, nunca de la carpeta de trabajo"
    )
    if done.returncode == 127:
        raise EditionError(f"no se encontró git: {why}; instala git y vuelve a correr el comando")
    inside = _git(root, "rev-parse", "--git-dir")
    if inside.returncode != 0:
        raise EditionError(
            f"{root} no es un repositorio de git (¿una copia sin .git?; git: {_said(inside)}): {why}. "
            "Corre el comando en un clon del curso (git clone)"
        )
    raise EditionError(
        f"{root} no tiene ningún commit: {why}. Guarda el curso en un commit y vuelve a correrlo"
    )


def committed_files(root=paths.ROOT, commit="HEAD"):
    """Las rutas relativas (a ``root``) de los archivos comunes de ``commit``."""
    done = _git(root, "ls-tree", "-r", "-z", commit)
    if done.returncode != 0:
        raise EditionError(f"git ls-tree falló: {_said(done)}")
    found = []
    for entry in filter(None, done.stdout.split("\0")):
        meta, path = entry.split("\t", 1)
        if meta.split()[0] in REGULAR_MODES:
            found.append(path)
    return sorted(found)


def left_out(root=paths.ROOT, commit="HEAD"):
    """[(ruta, por qué)] de lo que la carpeta de trabajo tiene distinto de ``commit``, entre lo que la
    edición llevaría: cambios sin commit (en el índice o no) y archivos que git no sigue ni ignora."""
    options = ("--relative", "--no-renames", "--no-ext-diff", "--no-color", "--name-status", "-z")
    diff = _git(root, "diff", *options, commit, "--")
    others = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    for done in (diff, others):
        if done.returncode != 0:
            raise EditionError(f"git no pudo comparar la carpeta de trabajo con el commit: {_said(done)}")
    words = diff.stdout.split("\0")[:-1]  # «estado\0ruta\0» por archivo
    pairs = zip(words[::2], words[1::2], strict=True)
    found = {path: CHANGES.get(status[:1], CHANGES["M"]) for status, path in pairs}
    found |= {path: UNTRACKED for path in others.stdout.split("\0") if path}
    return sorted((path, why) for path, why in found.items() if chosen([path]))


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


def extract(root, commit, files, dest):
    """Escribe en ``dest`` los ``files`` tal como están en ``commit`` (el README, sin lo que no es para
    estudiantes)."""
    wanted = set(files)
    with tempfile.TemporaryDirectory() as scratch:
        archive = os.path.join(scratch, "commit.tar")
        done = _git(root, "archive", "--format=tar", "-o", archive, commit)
        if done.returncode != 0:
            raise EditionError(f"git archive falló: {_said(done)}")
        with tarfile.open(archive) as tar:
            for member in tar:
                if not member.isfile() or member.name not in wanted:
                    continue
                wanted.discard(member.name)
                content = tar.extractfile(member).read()
                if member.name == "README.md":
                    content = student_readme(content.decode("utf-8")).encode("utf-8")
                target = os.path.join(dest, member.name)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as f:
                    f.write(content)
                os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)
    if wanted:  # p. ej. un «export-ignore» de .gitattributes: la edición no sale incompleta sin decirlo
        raise EditionError("git archive no trajo: " + ", ".join(sorted(wanted)))


def write_edition(dest, progress=None, root=paths.ROOT):
    """Escribe en ``dest`` la edición del último commit de ``root``; devuelve (cuántos archivos, el id
    del commit, [(ruta, por qué)] de lo que la carpeta de trabajo tiene distinto y quedó afuera)."""
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise EditionError(f"{dest} ya existe y no está vacío: elige una carpeta nueva")
    commit = head_commit(root)
    files = chosen(committed_files(root, commit))
    differs = left_out(root, commit)
    try:
        extract(root, commit, files, dest)
        if progress:
            copied = f"{len(files)} archivos del commit {commit[:SHORT]} copiados"
            progress(f"{copied}; revisando que ninguno tenga respuestas")
        found = leaks(dest, model_answers(os.path.join(root, os.path.relpath(paths.SOURCE, paths.ROOT))))
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    if found:
        shutil.rmtree(dest, ignore_errors=True)
        raise EditionError(
            "la edición tendría respuestas y no se escribió: "
            + "; ".join(f"{path} ({what})" for path, what in found)
        )
    return len(files), commit, differs


def main(argv=None):
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("destino", help="una carpeta nueva (o vacía) para la copia de estudiantes")
    args = parser.parse_args(argv)
    dest = os.path.abspath(args.destino)
    try:
        count, commit, differs = write_edition(
            dest, progress=lambda text: print(text, file=sys.stderr, flush=True)
        )
    except EditionError as err:
        print(err, file=sys.stderr)
        return 1
    if differs:
        print(
            f"la carpeta de trabajo no es el commit {commit[:SHORT]}: la edición lleva lo del commit y "
            f"dejó afuera lo distinto en {plural(len(differs), 'archivo', 'archivos')} (para que vaya, "
            "guárdalo en un commit y vuelve a correr el comando):",
            file=sys.stderr,
        )
        for path, why in differs:
            print(f"  {path}: {why}", file=sys.stderr)
    print(
        f"edición para estudiantes en {args.destino} ({count} archivos, del commit {commit[:SHORT]}): "
        "se instala y se abre con el comando 1 de su README"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

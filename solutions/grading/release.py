"""Genera las versiones de estudiante de los ejercicios y las deja, ejecutadas, en notebooks/.

    python -m solutions.grading.release                 # regenera y guarda los dos ejercicios
    python -m solutions.grading.release --sin-escribir  # dice qué cambiaría, sin guardar nada
    python -m solutions.grading.release --check         # ¿notebooks/ es lo que generan las fuentes?

Desde la raíz del repositorio:

1. ``nbgrader generate_assignment leccion_6`` en una carpeta de curso temporal, con la configuración
   de esta carpeta (las fuentes son ``source/leccion_6/*.ipynb``);
2. ejecuta cada notebook generado desde ``notebooks/``, como lo hace nbval;
3. lo guarda en ``notebooks/`` con sus salidas reales.

Correrlo después de cada cambio en una fuente: una prueba compara lo generado con lo guardado.
``--check`` compara solo lo que decide nbgrader (celdas y metadatos), sin ejecutar nada.
"""

import os
import sys
import tempfile

import nbformat

from harness.conformidad.spanish_args import command_parser
from harness.runs.launcher import launch
from solutions.grading import paths
from solutions.grading.notebook_run import execute, write

NOTEBOOKS = paths.NOTEBOOKS
ASSIGNMENT = "leccion_6"
EXERCISES = ("ejercicio_nivel_1", "ejercicio_nivel_2")


# El ``nbgrader_config.py`` de una carpeta de curso: sin rutas de esta máquina, así la carpeta sigue
# sirviendo si el repositorio (o ella misma) se mueve. Encuentra la configuración del repositorio por
# el paquete ``solutions``, que nbgrader ya necesita importar (``importable_env``).
COURSE_CONFIG = f"""\
# La configuración de la Lección 6 está en el repositorio, y nbgrader importa su código de
# calificación (el paquete solutions): a mano, nbgrader se corre con la raíz del repositorio en
# PYTHONPATH, por ejemplo: PYTHONPATH=~/curso-puntos-de-control nbgrader autograde {ASSIGNMENT}
# (este archivo no guarda ninguna ruta: la carpeta del curso y el repositorio se pueden mover).
try:
    from solutions.grading.paths import NBGRADER_CONFIG
except ModuleNotFoundError:
    raise SystemExit(
        "nbgrader no encuentra el código de calificación de la Lección 6 (el paquete solutions): "
        "córrelo con la raíz del repositorio en PYTHONPATH, por ejemplo: "
        "PYTHONPATH=~/curso-puntos-de-control nbgrader autograde {ASSIGNMENT}"
    ) from None
load_subconfig(NBGRADER_CONFIG)  # noqa: F821 (lo inyecta traitlets al cargar el archivo)
"""


def course_config(course_dir):
    """Deja en ``course_dir`` el ``nbgrader_config.py`` que carga el de esta carpeta, sin rutas.
    Devuelve True si había otro distinto (por ejemplo, uno viejo con la ruta de un repositorio que
    ya no está ahí) y se reemplazó; False si ya estaba así o no había ninguno."""
    path = os.path.join(course_dir, "nbgrader_config.py")
    try:
        with open(path, encoding="utf-8") as f:
            before = f.read()
    except FileNotFoundError:
        before = None
    if before == COURSE_CONFIG:
        return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(COURSE_CONFIG)
    return before is not None


def importable_env(env=None):
    """``env`` (por omisión, el de este proceso) con el repositorio al frente de PYTHONPATH: así un
    proceso nuevo que corre en otra carpeta (la del curso) importa ``solutions``. Y con la carpeta de
    este intérprete al frente de PATH: nbgrader llama a sus programas por su nombre (``alembic`` en
    ``nbgrader db upgrade``; al crear una base ya no, ``alembic_head``), y un entorno virtual sin
    activar no los tiene en PATH."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [paths.ROOT, env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join(filter(None, [os.path.dirname(sys.executable), env.get("PATH")]))
    return env


# ``python -m nbgrader`` sin la gramática de rfc3987_syntax (ver ``solutions/grading/__init__.py``).
NBGRADER_MAIN = (
    "import sys, runpy; sys.modules.setdefault('rfc3987_syntax', None); "
    "runpy.run_module('nbgrader', run_name='__main__', alter_sys=True)"
)


class NbgraderError(RuntimeError):
    """Un paso de nbgrader que falló, dicho en una línea: cuál y su último mensaje."""


def nbgrader(course_dir, *args, check=True):
    """``nbgrader <args>`` dentro de la carpeta del curso, como lo correría quien dicta el curso, hasta
    que termina (su ``Outcome``: código, stdout, stderr). Con ``check``, una falla es un
    ``NbgraderError`` de una línea (no una traza)."""
    done = launch(
        [sys.executable, "-c", NBGRADER_MAIN, *args], cwd=course_dir, env=importable_env(), timeout=None
    )
    if check and done.returncode != 0:
        said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        raise NbgraderError(
            f"nbgrader {args[0]} falló (código {done.returncode}): {said[-1] if said else 'sin mensaje'}"
        )
    return done


def generate(course_dir):
    """Corre generate_assignment en ``course_dir`` y devuelve {nombre: ruta del notebook generado}."""
    course_config(course_dir)
    nbgrader(course_dir, "generate_assignment", ASSIGNMENT, "--force")
    release = os.path.join(course_dir, "release", ASSIGNMENT)
    return {name: os.path.join(release, f"{name}.ipynb") for name in EXERCISES}


def stored(name):
    """La ruta del ejercicio ``name`` repartido, en notebooks/."""
    return os.path.join(NOTEBOOKS, f"{name}.ipynb")


def comparable(nb):
    """Lo que generate_assignment decide: celdas (tipo, id, fuente, metadatos) y metadatos del notebook.
    Las salidas y los contadores los pone la ejecución, y language_info el kernel que la hizo."""
    meta = {k: v for k, v in nb.metadata.items() if k != "language_info"}
    return meta, [(c.cell_type, c.get("id"), c.source, c.metadata) for c in nb.cells]


def differences():
    """Los ejercicios de notebooks/ que no son lo que nbgrader genera hoy de sus fuentes; [] si todos."""
    with tempfile.TemporaryDirectory() as course_dir:
        generated = generate(course_dir)
        return [
            name
            for name, path in generated.items()
            if comparable(nbformat.read(path, 4)) != comparable(nbformat.read(stored(name), 4))
        ]


def regenerate(dry_run=False, progress=None):
    """Genera, ejecuta desde notebooks/ y guarda cada ejercicio (con ``dry_run``, no guarda); devuelve
    {nombre: si el archivo cambia}. Las celdas sin responder lanzan NotImplementedError: van marcadas
    raises-exception; cualquier otro error falla. ``progress(nombre, cambia)`` tras cada uno."""
    changed = {}
    with tempfile.TemporaryDirectory() as course_dir:
        for name, generated in generate(course_dir).items():
            notebook = execute(nbformat.read(generated, as_version=4), NOTEBOOKS)
            changed[name] = write(notebook, stored(name), dry_run=dry_run)
            if progress:
                progress(name, changed[name])
    return changed


def main(argv=None):
    parser = command_parser(__spec__, __doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--sin-escribir", action="store_true", help="ejecutar y decir qué cambiaría, sin guardar"
    )
    mode.add_argument("--check", action="store_true", help="solo comparar notebooks/ con las fuentes")
    args = parser.parse_args(argv)
    if args.check:
        stale = differences()
        for name in stale:
            print(
                f"notebooks/{name}.ipynb no es lo que generan sus fuentes: "
                "corre «python -m solutions.grading.release»",
                file=sys.stderr,
            )
        if not stale:
            print("los ejercicios de notebooks/ son lo que generan sus fuentes")
        return 1 if stale else 0

    def show(name, changed):
        verb = ("cambiaría" if args.sin_escribir else "cambió") if changed else "sin cambios"
        print(f"notebooks/{name}.ipynb: {verb}", flush=True)

    regenerate(dry_run=args.sin_escribir, progress=show)
    return 0


if __name__ == "__main__":
    sys.exit(main())

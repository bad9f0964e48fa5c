"""Empaquetado y estilo: lo que instala un estudiante (la rueda solo trae ``harness``, y funciona
fuera del repositorio), las dependencias de cada extra, environment.yml en sincronía, ruff limpio."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile

import pytest
import yaml
from seed_text import transcript

from maintainer.paths import REFERENCE_AGENT
from maintainer.paths import ROOT as REPO_ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def pyproject():
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def conda_pip_requirements():
    with open(os.path.join(REPO_ROOT, "environment.yml"), encoding="utf-8") as f:
        env = yaml.safe_load(f)
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return sorted(r for r in pip if not r.startswith("-e"))


def names(requirements):
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    """environment.yml es el entorno completo: la base, más los extras «instructor» y «test»."""
    project = pyproject()
    extras = project["optional-dependencies"]
    assert {"instructor", "test"} <= set(extras)
    declared = project["dependencies"] + [
        r for extra in extras.values() for r in extra if "python_version" not in r
    ]
    assert conda_pip_requirements() == sorted(declared)


def test_students_do_not_get_nbgrader_instructors_do():
    """La instalación base es la del estudiante: nbgrader (su extensión de servidor y sus avisos en
    JupyterLab) viene solo con el extra «instructor»."""
    project = pyproject()
    assert "nbgrader" not in names(project["dependencies"])
    assert "nbgrader" in names(project["optional-dependencies"]["instructor"])
    with open(os.path.join(REPO_ROOT, "environment.yml"), encoding="utf-8") as f:
        assert "nbgrader" in f.read()  # quien usa conda tiene el entorno completo


def test_every_dependency_has_a_lower_bound():
    project = pyproject()
    for requirement in project["dependencies"] + project["optional-dependencies"]["test"]:
        assert re.search(r">=\s*\d", requirement), requirement


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_is_clean(command):
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff no está instalado (viene con el extra «test»)")
    done = subprocess.run([ruff, *command, "."], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# —— La rueda: lo que instala un estudiante ——

# Lo que no es del estudiante: del repositorio, o del instructor y de quien mantiene el curso.
NOT_SHIPPED_TOP = {"solutions", "tests", "maintainer", "benchmarks", "notebooks", "docs"}
# Ni una copia de sus módulos: los de maintainer/ y solutions/grading/, tomados del repositorio (por
# contenido: harness puede tener un módulo con el mismo nombre, como harness/conformidad/report.py).
NOT_SHIPPED_PACKAGES = ("maintainer", "solutions/grading")


def not_shipped_modules():
    """{ruta en el repositorio: contenido} de cada módulo de ``NOT_SHIPPED_PACKAGES``, sin ``__init__`` ni
    ``__main__`` (que pueden coincidir con los de harness sin ser copias)."""
    found = {}
    for package in NOT_SHIPPED_PACKAGES:
        for folder, dirs, names in os.walk(os.path.join(REPO_ROOT, package)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in names:
                if name.endswith(".py") and not name.startswith("__"):
                    path = os.path.join(folder, name)
                    with open(path, "rb") as f:
                        found[os.path.relpath(path, REPO_ROOT).replace(os.sep, "/")] = f.read()
    return found


NOT_SHIPPED_MODULES = not_shipped_modules()
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache",
    ".hypothesis", "test-output", "_trabajo*",
)  # fmt: skip


def can_build_wheels():
    """setuptools arma ruedas solo (desde 70.1) o con el paquete ``wheel``."""
    import setuptools

    major, minor = (int(n) for n in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """La rueda del proyecto, armada sin red ni aislamiento desde una copia del árbol (así la
    construcción no deja build/ ni *.egg-info en el repositorio)."""
    assert can_build_wheels(), (
        "para armar la rueda sin red hace falta el paquete «wheel» o setuptools>=70.1 (extra «test»)"
    )
    root = tmp_path_factory.mktemp("rueda")
    source = root / "fuente"
    shutil.copytree(REPO_ROOT, source, ignore=IGNORED)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["-w", str(root / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = (root / "dist").glob("*.whl")
    return built


def test_the_not_shipped_modules_exist():
    """La guarda de la rueda ve los módulos de quien mantiene el curso y de quien califica: si se mudan,
    esta prueba lo dice en vez de dejar una guarda que no guarda nada."""
    named = {"maintainer/torture.py", "solutions/grading/grade_class.py", "solutions/grading/sandbox.py"}
    assert sorted(named - set(NOT_SHIPPED_MODULES)) == []
    for path in NOT_SHIPPED_MODULES:
        assert os.path.isfile(os.path.join(REPO_ROOT, path)), path


def test_the_wheel_ships_only_the_harness_package(wheel):
    with zipfile.ZipFile(wheel) as z:
        files = [n for n in z.namelist() if ".dist-info/" not in n]
        shipped = {z.read(n) for n in files if n.endswith(".py")}
    assert files, "la rueda está vacía"
    assert [n for n in files if not n.startswith("harness/")] == []
    assert [n for n in files if n.split("/")[0] in NOT_SHIPPED_TOP] == []
    assert sorted(path for path, text in NOT_SHIPPED_MODULES.items() if text in shipped) == []
    # Y trae todo harness: cada módulo de cada subpaquete, y sus datos (notas, estáticos del widget).
    package = os.path.join(REPO_ROOT, "harness")
    expected = {
        os.path.relpath(os.path.join(d, f), REPO_ROOT).replace(os.sep, "/")
        for d, _, fs in os.walk(package)
        if "__pycache__" not in d.split(os.sep)
        for f in fs
        if not f.endswith((".pyc", ".pyo"))
    }
    assert "harness/crash_lab/__init__.py" in expected and "harness/data/sales-notes.txt" in expected
    assert sorted(expected - set(files)) == []


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """Un entorno virtual nuevo con la rueda instalada (no editable); las dependencias, del entorno
    actual (--system-site-packages). Devuelve (python del entorno, carpeta del entorno)."""
    env_dir = tmp_path_factory.mktemp("venv") / "estudiante"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # Las dependencias del entorno de las pruebas (no del Python base, que puede no tenerlas): una ruta
    # en un .pth no procesa los .pth de esa carpeta, así que el harness editable del repositorio no entra.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(site, "dependencias.pth"), "w", encoding="utf-8") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return python, env_dir


def outside(python, args, cwd, **env):
    """``python -I`` desde ``cwd``, fuera del repositorio: sin PYTHONPATH ni la carpeta actual en
    sys.path, como un estudiante que instaló el paquete."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "CRASH_AFTER"}
    return subprocess.run(
        [str(python), "-I", "-X", "utf8", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


IMPORT_ALL = """
import importlib, os, pkgutil, sys
import harness
print(os.path.realpath(harness.__file__))
names = [m.name for m in pkgutil.walk_packages(harness.__path__, "harness.")]
for name in names:
    module = importlib.import_module(name)
    print(name, os.path.realpath(module.__file__))
"""


def test_the_installed_package_imports_from_the_venv_not_the_repo(installed, tmp_path):
    python, env_dir = installed
    done = outside(python, ["-c", IMPORT_ALL], tmp_path)
    assert done.returncode == 0, done.stderr
    first, *modules = done.stdout.splitlines()
    print("harness.__file__ =", first)
    venv_dir, repo = os.path.realpath(env_dir), os.path.realpath(REPO_ROOT)
    # El repositorio está instalado editable en el entorno de afuera, que este entorno también ve: la
    # rueda instalada tiene que ganarle.
    assert first.startswith(venv_dir + os.sep) and not first.startswith(repo + os.sep), first
    names = {line.split()[0] for line in modules}
    assert {
        "harness.runs.launcher",
        "harness.crash_lab",
        "harness.crash_lab.widget",
        "harness.notebook.export",
    } <= names
    assert all(line.split()[1].startswith(venv_dir + os.sep) for line in modules), modules


def test_the_reference_agent_runs_the_lesson_on_the_installed_package(installed, tmp_path):
    python, _ = installed
    workdir = tmp_path / "trabajo"
    workdir.mkdir()
    crash = outside(
        python, [REFERENCE_AGENT], tmp_path, AGENT_WORKDIR=str(workdir), CRASH_AFTER="after-effect-write:3"
    )
    assert crash.stderr == "" and crash.returncode == 137
    crash_text = "".join(crash.stdout.splitlines()) + f"EXIT={crash.returncode}"
    assert crash_text == transcript("CRASH_AFTER=after-effect-write:3 node agent.js")
    resume = outside(python, [REFERENCE_AGENT, "--resume"], tmp_path, AGENT_WORKDIR=str(workdir))
    assert resume.returncode == 0 and resume.stderr == "", resume.stderr
    assert "".join(resume.stdout.splitlines()) == transcript("node agent.js --resume")


# —— Quién importa a quién, sin atajos en sys.path ——

# Lo que cada carpeta no puede importar: quien mantiene el curso usa lo del instructor, que usa el arnés,
# nunca al revés (benchmarks/ y tests/ pueden importar todo).
FORBIDDEN_IMPORTS = {
    "harness": {"solutions", "maintainer", "benchmarks", "tests"},
    "solutions": {"maintainer", "benchmarks", "tests"},
    "maintainer": {"benchmarks", "tests"},
}
NO_PATH_EDITS = ("harness", "solutions", "maintainer", "benchmarks")
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def python_files(folder):
    for root, dirs, files in os.walk(os.path.join(REPO_ROOT, folder)):
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith((".", "_trabajo"))]
        yield from sorted(os.path.join(root, f) for f in files if f.endswith(".py"))


def imported_names(path):
    """Lo que importa ``path``: cada ``import`` (también dentro de funciones: los perezosos), cada
    ``import_module``/``__import__`` con un nombre fijo y cada texto que es un nombre de módulo con
    puntos (``"solutions.grading.sandbox.SandboxKernelManager"``, que traitlets importa)."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
            if DOTTED.fullmatch(node.value):
                yield node.value
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = getattr(node.func, "attr", getattr(node.func, "id", None))
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                yield node.args[0].value


@pytest.mark.parametrize("folder", sorted(FORBIDDEN_IMPORTS))
def test_no_folder_imports_what_it_must_not(folder):
    forbidden = FORBIDDEN_IMPORTS[folder]
    found = [
        f"{os.path.relpath(path, REPO_ROOT)}: {name}"
        for path in python_files(folder)
        for name in imported_names(path)
        if name.split(".")[0] in forbidden
    ]
    assert found == [], f"{folder}/ no puede importar {sorted(forbidden)}"


def test_solutions_notebooks_do_not_import_the_maintainer_tools():
    import glob

    import nbformat

    pattern = re.compile(r"^\s*(from|import)\s+(maintainer|benchmarks|tests)\b", re.MULTILINE)
    found = []
    for path in glob.glob(os.path.join(REPO_ROOT, "solutions", "**", "*.ipynb"), recursive=True):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and pattern.search(cell.source):
                found.append(os.path.relpath(path, REPO_ROOT))
    assert found == []


def test_nothing_edits_sys_path_to_find_the_repository():
    """Las herramientas se corren como módulos (``python -m``) desde la raíz: ninguna agrega carpetas a
    sys.path, tampoco dentro de un texto que otro intérprete ejecuta (``python -c``)."""
    edit = re.compile(r"sys\.path\.(insert|append|extend)\(|site\.addsitedir\(")
    found = []
    for path in (path for folder in NO_PATH_EDITS for path in python_files(folder)):
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        found += [
            f"{os.path.relpath(path, REPO_ROOT)}:{n}" for n, line in enumerate(lines, 1) if edit.search(line)
        ]
    assert found == []


RUN_AS_MODULES = """
import contextlib, importlib, io, json, runpy, sys
codes, (commands, imports) = {}, sys.argv[1:3]
for name in commands.split(","):
    sys.argv = [name, "--help"]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            runpy.run_module(name, run_name="__main__", alter_sys=True)
            codes[name] = "sin --help"
        except SystemExit as done:
            helped = "usage:" in out.getvalue() or "uso:" in out.getvalue()  # argparse o el español
            codes[name] = done.code if helped else f"salió sin ayuda: {done.code}"
for name in imports.split(","):
    importlib.import_module(name)
    codes[name] = 0
print(json.dumps(codes))
"""


def module_names(folder):
    return sorted(
        os.path.splitext(os.path.relpath(path, REPO_ROOT))[0].replace(os.sep, ".")
        for path in python_files(folder)
        if os.path.dirname(path) == os.path.join(REPO_ROOT, folder) and not path.endswith("__init__.py")
    )


def test_the_tools_run_as_modules_from_the_repository_root():
    """``python -m benchmarks.<nombre> --help`` y ``python -m maintainer --help`` salen con 0 desde la
    raíz, sin PYTHONPATH; cada módulo de maintainer/ se importa sin correr nada."""
    import json

    # Antes que nada los que otros importan: runpy avisa si ya se importó el que corre como __main__.
    commands = ["solutions.grading.release", "solutions.grading.grade_class", "maintainer"]
    commands += module_names("benchmarks")
    imports = [name for name in module_names("maintainer") if name != "maintainer.__main__"]
    assert "benchmarks.notebook_run_all" in commands and "maintainer.prepare" in imports
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", RUN_AS_MODULES, ",".join(commands), ",".join(imports)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == dict.fromkeys(commands + imports, 0)

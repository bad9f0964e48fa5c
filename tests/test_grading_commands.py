"""Los comandos de quien califica (y los de la suite y de quien mantiene el curso) en español de punta a
punta: los errores de argumentos y ``-h``, y la línea que dice cómo activar o instalar el curso cuando
se corren con otro python. Y la edición para estudiantes, que sale del último commit y nunca de la
carpeta de trabajo (probado en un clon temporal del repositorio, nunca en el de verdad)."""

import ast
import importlib
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from harness.conformidad.spanish_args import HELP_TEXT, missing_line
from maintainer.paths import ROOT
from solutions.grading import edicion_estudiantes
from solutions.grading.edicion_estudiantes import CHANGES, UNTRACKED, EditionError, write_edition

SYSTEM_PYTHON = "/usr/bin/python3"
# Lo que argparse dice en inglés: nada de esto puede llegar a quien corre un comando.
ENGLISH = ("usage:", "options:", "positional arguments", "show this help", "invalid", "argument ")
ENGLISH += ("required", "unrecognized", "expected", "choose from")


def grading_commands():
    """Los módulos de ``solutions/grading/`` que se corren con ``python -m`` (tienen su ``__main__``)."""
    found = []
    for path in sorted(pathlib.Path(ROOT, "solutions", "grading").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body):
            found.append(f"solutions.grading.{path.stem}")
    return found


COMMANDS = [*grading_commands(), "maintainer.__main__", "harness.conformidad.__main__"]


def test_the_commands_are_found():
    names = {name.rsplit(".", 1)[1] for name in grading_commands()}
    assert {"grade_class", "manual", "devolucion", "edicion_estudiantes", "release"} <= names


def _main(module, argv, capsys):
    """(código, stdout, stderr) de ``main(argv)`` del comando, en este proceso."""
    with pytest.raises(SystemExit) as done:
        importlib.import_module(module).main(argv)
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.mark.parametrize("module", COMMANDS)
def test_a_bad_argument_is_spanish(module, capsys):
    code, _, err = _main(module, ["--opcion-que-no-existe"], capsys)
    assert code == 2
    assert err.startswith("uso: python -m ") and ": error: " in err, err
    assert not [word for word in ENGLISH if word in err], err


@pytest.mark.parametrize("module", COMMANDS)
def test_the_help_is_spanish(module, capsys):
    code, out, _ = _main(module, ["-h"], capsys)
    assert code == 0
    assert out.startswith("uso: python -m ") and "opciones:" in out and HELP_TEXT in out, out
    assert not [word for word in ENGLISH[:4] if word in out], out


def test_a_number_that_is_not_a_number_says_so(capsys):
    code, _, err = _main("solutions.grading.grade_class", ["curso", "--procesos", "abc"], capsys)
    assert code == 2
    assert err.splitlines()[-1] == (
        "python -m solutions.grading.grade_class: error: argumento --procesos: «abc» no es un número entero"
    )
    _, _, err = _main("solutions.grading.manual", [], capsys)
    assert err.splitlines()[-1].endswith("error: falta el argumento carpeta")
    _, _, err = _main("maintainer.__main__", ["nada"], capsys)
    assert "«nada» no es una de las opciones: «prepare», «check»" in err


# —— Sin el entorno del curso ——


def _system_python_without_the_course():
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"no hay {SYSTEM_PYTHON}")
    probe = "import importlib.util as u; print(all(u.find_spec(m) for m in ('nbgrader', 'nbformat')))"
    has = subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True, text=True).stdout.strip()
    if has != "False":
        pytest.skip(f"{SYSTEM_PYTHON} tiene nbgrader y nbformat: no sirve para probar un python sin el curso")


@pytest.mark.parametrize("module", [*grading_commands(), "maintainer"])
def test_without_the_course_a_command_says_how_to_get_it_in_one_line(module):
    _system_python_without_the_course()
    done = subprocess.run(
        [SYSTEM_PYTHON, "-m", module, "-h"], cwd=ROOT, capture_output=True, text=True, encoding="utf-8"
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("falta el módulo "), done.stderr
    assert "activa su entorno" in lines[0] or "instala el curso" in lines[0], lines[0]


def test_a_module_missing_later_is_the_same_line(tmp_path):
    """Un ModuleNotFoundError que llega arriba después de arrancar (no solo nbgrader): la misma línea."""
    script = (
        "from harness.conformidad.spanish_args import explain_missing_modules\n"
        f"explain_missing_modules((), 'instructor', {str(tmp_path)!r})\n"
        "import modulo_que_no_existe\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        missing_line("modulo_que_no_existe", "instructor", str(tmp_path))
    ]


def test_the_line_says_activate_when_the_course_has_an_environment(tmp_path):
    install = missing_line("nbgrader", "instructor", str(tmp_path), python="/usr/bin/python3", prefix="/usr")
    assert 'python -m pip install -e ".[instructor]"' in install and "activa" not in install
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "activate").write_text("", encoding="utf-8")
    other = missing_line("nbgrader", "instructor", str(tmp_path), python="/usr/bin/python3", prefix="/usr")
    assert f"source {tmp_path}/.venv/bin/activate" in other and "/usr/bin/python3" in other
    inside = missing_line("nbgrader", "instructor", str(tmp_path), prefix=str(tmp_path / ".venv"))
    assert "pip install" in inside  # ya en el entorno: lo que falta es el extra


# —— La edición para estudiantes: del último commit ——

SOLVED = "MI SOLUCIÓN DEL NIVEL 2, escrita en la copia de quien dicta el curso"


def git(where, *args):
    return subprocess.run(["git", *args], cwd=where, capture_output=True, check=True).stdout


@pytest.fixture
def clone(tmp_path):
    if shutil.which("git") is None or not os.path.isdir(os.path.join(ROOT, ".git")):
        pytest.skip("sin git, o el repositorio no es un clon de git")
    where = tmp_path / "clon"
    git(tmp_path, "clone", "--quiet", "--local", ROOT, str(where))
    return where


def test_the_edition_holds_the_committed_files_and_names_what_it_left_out(clone, tmp_path):
    exercise = clone / "notebooks" / "ejercicio_nivel_2.ipynb"
    text = exercise.read_text(encoding="utf-8")
    exercise.write_text(
        text.replace('"source": [', f'"source": [\n    "# {SOLVED}\\n",', 1), encoding="utf-8"
    )
    with open(clone / "README.md", "a", encoding="utf-8") as f:
        f.write(f"\n{SOLVED}\n")
    (clone / "notebooks" / "en_el_indice.py").write_text(f"# {SOLVED}\n", encoding="utf-8")
    git(clone, "add", "README.md", "notebooks/en_el_indice.py")  # en el índice, sin commit
    (clone / "notebooks" / "respuestas.md").write_text(SOLVED, encoding="utf-8")
    (clone / "harness" / "nuevo.py").write_text(f"# {SOLVED}\n", encoding="utf-8")
    (clone / "environment.yml").unlink()
    (clone / "notebooks" / "_trabajo_prueba").mkdir()  # git la ignora: no se nombra
    (clone / "notebooks" / "_trabajo_prueba" / "x.txt").write_text(SOLVED, encoding="utf-8")
    (clone / "docs" / "instructores.md").write_text(SOLVED, encoding="utf-8")  # no va en la edición

    dest = tmp_path / "edicion"
    count, commit, differs = write_edition(str(dest), root=str(clone))

    committed = edicion_estudiantes.chosen(edicion_estudiantes.committed_files(str(clone)))
    shipped = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert shipped == committed and count == len(committed)
    assert commit == git(clone, "rev-parse", "HEAD").decode().strip()
    for relative in shipped:
        if relative != "README.md":
            assert (dest / relative).read_bytes() == git(clone, "show", f"HEAD:{relative}"), relative
    readme = edicion_estudiantes.student_readme(git(clone, "show", "HEAD:README.md").decode("utf-8"))
    assert (dest / "README.md").read_text(encoding="utf-8") == readme
    assert not [p for p in shipped if SOLVED in (dest / p).read_text(encoding="utf-8", errors="replace")]
    assert dict(differs) == {
        "notebooks/ejercicio_nivel_2.ipynb": CHANGES["M"],
        "README.md": CHANGES["M"],
        "notebooks/en_el_indice.py": CHANGES["A"],
        "notebooks/respuestas.md": UNTRACKED,
        "harness/nuevo.py": UNTRACKED,
        "environment.yml": CHANGES["D"],
    }


def test_a_clean_clone_leaves_nothing_out(clone, tmp_path):
    assert write_edition(str(tmp_path / "edicion"), root=str(clone))[2] == []


def test_without_a_commit_to_copy_nothing_is_written(tmp_path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("sin git")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no buscar un repositorio más arriba
    copy = tmp_path / "copia"
    (copy / "notebooks").mkdir(parents=True)
    (copy / "notebooks" / "ejercicio_nivel_1.ipynb").write_text("{}", encoding="utf-8")
    dest = tmp_path / "edicion"
    with pytest.raises(EditionError, match="no es un repositorio de git"):
        write_edition(str(dest), root=str(copy))
    git(copy, "init", "--quiet")
    with pytest.raises(EditionError, match="no tiene ningún commit"):
        write_edition(str(dest), root=str(copy))
    monkeypatch.setenv("PATH", str(tmp_path / "sin_programas"))
    with pytest.raises(EditionError, match="no se encontró git"):
        write_edition(str(dest), root=str(copy))
    assert not dest.exists()

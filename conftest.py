"""Las pruebas en paralelo (pytest-xdist, ``-n auto --dist loadfile`` en ``pyproject.toml``): cada archivo
de pruebas corre entero en un mismo proceso (sus fixtures de módulo, un servidor o una copia del
repositorio, se arman una vez), y todos los notebooks en uno solo: escriben en el mismo
``notebooks/_trabajo/`` (la lección y «De la lección a producción» arman allí dos ``agent.py`` distintos
con el mismo nombre). Las pruebas de navegador, las más largas, van en tres partes (JupyterLab, Notebook
7 y las demás), cada una con su servidor; las de ``tests/test_portability.py`` (ejecutar cada notebook,
instalar con los comandos del README), una por prueba: su copia del repositorio se arma en segundos. Las
unidades con más pruebas lentas salen primero, para que ninguna larga quede para el final. Está en la
raíz para que valga también con ``python -m pytest notebooks``."""

import os
import re
import shutil
import tempfile
from collections import Counter

import pytest

NOTEBOOKS = "notebooks"
# La revisión de nombres de la pasada de portabilidad va en la unidad de los notebooks, al final: lee las
# rutas que anotaron los kernels de nbval (fixture ``nbval_paths``) y ejecuta solo lo que nbval no corrió.
NAMES_CHECK = "tests/test_portability.py::test_no_path_the_notebooks_create_has_a_name_windows_refuses"
# Notebooks cuyos kernels no anotan: anotar una ruta es escribir, y este mide los bytes que escribe cada
# proceso (wchar); la revisión de nombres lo ejecuta aparte.
NOT_RECORDED = {"notebooks/mas_alla_motor_durable.ipynb"}
BY_APP = ("tests/test_browser.py", re.compile(r"\[(lab|notebook)\b"))
BY_TEST = {"tests/test_portability.py"}


def scope_of(nodeid):
    """La unidad que corre entera en un proceso."""
    path, _, rest = nodeid.partition("::")
    if path.endswith(".ipynb") or nodeid == NAMES_CHECK:
        return NOTEBOOKS
    if path in BY_TEST:
        return nodeid
    app = BY_APP[1].search(rest) if path == BY_APP[0] else None
    return f"{path}[{app.group(1)}]" if app else path


@pytest.hookimpl(trylast=True)  # después de tests/conftest.py, que marca slow las celdas de los notebooks
def pytest_collection_modifyitems(config, items):
    """En cada proceso de xdist (todos recogen lo mismo, en el mismo orden): primero las unidades con más
    pruebas lentas; dentro de cada una, el orden de siempre."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    slow = Counter(scope_of(i.nodeid) for i in items if i.get_closest_marker("slow"))
    order = {
        id(item): (-slow[scope_of(item.nodeid)], item.nodeid == NAMES_CHECK, n)
        for n, item in enumerate(items)
    }
    items.sort(key=lambda item: order[id(item)])


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None  # otro reparto pedido en la línea de comandos: el de xdist
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # el orden de la recolección (arriba), no la cuenta de pruebas

    class Together(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return scope_of(nodeid)

    return Together(config, log)


class NbvalPaths:
    """Lo que los kernels de nbval de este proceso dejan para la revisión de nombres: el archivo donde
    anotan cada ruta que crean (``COURSE_CREATED_PATHS``, maintainer/portability/sitecustomize.py), su
    carpeta temporal y qué notebooks corrieron enteros."""

    def __init__(self, items):
        self.folder = tempfile.mkdtemp(prefix="nbval-rutas-")
        self.log, self.tmp = os.path.join(self.folder, "rutas.txt"), os.path.join(self.folder, "tmp")
        os.mkdir(self.tmp)
        self.cells = Counter(
            notebook_of(i.nodeid) for i in items if notebook_of(i.nodeid) not in (None, *NOT_RECORDED)
        )
        self.ran_cells = Counter()

    def ran(self):
        """Los notebooks (rutas relativas) cuyas celdas corrieron todas en este proceso."""
        return {path for path, n in self.cells.items() if self.ran_cells[path] == n}


def notebook_of(nodeid):
    path = nodeid.partition("::")[0]
    return path if path.endswith(".ipynb") else None


_NBVAL = []  # el NbvalPaths de este proceso, si anota


def pytest_collection_finish(session):
    if os.environ.get("COURSE_PORTABILITY") and session.config.getoption("nbval", False):
        _NBVAL.append(NbvalPaths(session.items))


# tryfirst: antes de que nbval arranque el kernel del notebook, que hereda el entorno (y sus agentes).
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    notebook = notebook_of(item.nodeid)
    if _NBVAL and notebook in _NBVAL[0].cells:
        os.environ["COURSE_CREATED_PATHS"], os.environ["TMPDIR"] = _NBVAL[0].log, _NBVAL[0].tmp
    elif _NBVAL and notebook:
        os.environ.pop("COURSE_CREATED_PATHS", None)


def pytest_runtest_logreport(report):
    if _NBVAL and report.when == "call" and notebook_of(report.nodeid) in _NBVAL[0].cells:
        _NBVAL[0].ran_cells[notebook_of(report.nodeid)] += 1


def pytest_unconfigure(config):
    for paths in _NBVAL:
        shutil.rmtree(paths.folder, ignore_errors=True)


@pytest.fixture
def nbval_paths():
    """El ``NbvalPaths`` de este proceso en la pasada de portabilidad (None fuera de ella)."""
    return _NBVAL[0] if _NBVAL else None

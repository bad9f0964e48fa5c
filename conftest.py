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
from collections import Counter

import pytest

NOTEBOOKS = "notebooks"
BY_APP = ("tests/test_browser.py", re.compile(r"\[(lab|notebook)\b"))
BY_TEST = {"tests/test_portability.py"}


def scope_of(nodeid):
    """La unidad que corre entera en un proceso."""
    path, _, rest = nodeid.partition("::")
    if path.endswith(".ipynb"):
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
    order = {id(item): (-slow[scope_of(item.nodeid)], n) for n, item in enumerate(items)}
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

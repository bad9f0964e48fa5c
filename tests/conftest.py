"""Fixtures compartidas: un directorio de trabajo limpio y los agentes que se prueban.

Una prueba que pide ``agent`` corre sobre el agente de referencia (``solutions/agent.py``, id
``referencia``): un solo eje, porque lo que generan sus notebooks es ese mismo archivo (lo exige
``tests/test_agent_source.py``). ``pytest --agent RUTA`` prueba en cambio ese agent.py (id ``otro``). La
suite de conformidad (``tests/conformance/``) corre así cada una de sus pruebas; fuera de ella piden
``agent`` el laboratorio de caídas y las pruebas de la exportación. El agente de la lección
(``solutions/agent_leccion.py``) no tiene las defensas de producción: lo juzga el nivel de la lección de
``harness.conformidad``.

Los niveles (marcas en ``pyproject.toml``): ``slow`` marca lo que tarda (las celdas de los notebooks
también, aquí), y ``pytest -m "not slow"`` es el nivel rápido. ``needs_bwrap``, ``needs_strace``,
``needs_postgres`` y ``browser`` piden una herramienta de la máquina: sin ella la prueba se salta con un
solo motivo por marca, y en CI (que instala todo) falla. Al final, la cuenta de saltadas por motivo.
"""

import importlib.util
import os
import shutil
import time
from collections import Counter
from functools import cache

import pytest

from harness.beyond.preload import SOCKET_ENV, socket_path, start_server
from maintainer.paths import REFERENCE_AGENT

AGENTS = ("referencia",)
PRELOAD_START_S = 60  # solo una red de seguridad: se espera el socket, no un tiempo fijo


def pytest_addoption(parser):
    parser.addoption(
        "--agent",
        metavar="RUTA",
        default=None,
        help="prueba este agent.py (y solo este) en vez del de referencia",
    )


def agent_ids(config):
    """Los agentes de esta corrida: el de referencia, o solo el de ``--agent``."""
    return ("otro",) if config.getoption("--agent") else AGENTS


def pytest_generate_tests(metafunc):
    if "agent" in metafunc.fixturenames:
        ids = agent_ids(metafunc.config)
        metafunc.parametrize("agent", ids, ids=ids, indirect=True)


@pytest.fixture(scope="session")
def agent(request):
    """La ruta (str) del agente a probar; el parámetro lo pone ``pytest_generate_tests``."""
    if request.param == "referencia":
        return REFERENCE_AGENT
    path = os.path.abspath(request.config.getoption("--agent"))
    if not os.path.isfile(path):
        pytest.exit(f"--agent {path}: no existe ese archivo", returncode=4)
    return path


@pytest.fixture(scope="module")
def dbos_preload(tmp_path_factory):
    """El entorno que anuncia un servidor de ``harness.beyond.preload`` ya escuchando (su socket existe):
    los programas de DBOS que se lancen con él nacen de un fork que ya importó DBOS, como en el notebook."""
    folder = str(tmp_path_factory.mktemp("preload"))
    server, path = start_server(folder), socket_path(folder)
    deadline = time.monotonic() + PRELOAD_START_S
    while not os.path.exists(path):
        assert server.process.poll() is None and time.monotonic() < deadline, "el servidor no abrió su socket"
        time.sleep(0.02)  # mira otra vez: el socket es el evento que se espera
    yield {SOCKET_ENV: path}
    server.close(timeout=PRELOAD_START_S)
    assert server.process.returncode == 0


@pytest.fixture
def workdir(tmp_path):
    """Un directorio de trabajo vacío para el agente."""
    return tmp_path


@pytest.fixture(scope="session")
def released_course(tmp_path_factory):
    """``fresh(nombre)``: una carpeta de curso nueva con la tarea ya registrada, y {ejercicio: notebook
    repartido}. ``generate_assignment`` corre una vez por proceso de pruebas (carga nbgrader y arma
    ``gradebook.db``: segundos de procesador); cada clase de muestra parte de una copia de esa carpeta,
    como la que copia quien califica a mano."""
    from solutions.grading.release import ASSIGNMENT, EXERCISES, generate

    template = tmp_path_factory.mktemp("curso_generado")
    generate(template)

    def fresh(name):
        course_dir = tmp_path_factory.mktemp(name)
        shutil.copytree(template, course_dir, dirs_exist_ok=True)
        release = os.path.join(course_dir, "release", ASSIGNMENT)
        return course_dir, {n: os.path.join(release, f"{n}.ipynb") for n in EXERCISES}

    return fresh


# —— Niveles: lo que cada marca pide de la máquina, y la cuenta de lo que se saltó ——


def bwrap_works():
    from solutions.grading import sandbox

    return sandbox.available()  # lo prueba de verdad: puede estar instalado y no poder aislar


def postgres_installed():
    from harness.beyond import postgres

    try:
        postgres.binaries()
    except postgres.PostgresMissingError:
        return False
    return True


def chromium_and_playwright():
    from maintainer.jupyter_browser import CHROMIUM

    return os.path.exists(CHROMIUM) and importlib.util.find_spec("playwright") is not None


# marca: (¿está?, el motivo de la prueba que se salta sin ella)
TOOLS = {
    "needs_bwrap": (
        bwrap_works,
        "falta bubblewrap (bwrap) o no puede aislar en esta máquina: apt-get install bubblewrap util-linux",
    ),
    "needs_strace": (lambda: shutil.which("strace") is not None, "falta strace: apt-get install strace"),
    "needs_postgres": (
        postgres_installed,
        "falta PostgreSQL (initdb y pg_ctl, en /usr/lib/postgresql/*/bin o en el PATH): apt-get install postgresql",
    ),
    "browser": (
        chromium_and_playwright,
        'falta Chromium (/usr/bin/chromium) o playwright: apt-get install chromium; pip install -e ".[test]"',
    ),
}


@cache
def available(marker):
    """¿Tiene esta máquina lo que pide ``marker``? Se averigua una vez por corrida."""
    return TOOLS[marker][0]()


def pytest_collection_modifyitems(config, items):
    from nbval.plugin import IPyNbCell

    for item in items:
        if isinstance(item, IPyNbCell):  # cada celda de notebooks/, ejecutada y comparada por nbval
            item.add_marker(pytest.mark.slow)
            # Una celda con la etiqueta de una marca (needs_postgres) la pide como una prueba. Se decide
            # aquí: pytest_runtest_setup de este archivo no alcanza a los ítems de notebooks/.
            for marker in TOOLS.keys() & set(item.cell.metadata.get("tags", ())):
                item.add_marker(getattr(pytest.mark, marker))
                if not available(marker) and not os.environ.get("CI"):
                    item.add_marker(pytest.mark.skip(reason=TOOLS[marker][1]))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Antes de armar los fixtures: sin la herramienta de una marca, se salta (o falla en CI)."""
    for marker in TOOLS:
        if item.get_closest_marker(marker) and not available(marker):
            reason = TOOLS[marker][1]
            if os.environ.get("CI"):
                pytest.fail(f"CI instala todo lo que piden las pruebas, y {reason}", pytrace=False)
            pytest.skip(reason)


def skip_reason(report):
    """El motivo de una prueba saltada, sin el «Skipped: » que le antepone pytest."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter):
    """Siempre, también con 0: cuántas pruebas se saltaron, y por qué (CI lo deja en su registro)."""
    reasons = Counter(skip_reason(r) for r in terminalreporter.stats.get("skipped", []))
    if not reasons:
        terminalreporter.write_line("Pruebas saltadas: 0")
        return
    terminalreporter.write_line(f"Pruebas saltadas por motivo ({sum(reasons.values())}):")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"  {count:4d}  {reason}")

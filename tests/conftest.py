"""Fixtures compartidas: un directorio de trabajo limpio y los agentes que se prueban.

Una prueba que pide ``agent`` corre una vez por agente: el de referencia (``solutions/agent.py``, id
``referencia``) y el que se arma desde las celdas ``#| export`` del notebook de la lección (id
``notebook``), medidos con la misma vara. ``pytest --agent RUTA`` prueba en cambio solo ese agent.py
(id ``otro``). La suite de conformidad (``tests/conformance/``) corre así cada una de sus pruebas; fuera
de ella piden ``agent`` el laboratorio de caídas y las pruebas de la exportación.
"""

import os

import pytest
from course_files import LESSON_NOTEBOOK

from maintainer.paths import REFERENCE_AGENT

AGENTS = ("referencia", "notebook")


def pytest_addoption(parser):
    parser.addoption(
        "--agent",
        metavar="RUTA",
        default=None,
        help="prueba este agent.py (y solo este) en vez del de referencia y el del notebook",
    )


def agent_ids(config):
    """Los agentes de esta corrida: los dos del curso, o solo el de ``--agent``."""
    return ("otro",) if config.getoption("--agent") else AGENTS


def pytest_generate_tests(metafunc):
    if "agent" in metafunc.fixturenames:
        ids = agent_ids(metafunc.config)
        metafunc.parametrize("agent", ids, ids=ids, indirect=True)


@pytest.fixture(scope="session")
def notebook_agent(tmp_path_factory):
    """El agent.py armado desde las celdas ``#| export`` del notebook de la lección."""
    from harness.export import export_agent

    return str(export_agent(LESSON_NOTEBOOK, tmp_path_factory.mktemp("notebook") / "agent.py"))


@pytest.fixture(scope="session")
def agent(request):
    """La ruta (str) del agente a probar; el parámetro lo pone ``pytest_generate_tests``."""
    if request.param == "referencia":
        return REFERENCE_AGENT
    if request.param == "notebook":
        return request.getfixturevalue("notebook_agent")
    path = os.path.abspath(request.config.getoption("--agent"))
    if not os.path.isfile(path):
        pytest.exit(f"--agent {path}: no existe ese archivo", returncode=4)
    return path


@pytest.fixture
def workdir(tmp_path):
    """Un directorio de trabajo vacío para el agente."""
    return tmp_path

"""Fixtures compartidas: un directorio de trabajo limpio y los agentes que se prueban.

Cada prueba de agente corre dos veces: con el agente de referencia (solutions/agent.py) y con el
agent.py que se arma desde las celdas del notebook de la lección, para medirlos con la misma vara.
"""

import pytest
from course_files import LESSON_NOTEBOOK

from harness.runner import REFERENCE_AGENT


@pytest.fixture(scope="session")
def notebook_agent(tmp_path_factory):
    """El agent.py armado desde las celdas ``#| export`` del notebook de la lección."""
    from harness.export import export_agent

    return export_agent(LESSON_NOTEBOOK, tmp_path_factory.mktemp("notebook") / "agent.py")


@pytest.fixture(params=["referencia", "notebook"])
def agent(request):
    """La ruta del agente a probar."""
    if request.param == "referencia":
        return REFERENCE_AGENT
    return request.getfixturevalue("notebook_agent")


@pytest.fixture
def workdir(tmp_path):
    """Un directorio de trabajo vacío para el agente."""
    return tmp_path

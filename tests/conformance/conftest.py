"""La suite de conformidad: cada prueba de esta carpeta corre una vez por agente.

Como la suite que LangGraph entrega para sus checkpoint savers: lo que se prueba es una ruta a un
agent.py, no un módulo importado. Por omisión, el de referencia (``[referencia]``) y el que se exporta
del notebook de la lección (``[notebook]``); con ``pytest --agent RUTA tests/conformance``, cualquier
otro (``[otro]``). El fixture ``agent`` (la ruta) y ``--agent`` viven en ``tests/conftest.py``, porque
el laboratorio de caídas también los usa; aquí se fuerza a toda prueba a pedirlo y se atan a él las
funciones de ``harness.runs.launcher``:

- ``run(workdir, ...)``: ``run_agent_process`` con ``agent=`` ya puesto;
- ``start(workdir, ...)``: ``start_agent_process``;
- ``command(workdir, ...)``: ``agent_command``;
- ``agent_module``: el agent.py cargado como módulo (``harness.runs.launcher.load_agent``), para probar
  sus cargadores en el mismo proceso.
"""

import functools

import pytest

from harness.runs.launcher import agent_command, load_agent, run_agent_process, start_agent_process


@pytest.fixture(autouse=True)
def _per_agent(agent):
    """Toda prueba de conformidad depende del agente: así se parametriza y su id lo muestra."""


@pytest.fixture(scope="session")
def run(agent):
    return functools.partial(run_agent_process, agent=agent)


@pytest.fixture(scope="session")
def start(agent):
    return functools.partial(start_agent_process, agent=agent)


@pytest.fixture(scope="session")
def command(agent):
    return functools.partial(agent_command, agent=agent)


@pytest.fixture(scope="session")
def agent_module(agent):
    return load_agent(agent)

"""La sesión de un agente en la terminal: entra al directorio de trabajo, valida ``CRASH_AFTER`` y toma
el candado (un solo agente por directorio); lo que salga mal adentro es un ``AgentFailure`` con una
línea en español y su código de salida, nunca una traza. ``SimulatedCrash`` pasa de largo: la caída
simulada la atiende ``main`` (``[kill] …`` y 137, como en la lección).

    with agent_session():
        ...            # Ctrl-C → 130; un archivo dañado, un directorio que no sirve, el disco lleno → 1
"""

import contextlib
import os

from harness.contract import EXIT_FAILED, EXIT_INTERRUPTED
from harness.crash import crash_after
from harness.errors import HarnessError, disk_failure
from harness.lock import workdir_lock
from harness.replies import interrupted
from harness.workdir import enter_workdir


class AgentFailure(Exception):  # noqa: N818 (no es un error del programa: es la salida de la corrida)
    """Una corrida que termina por un problema esperado: ``str(err)`` es la línea, ``code`` la salida."""

    def __init__(self, line, code):
        super().__init__(line)
        self.code = code


@contextlib.contextmanager
def agent_session():
    try:
        enter_workdir(os.environ.get("AGENT_WORKDIR"))  # un directorio que no sirve es un error claro
        crash_after()  # una etiqueta mal escrita se avisa antes de empezar, no se ignora
        with workdir_lock():  # un segundo agente en el mismo directorio se rechaza, no se mezcla
            yield
    except KeyboardInterrupt:  # Ctrl-C: una línea que dice dónde quedó el disco
        raise AgentFailure(interrupted(), EXIT_INTERRUPTED) from None
    except HarnessError as err:
        raise AgentFailure(str(err), EXIT_FAILED) from None
    except OSError as err:  # disco lleno, sin permiso…: qué falló y qué quedó
        raise AgentFailure(disk_failure(err), EXIT_FAILED) from None

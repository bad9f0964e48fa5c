"""Las defensas del agente de la lección que no son la idea de la lección: cada una es una llamada de
una línea que nombra lo que cuida, y los detalles se cuentan en «Más allá de la lección».

- ``CheckpointError`` / ``LedgerError``: los errores del punto de control y del registro, en español.
- ``unreadable``: un archivo que existe pero no se puede leer (un directorio con su nombre, sin permiso).
- ``require_checkpoint_shape``: un JSON válido con otra forma se rechaza al cargar, no a mitad de camino;
  ``checkpoint_refusal``, el mismo error para un JSON que ``harness.defenses.bounded`` no deja usar.
- ``require_ledger_shape``: un registro con un «result» que no es texto no se le devuelve al modelo;
  ``ledger_refusal``, lo mismo para el registro.
- ``require_matching_ledger``: la anotación de la llamada colgante tiene que ser de su misma herramienta.
- ``stop_if_lasting``: una falla del entorno que se repite (el disco, un enlace duro) detiene la corrida
  con salida 1 en vez de llegarle al modelo como si fuera su tarea: ``[done]`` solo si el modelo terminó.
"""

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE
from harness.defenses.session import warn  # noqa: F401 (las celdas de la lección lo toman de aquí)
from harness.defenses.shapes import checkpoint_problem, ledger_problem, pending_entry_problem
from harness.errors import HarnessError, os_reason
from harness.tool_input import ToolOSError
from harness.tools import failures_in_a_row

# Fallas seguidas del entorno en una misma herramienta antes de detener la corrida: la primera y la
# segunda le llegan al modelo (una falla pasajera la resuelve reintentar), la tercera ya no.
LASTING_ATTEMPTS = 3


class CheckpointError(HarnessError):
    """El punto de control falta, está a medio escribir o es de otra versión."""


class LedgerError(HarnessError):
    """El registro de efectos no se puede leer: nunca se trata como vacío."""


def unreadable(path, err):
    """Por qué no se pudo leer ``path``, que existe, y qué hacer."""
    return f"No se puede leer {path} ({os_reason(err)}); revisa ese archivo."


def checkpoint_refusal(problem):
    """El ``CheckpointError`` de un punto de control que parsea pero no se puede usar (``problem``)."""
    return CheckpointError(
        f"{CHECKPOINT_FILE} no tiene la forma de un punto de control: {problem}. No se puede reanudar "
        "desde él: bórralo y empieza de nuevo sin --resume."
    )


def require_checkpoint_shape(cp):
    """Un punto de control (su versión ya comprobada) con otra forma: ``CheckpointError``."""
    problem = checkpoint_problem(cp)
    if problem:
        raise checkpoint_refusal(problem)


def ledger_refusal(problem):
    """El ``LedgerError`` de un registro que parsea pero no se puede usar (``problem``)."""
    return LedgerError(
        f"{EFFECTS_FILE} no tiene la forma de un registro de efectos: {problem}. No se puede usar ni "
        f"tratar como vacío: revísalo a mano, o bórralo junto con {CHECKPOINT_FILE} y empieza de nuevo "
        "sin --resume."
    )


def require_ledger_shape(effects):
    """Un registro (ya parseado) con otra forma (una lista, un «result» que no es texto): ``LedgerError``."""
    problem = ledger_problem(effects)
    if problem:
        raise ledger_refusal(problem)


def require_matching_ledger(pending, effects):
    """Antes de escribir nada al reanudar: una anotación de otra herramienta para la llamada colgante
    no es un acierto (reusarla le mentiría al modelo) sino un registro que no corresponde."""
    problem = pending_entry_problem(pending, effects)
    if problem:
        raise LedgerError(f"{EFFECTS_FILE} no corresponde a {CHECKPOINT_FILE}: {problem}. Revísalo a mano.")


class LastingFault(HarnessError):  # noqa: N818 (se lee como una condición)
    """Una herramienta que sigue fallando por el entorno: no es la respuesta del modelo."""


def stop_if_lasting(err):
    """Si ``err`` (lo que lanzó una herramienta) es una falla del entorno que dura (``LASTING_ATTEMPTS``
    seguidas, o una que reintentar no arregla), la corrida se detiene aquí con una línea: el punto de
    control queda con la llamada colgante y ``--resume`` la retoma cuando se resuelva."""
    if isinstance(err, ToolOSError):
        times = failures_in_a_row.get(err.tool, 1)
        if err.lasting or times >= LASTING_ATTEMPTS:
            raise LastingFault(err.line(times)) from None

"""Las defensas del agente de la lección que no son la idea de la lección: cada una es una llamada de
una línea que nombra lo que cuida, y los detalles se cuentan en «Más allá de la lección».

- ``CheckpointError`` / ``LedgerError``: los errores del punto de control y del registro, en español.
- ``unreadable``: un archivo que existe pero no se puede leer (un directorio con su nombre, sin permiso).
- ``require_checkpoint_shape``: un JSON válido con otra forma se rechaza al cargar, no a mitad de camino.
- ``require_ledger_shape``: un registro con un «result» que no es texto no se le devuelve al modelo.
- ``require_matching_ledger``: la anotación de la llamada colgante tiene que ser de su misma herramienta.
"""

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE
from harness.errors import HarnessError, os_reason
from harness.shapes import checkpoint_problem, ledger_problem, pending_entry_problem


class CheckpointError(HarnessError):
    """El punto de control falta, está a medio escribir o es de otra versión."""


class LedgerError(HarnessError):
    """El registro de efectos no se puede leer: nunca se trata como vacío."""


def unreadable(path, err):
    """Por qué no se pudo leer ``path``, que existe, y qué hacer."""
    return f"No se puede leer {path} ({os_reason(err)}); revisa ese archivo."


def require_checkpoint_shape(cp):
    """Un punto de control (su versión ya comprobada) con otra forma: ``CheckpointError``."""
    problem = checkpoint_problem(cp)
    if problem:
        raise CheckpointError(
            f"{CHECKPOINT_FILE} no tiene la forma de un punto de control: {problem}. No se puede reanudar "
            "desde él: bórralo y empieza de nuevo sin --resume."
        )


def require_ledger_shape(effects):
    """Un registro (un objeto JSON ya parseado) con otra forma: ``LedgerError``."""
    problem = ledger_problem(effects)
    if problem:
        raise LedgerError(
            f"{EFFECTS_FILE} no tiene la forma de un registro de efectos: {problem}. No se puede usar ni "
            f"tratar como vacío: revísalo a mano, o bórralo junto con {CHECKPOINT_FILE} y empieza de nuevo "
            "sin --resume."
        )


def require_matching_ledger(pending, effects):
    """Antes de escribir nada al reanudar: una anotación de otra herramienta para la llamada colgante
    no es un acierto (reusarla le mentiría al modelo) sino un registro que no corresponde."""
    problem = pending_entry_problem(pending, effects)
    if problem:
        raise LedgerError(f"{EFFECTS_FILE} no corresponde a {CHECKPOINT_FILE}: {problem}. Revísalo a mano.")

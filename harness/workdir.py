"""Entrar al directorio de trabajo del agente, con un error claro si no sirve."""

import os

from harness.errors import HarnessError, os_reason


class WorkdirError(HarnessError):
    """El directorio de trabajo no existe, no es un directorio o no se puede escribir en él."""


def enter_workdir(path):
    """``os.chdir(path)`` y comprueba que se pueda escribir ahí, antes de tocar ningún archivo."""
    shown = path or "."
    try:
        os.chdir(shown)
    except OSError as err:
        raise WorkdirError(
            f"No se puede usar {shown} como directorio de trabajo ({os_reason(err)}); indica en "
            "AGENT_WORKDIR un directorio que exista."
        ) from None
    # Comprobarlo antes evita quedar a mitad de camino: un punto A guardado y un punto B imposible.
    if not os.access(".", os.W_OK):
        raise WorkdirError(
            f"No se puede escribir en el directorio de trabajo {os.path.abspath('.')}; el agente no toca "
            "nada ahí. Dale permiso de escritura (o elige otro AGENT_WORKDIR) y vuelve a intentarlo."
        )

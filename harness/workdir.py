"""Entrar al directorio de trabajo del agente, con un error claro si no sirve; y carpetas de trabajo
para los ejercicios y las pruebas (vaciar una, entrar y volver)."""

import contextlib
import os
import shutil

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


def fresh_dir(path):
    """Borra ``path`` y lo crea vacío (devuelve ``path``): cada corrida empieza de cero."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


@contextlib.contextmanager
def inside(path):
    """Entra a ``path`` durante el bloque y vuelve a la carpeta de antes, aunque haya un error: los
    cargadores del agente usan rutas relativas."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield path
    finally:
        os.chdir(before)

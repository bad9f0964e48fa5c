"""Entrar al directorio de trabajo del agente, con un error claro si no sirve; y carpetas de trabajo
para los ejercicios y las pruebas (vaciar una, entrar y volver)."""

import contextlib
import errno
import os
import stat

from harness.contract import TMP_SUFFIX, WORKDIR_VAR
from harness.defenses.durable import NOT_PLAIN_REASON
from harness.errors import DiskError, FileRefused, HarnessError, os_reason
from harness.tool_input import link_reason
from harness.tools import NOTES_PATH, REPORT_PATH


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
            f"{WORKDIR_VAR} un directorio que exista."
        ) from None
    # Comprobarlo antes evita quedar a mitad de camino: un punto A guardado y un punto B imposible.
    if not os.access(".", os.W_OK):
        raise WorkdirError(
            f"No se puede escribir en el directorio de trabajo {os.path.abspath('.')}; el agente no toca "
            f"nada ahí. Dale permiso de escritura (o elige otro {WORKDIR_VAR}) y vuelve a intentarlo."
        )


def check_agent_files(*own, appended=()):
    """Antes de la primera escritura de una corrida: cada archivo que el agente lee, escribe o borra
    (``own``, el reporte, las notas y sus temporales) falta, es un archivo común o es un enlace (que
    nunca se sigue: se borra o se reemplaza el enlace mismo). Un directorio, una FIFO… no se pueden
    reemplazar: se rechazan antes de cambiar nada, no a mitad de una reanudación. ``appended``: los
    archivos que una reanudación lee y a los que agrega (el reporte): ahí tampoco sirve un enlace,
    simbólico o duro, porque se leería y se agregaría a otro archivo."""
    for name in (*own, REPORT_PATH, NOTES_PATH):
        for path in (name, name + TMP_SUFFIX):
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            except OSError as err:
                raise DiskError(err, "leer", "no se cambió nada") from None
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                wrong = (
                    IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
                    if stat.S_ISDIR(mode)
                    else FileRefused(errno.EINVAL, NOT_PLAIN_REASON, path)
                )
                raise DiskError(wrong, "escribir en", "no se cambió nada (quítalo de ahí)")
    for path in appended:
        reason = link_reason(path)
        if reason:
            raise WorkdirError(
                f"{path} {reason}. Reanudar lo leería y le agregaría el reporte: no se cambió nada; "
                "cuando se resuelva, retoma con --resume."
            )


def fresh_dir(path):
    """Borra ``path`` y lo crea vacío (devuelve ``path``): cada corrida empieza de cero."""
    import shutil  # aquí y no arriba: el agente importa este módulo y no borra carpetas

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

"""Un solo agente por directorio de trabajo, con un candado del sistema operativo (Linux, macOS, Windows).

Dos procesos que escriben el mismo punto de control a la vez se pisarían (y una corrida nueva borraría
el estado de la otra). El candado es del núcleo: lo suelta el cierre del descriptor, y el sistema
cierra los descriptores de un proceso que muere, aun matado con SIGKILL (o TerminateProcess en
Windows), así que un agente muerto no lo deja tomado.

- Con ``fcntl`` (Linux, macOS): ``flock`` sobre el directorio mismo; no deja nada en disco.
- Sin ``fcntl`` (Windows): un candado de un byte sobre ``.agente.lock`` en el directorio
  (``msvcrt.locking``; en un sistema POSIX sin el módulo ``fcntl``, ``os.lockf``). Quien lo suelta lo
  borra; si el proceso muere queda el archivo, no el candado, y la corrida siguiente lo reusa y lo borra.
  Se abre sin seguir enlaces (``O_NOFOLLOW``), como todo archivo del agente: un ``.agente.lock`` que es
  un enlace simbólico (aun roto) se rechaza, nunca crea un archivo fuera del directorio de trabajo.
"""

import errno
import os
import threading
from contextlib import contextmanager, suppress

from harness.contract import LOCK_FILE
from harness.errors import HarnessError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
try:
    import msvcrt
except ImportError:  # Linux, macOS
    msvcrt = None


# Directorios cuyo archivo de candado tiene este proceso: lockf es por proceso (un segundo candado
# del mismo proceso se concedería, y cerrar cualquiera de los dos soltaría el primero).
_held = set()
_held_guard = threading.Lock()


class WorkdirBusy(HarnessError):  # noqa: N818 (se lee como una condición, no como una falla)
    """Otro proceso del agente ya trabaja en este directorio."""


def _busy(path):
    return WorkdirBusy(
        f"Otro proceso del agente ya está trabajando en {os.path.abspath(path)}; no se arranca un "
        "segundo para no mezclar sus escrituras. Espera a que termine (o detenlo) y vuelve a "
        "intentarlo: el candado se suelta solo cuando ese proceso termina o muere."
    )


@contextmanager
def workdir_lock(path="."):
    """Mantiene el candado del directorio mientras dura el bloque; si está tomado, lo rechaza."""
    with _directory_lock(path) if fcntl else _file_lock(path):
        yield


@contextmanager
def _directory_lock(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(path) from None
        yield
    finally:
        os.close(fd)


@contextmanager
def _file_lock(path):
    key = os.path.normcase(os.path.realpath(path))
    with _held_guard:
        if key in _held:
            raise _busy(path)
        _held.add(key)
    try:
        lock_path = os.path.join(path, LOCK_FILE)
        fd = _lock_file(lock_path, path)
        try:
            yield
        finally:
            _unlock_file(fd, lock_path)
    finally:
        with _held_guard:
            _held.discard(key)


# Sin truncar (otro proceso puede tenerlo) y sin seguir enlaces; en Windows no hay enlaces que seguir
# al crear (O_NOFOLLOW no existe), y ``_not_a_link`` lo comprueba igual.
_LOCK_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class LockFileRefused(HarnessError):  # noqa: N818
    """``.agente.lock`` es un enlace: el agente no lo sigue."""


def _refused(lock_path):
    return LockFileRefused(
        f"{LOCK_FILE} en {os.path.abspath(os.path.dirname(lock_path) or '.')} es un enlace simbólico, y el "
        "agente no sigue enlaces en sus propios archivos (podría crear o bloquear un archivo fuera del "
        f"directorio de trabajo). Bórralo (el enlace, no su destino) y vuelve a intentarlo."
    )


def _not_a_link(lock_path):
    if os.path.islink(lock_path):
        raise _refused(lock_path)


def _lock_file(lock_path, path):
    """El descriptor de ``lock_path`` con su primer byte bloqueado (si otro lo tiene, ``busy``)."""
    while True:
        _not_a_link(lock_path)  # donde no hay O_NOFOLLOW
        try:
            fd = os.open(lock_path, _LOCK_OPEN, 0o644)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise _refused(lock_path) from None
            raise
        try:
            if msvcrt:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # desde la posición actual: el byte 0
            else:
                os.lockf(fd, os.F_TLOCK, 1)
        except (BlockingIOError, PermissionError):
            os.close(fd)
            raise _busy(path) from None
        # Quien soltaba el candado pudo borrar el archivo entre nuestro open y nuestro candado: ese
        # candado es sobre un archivo que ya no está en el directorio, y no cuenta.
        try:
            if os.path.samestat(os.fstat(fd), os.lstat(lock_path)):
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def _unlock_file(fd, lock_path):
    if msvcrt:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        os.close(fd)
        # Windows no borra un archivo abierto: se borra ya suelto, y si otro proceso lo tiene abierto
        # (esperando su turno), queda para ese.
        with suppress(OSError):
            os.remove(lock_path)
    else:
        # En POSIX se borra con el candado tomado: nadie lo toma en el camino (ver _lock_file).
        with suppress(FileNotFoundError):
            os.remove(lock_path)
        os.close(fd)

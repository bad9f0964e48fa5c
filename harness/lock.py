"""Un solo agente por directorio de trabajo: un candado ``flock`` sobre el directorio mismo.

Dos procesos que escriben el mismo punto de control a la vez se pisarían (y una corrida nueva borraría
el estado de la otra). El candado es del núcleo: lo suelta el cierre del descriptor, así que un proceso
matado con SIGKILL no lo deja tomado. Se toma sobre el directorio y no sobre un archivo, para no dejar
nada en disco.
"""

import fcntl
import os
from contextlib import contextmanager

from harness.errors import HarnessError


class WorkdirBusy(HarnessError):  # noqa: N818 (se lee como una condición, no como un fallo)
    """Otro proceso del agente ya trabaja en este directorio."""


@contextmanager
def workdir_lock(path="."):
    """Mantiene el candado del directorio mientras dura el bloque; si está tomado, lo rechaza."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WorkdirBusy(
                f"Otro proceso del agente ya está trabajando en {os.path.abspath(path)}; no se arranca un "
                "segundo para no mezclar sus escrituras. Espera a que termine (o detenlo) y vuelve a "
                "intentarlo: el candado se suelta solo cuando ese proceso termina o muere."
            ) from None
        yield
    finally:
        os.close(fd)

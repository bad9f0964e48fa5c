"""Los programas de DBOS de «Más allá» sin pagar en cada proceso el import de DBOS (más de un segundo:
SQLAlchemy, psycopg).

Un servidor de corridas (``harness.runs.fork_server``) importa ``dbos`` una sola vez y escucha en un
socket; cada programa de aquí (el agente de DBOS, el trabajador de la cola, la medición de costos, el
agente de lotes), al lanzarse, le pasa su corrida (``relay_if_preloaded``): la hace un fork suyo, que
nace con DBOS ya importado y sin lanzar (sin hilos ni base abiertos), con los stdin/stdout/stderr, el
directorio, el entorno y los argumentos del proceso lanzado, y corre el programa como ``python -m``,
así que lee su entorno como siempre. Una caída lo termina de verdad (``os._exit(137)``, o un SIGKILL a
su pid). El proceso lanzado le reenvía Ctrl-C, SIGTERM y SIGHUP y sale con su código; si a la corrida
la mató una señal, muere de la misma señal.

Al arrancar, el servidor deja además en su carpeta una base vacía ya migrada (en un fork desechable):
cada corrida nueva del agente la copia (``copy_empty_database``) en vez de crear y migrar la suya.

    preload_dbos_agent()   # en el notebook: desde aquí, cada uno de esos procesos nace del servidor

Sin servidor (o si no responde), el programa corre como siempre.
"""

import atexit
import os
import shutil
import sys
import tempfile

from harness.defenses.early_signals import pending
from harness.runs import fork_server

SOCKET_ENV = "DBOS_AGENT_PRELOAD"
TEMPLATE = "dbos-vacia.sqlite"  # la base vacía ya migrada, junto al socket


# —— El proceso que lanzó la persona ——


def relay_if_preloaded(program):
    """Si hay un servidor, la corrida de ``program`` (``python -m program`` con los argumentos de este
    proceso) la hace un fork suyo y este proceso sale con su código; si no, vuelve sin hacer nada (y el
    programa importa DBOS y corre aquí)."""
    path = os.environ.get(SOCKET_ENV)
    if path:
        fork_server.relay(path, ["-m", program, *sys.argv[1:]], held=pending)


# —— En una corrida ——


def copy_empty_database(dest):
    """``dest`` pasa a ser una copia de la base vacía ya migrada del servidor (abrirla ahorra al motor
    crear sus tablas y su cola); devuelve si la copió. Sin servidor, o antes de que la tenga, no hace
    nada."""
    path = os.environ.get(SOCKET_ENV)
    template = path and os.path.join(os.path.dirname(path), TEMPLATE)
    if not template or not os.path.isfile(template):
        return False
    shutil.copyfile(template, dest)
    return True


# —— El servidor ——


def start_server(folder):
    """Un servidor que importa DBOS y escucha en ``folder`` (su socket: ``socket_path``); al arrancar
    deja ahí la base vacía (la escribe el agente mismo: ``write_empty_database``, con ``os.replace``, así
    que una corrida nunca la ve a medias)."""
    template = os.path.join(folder, TEMPLATE)
    return fork_server.Server(
        dict(os.environ),
        preload=("dbos",),  # lo caro, una sola vez; cada programa se importa en su corrida
        listen=socket_path(folder),
        warm_up=("harness.beyond.dbos_agent", "write_empty_database", template),
    )


def socket_path(folder):
    return os.path.join(folder, "s")


def preload_dbos_agent():
    """Arranca el servidor y lo anuncia en el entorno: los procesos que este proceso lance heredan
    ``DBOS_AGENT_PRELOAD``. No lo espera: mientras importa DBOS, una corrida que llega antes no lo
    encuentra todavía y corre como siempre (una que llega con el socket ya abierto espera el import).
    Se apaga cuando este proceso termina."""
    if os.environ.get(SOCKET_ENV) or not fork_server.available():
        return
    folder = tempfile.mkdtemp(prefix="dbos-pre-")
    server = start_server(folder)
    os.environ[SOCKET_ENV] = socket_path(folder)
    atexit.register(_stop, server, folder)


def _stop(server, folder):
    server.close()
    os.environ.pop(SOCKET_ENV, None)
    shutil.rmtree(folder, ignore_errors=True)

"""Un servidor PostgreSQL desechable, solo en 127.0.0.1, en una carpeta temporal.

    with disposable_server() as server:        # postgresql://postgres@127.0.0.1:PUERTO
        url = f"{server}/dbos_mas_alla"          # una base por nombre: DBOS la crea si no existe
        ...                                      # al salir (también por error o interrupción), el
                                                 # servidor se detiene y su carpeta se borra

Usa el ``initdb`` y el ``pg_ctl`` que haya en la máquina: los del paquete ``postgresql`` de Debian
(``/usr/lib/postgresql/*/bin``) o, si no, los del ``PATH`` (Homebrew en macOS, el instalador en
Windows). Solo hacen falta los programas: el servicio que instala el paquete no se usa. ``initdb`` se
niega a correr como root: en ese caso el servidor corre como el usuario ``postgres`` (``runuser``).
Autenticación ``trust`` y solo en loopback: es para pruebas, nunca para datos reales.
"""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager

INSTALL_HELP = """\
Solo hacen falta sus programas (initdb y pg_ctl): el servidor desechable lo arranca y lo borra quien lo \
usa, como la celda de «Más allá».
  · Debian o Ubuntu: sudo apt-get install postgresql
  · macOS (Homebrew): brew install postgresql@16, y su carpeta bin en el PATH \
(export PATH="$(brew --prefix postgresql@16)/bin:$PATH")
  · Windows: el instalador de https://www.postgresql.org/download/windows/, y su carpeta bin en el \
PATH (por ejemplo C:\\Program Files\\PostgreSQL\\16\\bin)
Con el PATH cambiado, reinicia JupyterLab desde esa terminal; después, vuelve a ejecutar la celda."""


class PostgresMissingError(RuntimeError):
    """No hay binarios de PostgreSQL en esta máquina."""


def binaries():
    """La carpeta con ``initdb`` y ``pg_ctl`` (la versión más nueva de Debian, o la del ``PATH``)."""
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    found = debian[-1] if debian else shutil.which("initdb")
    if not found or not shutil.which("pg_ctl", path=os.path.dirname(found)):
        raise PostgresMissingError(f"No hay PostgreSQL en esta máquina.\n{INSTALL_HELP}")
    return os.path.dirname(found)


def _as_root():
    return getattr(os, "geteuid", lambda: None)() == 0  # Windows no tiene geteuid


def _as_server_user(args):
    """``args`` como el usuario ``postgres`` si somos root (initdb no corre como root)."""
    return ["runuser", "-u", "postgres", "--", *args] if _as_root() else args


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*args):
    done = subprocess.run(_as_server_user(list(args)), capture_output=True, text=True)
    if done.returncode:  # con lo que dijo el programa: sin eso, «salió con 1» no ayuda a nadie
        raise RuntimeError(f"{os.path.basename(args[0])} falló ({done.returncode}): {done.stderr.strip()}")


def _start():
    """Crea y arranca un servidor nuevo; devuelve (url del servidor, sin base; carpeta)."""
    bin_dir = binaries()
    # Como root, el usuario postgres tiene que llegar a la carpeta: bajo un TMPDIR privado de root (el
    # de pytest, por ejemplo) no podría; /tmp es de todos.
    folder = tempfile.mkdtemp(prefix="pg-mas-alla-", dir="/tmp" if _as_root() else None)
    try:
        if _as_root():
            shutil.chown(folder, "postgres", "postgres")
        data, port = os.path.join(folder, "data"), _free_port()
        _run(os.path.join(bin_dir, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {port}"
        if os.name == "posix":  # solo TCP en loopback: la ruta de un socket de Unix tiene un largo máximo
            options += " -c unix_socket_directories=''"  # (el '' lo lee el shell con que pg_ctl lo lanza)
        log = os.path.join(folder, "log")
        _run(os.path.join(bin_dir, "pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "start")
    except BaseException:
        _stop(folder)  # también con Ctrl-C o el botón de interrumpir: no queda nada a medias
        raise
    return f"postgresql://postgres@127.0.0.1:{port}", folder


def _stop(folder):
    """Detiene el servidor de ``folder`` (si sigue vivo) y borra la carpeta."""
    data = os.path.join(folder, "data")
    if os.path.isfile(os.path.join(data, "postmaster.pid")):
        pg_ctl = os.path.join(binaries(), "pg_ctl")
        subprocess.run(
            _as_server_user([pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"]), capture_output=True
        )
    shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def disposable_server():
    """La url de un servidor nuevo; al salir, por donde sea, se detiene y se borra."""
    url, folder = _start()
    try:
        yield url
    finally:
        _stop(folder)

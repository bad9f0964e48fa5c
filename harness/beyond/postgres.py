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

    prepare_template()                         # al comienzo (el notebook, en su primera celda): en
                                               # segundo plano, initdb y el esquema de DBOS, una vez

Con la plantilla preparada, cada servidor nace de una copia de su carpeta en vez de su propio
``initdb``, y en ella la base ``template1`` (la que PostgreSQL copia en cada ``CREATE DATABASE``) ya trae
las tablas de DBOS, creadas con ``dbos migrate``, y la cola de los trabajadores: una base nueva de DBOS
no repite sus migraciones, y su motor atiende la cola desde que arranca. Sin
plantilla (o si no se pudo preparar), cada servidor hace su ``initdb``, como siempre.
"""

import atexit
import glob
import os
import shutil
import socket
import sys
import tempfile
import threading
from contextlib import contextmanager

from harness.runs.launcher import launch

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
    _checked(args[0], _as_server_user(list(args)))


def _checked(program, args):
    """Corre ``args`` hasta que termina; si falla, el error nombra ``program`` con lo que dijo: sin eso,
    «salió con 1» no ayuda a nadie."""
    done = _launch_here(args)
    if done.returncode:
        raise RuntimeError(f"{os.path.basename(program)} falló ({done.returncode}): {done.stderr.strip()}")


def _launch_here(args):
    """``args`` en el grupo de este proceso, como en la terminal, y sin plazo; lo que deja corriendo
    sigue (``pg_ctl start`` deja el servidor)."""
    return launch(args, new_session=False, orphans="keep", timeout=None)


def _folder(prefix):
    # Como root, el usuario postgres tiene que llegar a la carpeta: bajo un TMPDIR privado de root (el
    # de pytest, por ejemplo) no podría; /tmp es de todos.
    folder = tempfile.mkdtemp(prefix=prefix, dir="/tmp" if _as_root() else None)
    if _as_root():
        shutil.chown(folder, "postgres", "postgres")
    return folder


def _start(template=None):
    """Crea y arranca un servidor nuevo (una copia de la carpeta ``template``, o con su ``initdb``);
    devuelve (url del servidor, sin base; carpeta)."""
    folder = _folder("pg-mas-alla-")
    try:
        data = os.path.join(folder, "data")
        if template:  # cp -a, como el usuario del servidor: la carpeta queda suya y con sus permisos
            _run("cp", "-a", template, data)
        else:
            _initdb(data)
        return _launch(folder), folder
    except BaseException:
        _stop(folder)  # también con Ctrl-C o el botón de interrumpir: no queda nada a medias
        raise


def _initdb(data):
    _run(os.path.join(binaries(), "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")


def _launch(folder):
    """Arranca el servidor de ``folder``/data en un puerto libre y devuelve su url."""
    port = _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port}"
    if os.name == "posix":  # solo TCP en loopback: la ruta de un socket de Unix tiene un largo máximo
        options += " -c unix_socket_directories=''"  # (el '' lo lee el shell con que pg_ctl lo lanza)
    data, log = os.path.join(folder, "data"), os.path.join(folder, "log")
    _run(os.path.join(binaries(), "pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "start")
    return f"postgresql://postgres@127.0.0.1:{port}"


def _stop(folder):
    """Detiene el servidor de ``folder`` (si sigue vivo) y borra la carpeta."""
    data = os.path.join(folder, "data")
    if os.path.isfile(os.path.join(data, "postmaster.pid")):
        _pg_ctl_stop(data, mode="immediate")
    shutil.rmtree(folder, ignore_errors=True)


def _pg_ctl_stop(data, mode):
    pg_ctl = os.path.join(binaries(), "pg_ctl")
    _launch_here(_as_server_user([pg_ctl, "-D", data, "-m", mode, "-w", "stop"]))


# La plantilla de este proceso: el hilo que la prepara y, cuando terminó, su carpeta (o None si falló).
_template = {}


def prepare_template():
    """Empieza a preparar, en un hilo, la carpeta de la que nacen los servidores de este proceso:
    ``initdb`` y ``dbos migrate`` en ``template1``. No espera; sin PostgreSQL (o en Windows, sin ``cp``)
    no hace nada. La carpeta se borra cuando este proceso termina."""
    if _template or os.name != "posix":
        return
    thread = threading.Thread(target=_build_template, name="plantilla-postgres", daemon=True)
    _template["thread"] = thread
    thread.start()


def _build_template():
    try:
        binaries()
    except PostgresMissingError:
        return  # la celda que pida un servidor lo dirá, con cómo instalarlo
    folder = _folder("pg-plantilla-")
    atexit.register(_stop, folder)  # también si este proceso termina mientras la prepara
    try:
        _initdb(os.path.join(folder, "data"))
        url = _launch(folder)
        try:  # el programa de DBOS, del mismo entorno que este Python
            dbos = os.path.join(os.path.dirname(sys.executable), "dbos")
            _run_here(dbos, "migrate", "--sys-db-url", f"{url}/template1")
            # La cola de los trabajadores de la sección 4, también en la plantilla (ver register_queue).
            from harness.beyond.queue_worker import register_queue  # noqa: PLC0415 (importa DBOS)

            register_queue(f"{url}/template1")
        finally:
            _pg_ctl_stop(os.path.join(folder, "data"), mode="fast")  # la copia parte de un apagado limpio
    except Exception:  # noqa: BLE001 (sin plantilla, cada servidor hace su initdb: nada se pierde)
        return
    os.remove(os.path.join(folder, "log"))
    _template["data"] = os.path.join(folder, "data")


def _run_here(*args):
    """Como ``_run``, pero como este usuario (``dbos migrate`` es un cliente de la base)."""
    _checked(args[0], list(args))


def _ready_template():
    """La carpeta de la plantilla (esperando al hilo, si la está preparando), o None."""
    if "thread" in _template:
        _template["thread"].join()
    return _template.get("data")


@contextmanager
def disposable_server():
    """La url de un servidor nuevo; al salir, por donde sea, se detiene y se borra."""
    url, folder = _start(_ready_template())
    try:
        yield url
    finally:
        _stop(folder)

"""Un servidor PostgreSQL desechable, solo en 127.0.0.1, en una carpeta temporal.

    python -m maintainer.postgres start            # crea uno, imprime su URL y su carpeta
    python -m maintainer.postgres stop CARPETA     # lo detiene y borra la carpeta

Usa el ``initdb`` y el ``pg_ctl`` del paquete ``postgresql`` de Debian (``/usr/lib/postgresql/*/bin``).
``initdb`` se niega a correr como root: en ese caso el servidor corre como el usuario ``postgres``
(``runuser``). Autenticación ``trust`` y solo en loopback: es para pruebas, nunca para datos reales.
Las pruebas lo usan como fixture (``tests/test_beyond_postgres.py``).
"""

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile

URL_FILE = "url.txt"


class PostgresMissingError(RuntimeError):
    """No hay binarios de PostgreSQL en esta máquina."""


def binaries():
    """La carpeta ``bin`` de la versión más nueva instalada, o ``PostgresMissingError``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise PostgresMissingError(
            "No hay PostgreSQL en esta máquina (falta /usr/lib/postgresql/*/bin/initdb): instálalo con "
            "«apt-get install postgresql»."
        )
    return os.path.dirname(found[-1])


def _as_server_user(args):
    """``args`` como el usuario ``postgres`` si somos root (initdb no corre como root)."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start():
    """Crea y arranca un servidor nuevo; devuelve (url, carpeta)."""
    bin_dir = binaries()
    folder = tempfile.mkdtemp(prefix="pg-mas-alla-")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data, port = os.path.join(folder, "data"), _free_port()
    run = lambda *args: subprocess.run(_as_server_user(list(args)), check=True, capture_output=True)  # noqa: E731
    run(os.path.join(bin_dir, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder}"
    run(
        os.path.join(bin_dir, "pg_ctl"),
        "-D",
        data,
        "-l",
        os.path.join(folder, "log"),
        "-o",
        options,
        "-w",
        "start",
    )
    url = f"postgresql://postgres@127.0.0.1:{port}/dbos_mas_alla"
    with open(os.path.join(folder, URL_FILE), "w", encoding="utf-8") as f:
        f.write(url)
    return url, folder


def stop(folder):
    """Detiene el servidor de ``folder`` (si sigue vivo) y borra la carpeta."""
    data = os.path.join(folder, "data")
    if os.path.isdir(data):
        pg_ctl = os.path.join(binaries(), "pg_ctl")
        subprocess.run(_as_server_user([pg_ctl, "-D", data, "-m", "immediate", "stop"]), capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


def main(argv):
    if argv[:1] == ["start"]:
        try:
            url, folder = start()
        except PostgresMissingError as err:
            print(err, file=sys.stderr)
            return 1
        print(f"export DBOS_SYSTEM_DATABASE_URL={url}")
        print(f"# para detenerlo: python -m maintainer.postgres stop {folder}")
        return 0
    if argv[:1] == ["stop"] and len(argv) == 2:
        stop(argv[1])
        return 0
    print("uso: python -m maintainer.postgres start | stop CARPETA", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Los programas de DBOS de «Más allá» sin pagar en cada proceso el import de DBOS (más de un segundo:
SQLAlchemy, psycopg).

Un servidor importa ``dbos`` una sola vez y, por cada corrida que le piden, hace ``fork``: la corrida
es un proceso propio, que nace con DBOS ya importado y sin lanzar (sin hilos ni base abiertos), con los
stdin/stdout/stderr, el directorio, el entorno y los argumentos de quien la pidió, e importa ahí su
módulo (uno de ``PROGRAMS``: el agente de DBOS, el trabajador de la cola, la medición de costos, el
agente de lotes), así que lee su entorno como siempre. Una caída lo termina de verdad (``os._exit(137)``, o un SIGKILL a su
pid), como siempre. Quien la pidió es el proceso que lanzó la persona (``python -m harness.beyond.…``):
manda su pedido, reenvía Ctrl-C, SIGTERM y SIGHUP a la corrida y sale con su código; si a la corrida
la mató una señal, muere de la misma señal.

    preload_dbos_agent()   # en el notebook: desde aquí, cada uno de esos procesos nace del servidor

Sin servidor (o si no responde), el programa corre como siempre.
"""

import atexit
import importlib
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile

from harness.beyond.process_death import leave
from harness.defenses.early_signals import pending
from harness.runs.fork_server import adopt, exit_code

SOCKET_ENV = "DBOS_AGENT_PRELOAD"
# Lo que el servidor sabe correr: cada módulo, con su main(argv) que devuelve el código de salida.
PROGRAMS = ("harness.beyond.dbos_agent", "harness.beyond.queue_worker", "harness.beyond.cost_formats")
PROGRAMS += ("harness.beyond.batch_agent",)  # sin DBOS, pero sin pagar el arranque de Python en cada corrida
_STOPS = ("SIGINT", "SIGTERM", "SIGHUP")


# —— El proceso que lanzó la persona ——


def relay_if_preloaded(program):
    """Si hay un servidor, la corrida de ``program`` (uno de ``PROGRAMS``) la hace un fork suyo y este
    proceso sale con su código; si no, vuelve sin hacer nada (y el programa importa DBOS y corre aquí)."""
    path = os.environ.get(SOCKET_ENV)
    if not path:
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        request = {"program": program, "argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}
        socket.send_fds(sock, [json.dumps(request).encode("utf-8")], [0, 1, 2])
        sock.shutdown(socket.SHUT_WR)
        answers = sock.makefile("r", encoding="ascii")
        pid = int(answers.readline())
    except (OSError, ValueError):  # el servidor ya no está: la corrida de siempre
        sock.close()
        return
    for name in _STOPS:  # la señal es para la corrida; este proceso solo espera su código
        signal.signal(getattr(signal, name), lambda signum, _frame: _forward(pid, signum))
    if pending():  # llegó antes, mientras este proceso arrancaba (hold_signals)
        _forward(pid, pending())
    line = answers.readline()
    _exit_like(int(line) if line.strip().lstrip("-").isdigit() else 1)


def _exit_like(code):
    """Sale con ``code``; si es negativo (a la corrida la mató esa señal), muere de la misma señal, para
    que quien espera a este proceso vea lo mismo que vería sin el servidor."""
    if code < 0:
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL no se puede cambiar (ni hace falta)
            pass
        os.kill(os.getpid(), -code)
    os._exit(128 - code if code < 0 else code)


def _forward(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


# —— El servidor ——


def serve(path):
    """Atiende pedidos en ``path`` hasta que se cierra su stdin (el kernel que lo arrancó terminó)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # lo apaga su stdin, no un Ctrl-C
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    # Escucha antes de importar: una corrida que llega mientras tanto espera ese import, en vez de
    # hacer el suyo a la vez (con dos núcleos, los dos tardarían el doble).
    import dbos  # noqa: F401, PLC0415 (lo caro, una sola vez; cada programa se importa en su corrida)

    _make_empty_database(os.path.join(os.path.dirname(os.path.abspath(path)), "dbos-vacia.sqlite"))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # cada hijo se recoge solo
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is sys.stdin:
                if not sys.stdin.buffer.read1(4096):
                    return
                continue
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                os._exit(_attend(conn))
            conn.close()


# —— Una base vacía ya migrada ——

_EMPTY = {"path": None}  # la del servidor; cada corrida nace con este valor


def _make_empty_database(target):
    """Lanza el motor una vez sobre un SQLite nuevo, en un hijo (el servidor sigue sin hilos ni base
    abiertos: sus forks nacen limpios), y guarda el resultado en ``target``: las tablas del motor
    y la cola del agente creadas, sin ningún flujo. Si algo falla, cada corrida nueva crea su base como siempre."""
    pid = os.fork()
    if pid == 0:
        try:
            # Por su nombre, como cada programa: el agente importa este módulo (copy_empty_database).
            importlib.import_module("harness.beyond.dbos_agent").write_empty_database(target)
            code = 0
        except BaseException:  # noqa: BLE001 (sin plantilla, las corridas hacen su propia base)
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status == 0 and os.path.isfile(target):
        _EMPTY["path"] = target


def copy_empty_database(dest):
    """En una corrida nacida del servidor, ``dest`` pasa a ser una copia de la base vacía ya migrada
    (abrirla ahorra al motor crear sus tablas y su cola); devuelve si la copió. Fuera del servidor, no
    hace nada."""
    if not _EMPTY["path"]:
        return False
    import shutil  # noqa: PLC0415 (solo en una corrida del servidor)

    shutil.copyfile(_EMPTY["path"], dest)
    return True


def _attend(conn):
    """En el hijo del servidor: recibe el pedido, hace nacer la corrida y le manda a quien la pidió su
    pid y, al final, su código de salida."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # para poder esperar a la corrida
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    while chunk := conn.recv(1 << 20):
        data += chunk
    request = json.loads(data)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run(request, fds)
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(f"{pid}\n".encode())
    except OSError:  # quien la pidió ya no está: la corrida sigue, nadie espera su código
        pass
    _, status = os.waitpid(pid, 0)
    try:
        conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())  # negativo: la señal que la mató
    except OSError:
        pass
    return 0


def _run(request, fds):
    """La corrida: los descriptores, el directorio, el entorno y los argumentos de quien la pidió; su
    módulo se importa aquí, con ese entorno."""
    adopt(fds, request["cwd"], request["env"])
    for name in _STOPS:
        signal.signal(
            getattr(signal, name), signal.default_int_handler if name == "SIGINT" else signal.SIG_DFL
        )
    sys.stdin, sys.stdout, sys.stderr = (_stream(fd) for fd in (0, 1, 2))
    if request.get("program") in PROGRAMS:
        program = importlib.import_module(request["program"])
        sys.argv = [program.__file__, *request["argv"]]
        code = _main_code(program.main, request["argv"])
    else:
        print(f"El servidor de DBOS precargado no corre «{request.get('program')}».", file=sys.stderr)
        code = 1
    leave(code)


def _main_code(main, argv):
    try:
        code = main(argv)
    except SystemExit as done:
        return exit_code(done)
    return code if isinstance(code, int) else (0 if code is None else 1)


def _stream(fd):
    """Un stream de texto nuevo sobre ``fd``, con el búfer que Python le daría al arrancar."""
    encoding = (os.environ.get("PYTHONIOENCODING") or "utf-8").split(":")[0]
    if fd == 0:
        return io.TextIOWrapper(open(0, "rb", closefd=False), encoding=encoding)  # noqa: SIM115
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    raw = open(fd, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115 (dura la corrida)
    return io.TextIOWrapper(
        raw,
        encoding=encoding,
        errors="backslashreplace" if fd == 2 else "strict",
        line_buffering=fd == 2 or os.isatty(fd),
        write_through=unbuffered,
    )


# —— En el notebook ——


def preload_dbos_agent():
    """Arranca el servidor y lo anuncia en el entorno: los procesos que este proceso lance heredan
    ``DBOS_AGENT_PRELOAD``. No lo espera: mientras importa DBOS, una corrida que llega antes no lo
    encuentra todavía y corre como siempre (una que llega con el socket ya abierto espera el import).
    Se apaga cuando este proceso termina."""
    if os.environ.get(SOCKET_ENV):
        return
    folder = tempfile.mkdtemp(prefix="dbos-pre-")
    path = os.path.join(folder, "s")
    # En su propia sesión: al apagarse, ipykernel manda SIGTERM a los hijos de su grupo y espera a que
    # no quede ninguno, y este servidor, ya muerto pero sin recoger hasta el atexit, lo hacía esperar
    # hasta que jupyter_client lo mataba (2,5 s en cada cierre del notebook). Lo apaga su stdin.
    server = subprocess.Popen(
        [sys.executable, "-m", "harness.beyond.preload", path],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.environ[SOCKET_ENV] = path
    atexit.register(_stop, server, folder)


def _stop(server, folder):
    """El servidor sale al cerrarse su stdin (también si este proceso muere de golpe)."""
    server.stdin.close()
    server.wait(timeout=10)
    os.environ.pop(SOCKET_ENV, None)
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    os.rmdir(folder)


if __name__ == "__main__":
    # El servidor corre desde el módulo importado, no desde ``__main__``: las corridas importan
    # ``harness.beyond.preload`` (copy_empty_database) y leen así el mismo ``_EMPTY`` que él llenó.
    importlib.import_module("harness.beyond.preload").serve(sys.argv[1])

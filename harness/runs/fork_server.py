"""Un servidor de corridas de Python: un intérprete que ya arrancó e importó el arnés y, por cada corrida
que se le pide, hace ``fork``. La corrida es un proceso real y propio (su sesión, sus stdin/stdout/stderr,
su directorio, su entorno y sus argumentos), que corre el archivo pedido como ``__main__`` (o un módulo,
como ``python -m``) y muere de verdad; solo se ahorra arrancar el intérprete e importar lo que ya estaba
importado (casi todo el costo de una corrida corta).

    server = Server(env)                     # en quien lanza las corridas
    run = server.spawn(argv, cwd, env, fds)  # argv: [archivo.py, *args] o ["-m", módulo, *args]

Un servidor atiende una corrida a la vez (quien corre varias a la vez usa un servidor por hilo): así
todo proceso que lleve su marca (``SERVER_MARK``, en el entorno con que nació el servidor, que es el que
``/proc/PID/environ`` muestra de cada ``fork`` suyo) es de la corrida en curso, y se puede matar aunque
haya dejado el grupo. Lo genérico de nacer de un fork lo usan también los otros servidores: ``adopt`` y
``exit_code`` el de DBOS de «Más allá» (``harness.beyond.preload``), ``exit_code`` y ``shut_down`` el del
Nivel 2.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import types

# La marca del servidor en su entorno (la heredan en ``/proc`` sus forks, aunque cambien su os.environ).
SERVER_MARK = "HARNESS_RUN_SERVER_MARK"
# Lo que el arnés lee del entorno al importarse: con otro valor, el módulo ya importado mentiría.
IMPORT_TIME = ("AGENT_MAX_TURNS", "AGENT_JITTER_MS")
# Lo que el intérprete lee al arrancar: una corrida que lo cambia necesita otro servidor.
_STARTUP_NAMES = ("LANG", "LC_ALL", "LC_CTYPE", *IMPORT_TIME)
# Lo que se importa una vez, antes de los forks: lo que importa un agente de la lección y el driver de
# la suite. Lo que lee el entorno al importarse (``IMPORT_TIME``) también: un servidor atiende solo
# corridas con los mismos valores que él (``startup_env``).
PRELOAD = (
    "runpy",
    "harness.base_loop",
    "harness.defenses.clients",
    "harness.contract",
    "harness.crash",
    "harness.defenses.durable",
    "harness.errors",
    "harness.defenses.guards",
    "harness.jitter",
    "harness.defenses.replies",
    "harness.runs.launcher",
    "harness.defenses.session",
    "harness.tools",
    "harness.defenses.workdir",
)
MESSAGE = 1 << 20


def startup_env(env):
    """Las variables de ``env`` que el intérprete (o el arnés, al importarse) lee al arrancar."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON") or k in _STARTUP_NAMES}


def program(args):
    """[archivo.py, …] o ["-m", módulo, …] si ``args`` es una corrida de este mismo intérprete que un
    servidor puede hacer; si no (otro programa, un prefijo como strace, otras opciones), None."""
    if len(args) < 2 or args[0] != sys.executable:
        return None
    if args[1] == "-m" and len(args) > 2:
        return list(args[1:])
    return list(args[1:]) if args[1].endswith(".py") and os.path.isfile(args[1]) else None


# —— En la corrida (el hijo del fork) ——


def adopt(fds, cwd, env):
    """Lo que hace de un fork una corrida nueva: sus descriptores 0, 1 y 2, su directorio y su entorno."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)


def exit_code(done):
    """El código de salida de un ``SystemExit``, como lo da el intérprete (un texto va a stderr: 1)."""
    if done.code is None or isinstance(done.code, int):
        return done.code or 0
    print(done.code, file=sys.stderr)
    return 1


def _own_frames(tb):
    """La traza desde el primer marco que no es del servidor ni de runpy: la que daría el intérprete."""
    skip = {os.path.abspath(__file__), os.path.abspath(__import__("runpy").__file__)}
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) in skip:
        tb = tb.tb_next
    return tb


def _execute(argv):
    """Corre ``argv`` como lo haría ``python``: un archivo como ``__main__`` o ``-m`` módulo."""
    if argv[0] == "-m":
        import runpy

        sys.argv = argv[1:]
        runpy._run_module_as_main(argv[1])  # lo mismo que hace ``python -m``
        return
    path = os.path.abspath(argv[0])
    sys.argv, sys.path[0] = list(argv), os.path.dirname(path)
    main = types.ModuleType("__main__")
    main.__file__, main.__builtins__, main.__spec__ = argv[0], __builtins__, None
    sys.modules["__main__"] = main
    with open(path, "rb") as f:
        code = compile(f.read(), argv[0], "exec")
    exec(code, main.__dict__)


def _run(spec, fds, ready, go):
    """La corrida: nunca vuelve al bucle del servidor; devuelve su código (el intérprete termina como
    siempre: atexit, hilos, vaciar stdout) o muere por SIGINT como ``python`` con un Ctrl-C sin atrapar."""
    os.setsid()
    os.close(ready)  # el servidor ya puede decir el pid: la corrida tiene su propio grupo
    os.read(go, 1)  # y empieza cuando quien la pidió ya sabe su pid (aunque después mate al servidor)
    os.close(go)
    adopt(fds, spec["cwd"], spec["env"])
    signal.signal(signal.SIGINT, spec.pop("sigint"))  # la del intérprete al arrancar: el servidor la ignora
    try:
        _execute(spec["argv"])
    except SystemExit as done:
        return exit_code(done)
    except BaseException as err:  # noqa: BLE001 (como el intérprete: la traza a stderr)
        err = err.with_traceback(_own_frames(err.__traceback__))  # la que se imprime es la del error
        sys.excepthook(type(err), err, err.__traceback__)
        if isinstance(err, KeyboardInterrupt):
            sys.stdout.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        return 1
    return 0


# —— El servidor ——


def serve(sock):
    """Atiende pedidos hasta que se cierra el socket; en el hijo de cada fork, devuelve su código."""
    for name in PRELOAD:
        __import__(name)
    # Lo apaga su socket, no un Ctrl-C; cada corrida recibe la que tendría un intérprete recién
    # arrancado con lo que heredó el servidor (el manejador de Python, o SIG_IGN si la heredó ignorada).
    sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        message, fds, _, _ = socket.recv_fds(sock, MESSAGE, 3)
        if not message:
            return 0
        (ready_r, ready_w), (go_r, go_w) = os.pipe(), os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sock.close()
            for fd in (ready_r, go_w):
                os.close(fd)
            return _run({**json.loads(message), "sigint": sigint}, fds, ready_w, go_r)
        for fd in (*fds, ready_w, go_r):
            os.close(fd)
        os.read(ready_r, 1)  # el hijo ya está en su sesión (o murió): se lo puede matar por grupo
        os.close(ready_r)
        sock.send(json.dumps({"pid": pid}).encode())
        os.close(go_w)
        _, status = os.waitpid(pid, 0)
        sock.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())


# —— Quien lanza las corridas ——


def available():
    """¿Hay con qué? (POSIX con ``fork``, sockets que pasan descriptores y ``pidfd``: Linux.)"""
    return hasattr(socket, "send_fds") and hasattr(os, "pidfd_open") and sys.platform.startswith("linux")


def shut_down(sock, process, timeout=10):
    """Apaga un servidor: cierra su socket (sale al leer el fin) y lo espera; si no sale, SIGKILL."""
    sock.close()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Server:
    """Un servidor, arrancado con ``env`` (``startup_env`` de las corridas que hará); ``close`` lo apaga."""

    def __init__(self, env):
        self.mark = os.urandom(16).hex()
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        full = {**env, SERVER_MARK: self.mark, "PYTHONIOENCODING": "utf-8"}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "harness.runs.fork_server", str(theirs.fileno())],
                env=full,
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        finally:
            theirs.close()
        self.marks = (f"{SERVER_MARK}={self.mark}",)

    def spawn(self, argv, cwd, env, fds):
        """Una corrida: ``fds`` son sus stdin, stdout y stderr (se cierran aquí). Un ``Served``."""
        message = json.dumps({"argv": argv, "cwd": cwd, "env": env}).encode()
        try:
            socket.send_fds(self.sock, [message], list(fds))
            reply = self.sock.recv(MESSAGE)
        finally:
            for fd in fds:
                os.close(fd)
        if not reply:
            raise OSError("el servidor de corridas terminó antes de tiempo")
        return Served(self, json.loads(reply)["pid"])

    def close(self):
        shut_down(self.sock, self.process)


class Served:
    """Una corrida del servidor, con lo de ``Popen`` que usa quien la espera: ``pid``, ``poll``,
    ``wait`` y ``returncode``; ``exit_fd`` se puede leer cuando terminó. Si el servidor murió (la
    corrida lo mató), su código es -9: nadie más puede saberlo."""

    def __init__(self, server, pid):
        self.server, self.pid, self.returncode = server, pid, None
        self.exit_fd = server.sock.fileno()

    def poll(self):
        if self.returncode is None:
            self.server.sock.setblocking(False)
            try:
                self._take(self.server.sock.recv(MESSAGE))
            except BlockingIOError:
                pass
            finally:
                self.server.sock.setblocking(True)
        return self.returncode

    def wait(self):
        if self.returncode is None:
            self._take(self.server.sock.recv(MESSAGE))
        return self.returncode

    def _take(self, reply):
        self.returncode = json.loads(reply)["returncode"] if reply else -signal.SIGKILL


if __name__ == "__main__":
    sys.exit(serve(socket.socket(fileno=int(sys.argv[1]))))

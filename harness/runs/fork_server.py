"""El servidor de corridas de Python: un intérprete que ya arrancó e importó lo caro una vez y, por cada
corrida que se le pide, hace ``fork``. La corrida es un proceso real y propio (su sesión, sus
descriptores, su directorio, su entorno y sus argumentos) que corre el archivo pedido como ``__main__``
(o un módulo, como ``python -m``) y muere de verdad; solo se ahorra arrancar el intérprete e importar lo
que ya estaba importado (casi todo el costo de una corrida corta).

    server = Server(env)                     # en quien lanza las corridas
    run = server.spawn(argv, cwd, env, fds)  # argv: [archivo.py, *args] o ["-m", módulo, *args]

Es el único del curso: lo que cambia de un uso a otro son parámetros de ``Server``.

- La suite de conformidad (``harness.runs.containment``): importa el arnés (``PRELOAD``); un servidor
  por hilo y por entorno de arranque (``startup_env``).
- El Nivel 2 de la calificación (sus ganchos viven con lo de instructores, que lo lanza): aislado (``prefix``, como init de
  su espacio de PIDs) y con ``hooks``, el testigo que vigila cada corrida en vez de solo esperarla.
- «Más allá» (``harness.beyond.preload``): importa DBOS, escucha además en un socket con nombre
  (``listen``), al que el proceso que lanzó una persona le pasa su corrida (``relay``), y prepara una
  vez, en un fork desechable (``warm_up``), la base vacía que copian sus corridas.

Un pedido es JSON (argv, cwd, env) con descriptores: los primeros ``fds`` serán los 0, 1, 2… de la
corrida; los demás, de ``supervise``. Se responde el pid y, al terminar, el código de salida (negativo:
la señal que la mató). Mientras corre, «kill» (o que quien la pidió se vaya) la mata. Una conexión
atiende una corrida a la vez; todo proceso con la marca de su servidor (``SERVER_MARK``, en el entorno
con que nació, que es el que ``/proc/PID/environ`` muestra de cada ``fork`` suyo) es de una corrida suya.
"""

import gc
import importlib
import importlib.util
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import types

from harness.contract import JITTER_VAR, MAX_TURNS_VAR

# La marca del servidor en su entorno (la heredan en ``/proc`` sus forks, aunque cambien su os.environ).
SERVER_MARK = "HARNESS_RUN_SERVER_MARK"
# Lo que el arnés lee del entorno al importarse: con otro valor, el módulo ya importado mentiría.
IMPORT_TIME = (MAX_TURNS_VAR, JITTER_VAR)
# Lo que el intérprete lee al arrancar: una corrida que lo cambia necesita otro servidor.
_STARTUP_NAMES = ("LANG", "LC_ALL", "LC_CTYPE", *IMPORT_TIME)
# Lo que se importa una vez, antes de los forks, si no se pide otra cosa: lo que importa un agente de
# la lección y el driver de la suite. Lo que lee el entorno al importarse (``IMPORT_TIME``) también: un
# servidor así atiende solo corridas con los mismos valores que él (``startup_env``).
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
MAX_FDS = 8  # por pedido: los de la corrida y los de ``supervise``
RELAYED = ("SIGINT", "SIGTERM", "SIGHUP")  # lo que ``relay`` le pasa a la corrida

# ¿Es este proceso una corrida nacida de un servidor? (Entonces ``relay`` no la vuelve a pedir.)
_served = False


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


def _adopt(fds, cwd, env):
    """Lo que hace de un fork una corrida nueva: sus descriptores 0, 1, 2…, su directorio, su entorno y
    los sys.stdin/stdout/stderr que Python le daría al arrancar con ese entorno (el del servidor puede
    ser otro)."""
    for target, fd in enumerate(fds):
        if fd != target:
            os.dup2(fd, target)
            os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.stdin = sys.__stdin__ = _stream(0)
    sys.stdout = sys.__stdout__ = _stream(1)
    sys.stderr = sys.__stderr__ = _stream(2)


def _stream(fd):
    """Un stream de texto nuevo sobre ``fd``, con la codificación y el búfer del arranque de Python."""
    encoding = (os.environ.get("PYTHONIOENCODING") or "utf-8").split(":")[0] or "utf-8"
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


def _exit_code(done):
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
    """Corre ``argv`` como lo haría ``python``: un archivo como ``__main__`` o ``-m`` módulo, con la
    carpeta del archivo (o la actual) primera en la ruta de módulos, salvo con ``PYTHONSAFEPATH``."""
    if argv[0] == "-m":
        import runpy

        sys.argv = argv[1:]
        if not sys.flags.safe_path:
            sys.path[0] = os.getcwd()
        sys.modules.pop(argv[1], None)  # si ya estaba importado, corre como __main__ igual que con python
        runpy._run_module_as_main(argv[1])  # lo mismo que hace ``python -m``
        return
    path = os.path.abspath(argv[0])
    sys.argv = list(argv)
    if not sys.flags.safe_path:
        sys.path[0] = os.path.dirname(path)
    main = types.ModuleType("__main__")
    main.__file__, main.__builtins__, main.__spec__ = argv[0], __builtins__, None
    sys.modules["__main__"] = main
    with open(path, "rb") as f:
        code = compile(f.read(), argv[0], "exec")
    exec(code, main.__dict__)


def _run(request, fds, ready, go, sigint):
    """La corrida: nunca vuelve al bucle del servidor; devuelve su código (el intérprete termina como
    siempre: atexit, hilos, vaciar stdout) o muere por SIGINT como ``python`` con un Ctrl-C sin atrapar."""
    global _served
    _served = True
    os.setsid()
    os.close(ready)  # el servidor ya puede decir el pid: la corrida tiene su propio grupo
    os.read(go, 1)  # y empieza cuando quien la pidió ya sabe su pid (aunque después mate al servidor)
    os.close(go)
    _adopt(fds, request["cwd"], request["env"])
    signal.signal(signal.SIGINT, sigint)  # la del intérprete al arrancar: el servidor la ignora
    try:
        _execute(request["argv"])
    except SystemExit as done:
        return _exit_code(done)
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


def main(fd, config):
    """El proceso del servidor (lo arranca ``Server``): atiende hasta que se cierra su socket ``fd``; en
    el hijo de cada fork, devuelve el código de su corrida."""
    config = json.loads(config)
    control = socket.socket(fileno=int(fd))
    # Escucha antes de importar: quien llega mientras tanto espera ese import, en vez de hacer el suyo.
    listener = _listen(config["listen"]) if config["listen"] else None
    for name in config["preload"]:
        importlib.import_module(name)
    hooks = _load_hooks(config["hooks"])
    if hasattr(hooks, "start"):
        hooks.start()
    if config["warm_up"]:
        _warm_up(*config["warm_up"])
    # Lo importado queda fuera del recolector de basura: ninguna corrida lo recorre, ni al recolectar ni
    # al terminar (con DBOS, un décimo de segundo por corrida), y sus páginas siguen compartidas.
    gc.freeze()
    # Lo apaga su socket, no un Ctrl-C; cada corrida recibe la que tendría un intérprete recién
    # arrancado con lo que heredó el servidor (el manejador de Python, o SIG_IGN si la heredó ignorada).
    sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
    code = _accept(listener, control, hooks, sigint) if listener else _attend(control, hooks, sigint)
    return 0 if code is None else code


def _listen(path):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(16)
    return listener


def _load_hooks(path):
    """Los ganchos del archivo ``path`` (un .py suelto: puede venir prestado a un aislamiento donde su
    paquete no está), o ninguno."""
    if not path:
        return types.SimpleNamespace()
    spec = importlib.util.spec_from_file_location("fork_server_hooks", path)
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def _warm_up(module, function, *args):
    """``module.function(*args)`` una vez, en un fork desechable que el servidor espera: lo que deja
    (hilos, una base abierta) muere con él y los forks del servidor nacen limpios. Si falla, nada: quien
    usa lo que prepara tiene que poder seguir sin ello."""
    pid = os.fork()
    if pid == 0:
        try:
            getattr(importlib.import_module(module), function)(*args)
        except BaseException:  # noqa: BLE001 (sin lo que prepara, cada corrida lo hace ella misma)
            os._exit(1)
        os._exit(0)
    os.waitpid(pid, 0)


def _accept(listener, control, hooks, sigint):
    """Con socket con nombre: cada conexión la atiende un fork propio del servidor (varias corridas a la
    vez); termina cuando se cierra ``control``. None, o en el hijo de cada fork, el código de su corrida."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # cada encargado se recoge solo
    while True:
        if control in select.select([listener, control], [], [])[0]:
            return None
        conn, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            control.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # para esperar a su corrida
            code = _attend(conn, hooks, sigint)
            if code is None:
                os._exit(0)
            return code
        conn.close()


def _attend(conn, hooks, sigint):
    """Las corridas que pide quien está al otro lado de ``conn``, una tras otra, hasta que cierra: None;
    en el hijo de cada fork, el código de su corrida."""
    while True:
        message, fds, _, _ = socket.recv_fds(conn, MESSAGE, MAX_FDS)
        if not message:
            return None
        if not fds:
            continue  # un «kill» que llegó cuando su corrida ya había terminado
        request = json.loads(message)
        run_fds, hook_fds = fds[: request["fds"]], fds[request["fds"] :]
        (ready_r, ready_w), (go_r, go_w) = os.pipe(), os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            conn.close()
            for fd in (ready_r, go_w, *hook_fds):
                os.close(fd)
            return _run(request, run_fds, ready_w, go_r, sigint)
        for fd in (*run_fds, ready_w, go_r):
            os.close(fd)
        _oversee(conn, pid, ready_r, go_w, getattr(hooks, "supervise", _watch), request, hook_fds)


def _oversee(conn, pid, ready, go, supervise, request, hook_fds):
    """Del lado del servidor: dice el pid cuando la corrida ya está en su sesión, la deja empezar, la
    vigila hasta que termina (``supervise``) y dice su código."""
    os.read(ready, 1)  # el hijo ya está en su sesión (o murió): se lo puede matar por grupo
    os.close(ready)
    _send(conn, {"pid": pid})
    os.close(go)
    supervise(conn, pid, request, hook_fds)
    _, status = os.waitpid(pid, 0)
    _reap_orphans()
    _send(conn, {"returncode": os.waitstatus_to_exitcode(status)})


def _send(conn, reply):
    try:
        conn.send(json.dumps(reply).encode())
    except OSError:  # quien la pidió ya no está (y la corrida, si sigue, muere: ``_watch``)
        pass


def _watch(conn, pid, _request, fds):
    """Sin ganchos: hasta que la corrida termina; si quien la pidió dice «kill» o se va (sin él, nadie
    espera su código: como si hubiera muerto el proceso que la pidió), muere su grupo."""
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)  # se puede leer cuando la corrida termina
    try:
        while pidfd not in select.select([conn, pidfd], [], [])[0]:
            if conn.recv(16) in (b"", b"kill"):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                return
    finally:
        os.close(pidfd)


def _reap_orphans():
    """Recoge a los hijos que ya murieron: huérfanos de la corrida que este proceso adoptó (el init de
    un aislamiento los adopta a todos)."""
    while True:
        try:
            found, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not found:
            return


# —— Quien pide las corridas ——


def available():
    """¿Hay con qué? (POSIX con ``fork``, sockets que pasan descriptores y ``pidfd``: Linux.)"""
    return hasattr(socket, "send_fds") and hasattr(os, "pidfd_open") and sys.platform.startswith("linux")


class Server:
    """Un servidor arrancado con ``env``; ``close`` lo apaga. Lo que cambia de un uso a otro:

    - ``preload``: los módulos que importa una vez, antes de los forks;
    - ``listen``: la ruta de un socket donde también escucha (``relay``), además del de ``spawn``;
    - ``warm_up``: (módulo, función, *args) que corre una vez, en un fork desechable, antes de atender;
    - ``hooks``: la ruta de un .py con ``start()`` (una vez, en el servidor) y ``supervise(conn, pid,
      request, fds)`` (por corrida, en vez de solo esperarla; termina cuando ella terminó o la mató);
    - ``prefix``: el comando que envuelve al servidor (un aislamiento)."""

    def __init__(self, env, *, preload=PRELOAD, listen=None, warm_up=None, hooks=None, prefix=()):
        self.mark = os.urandom(16).hex()
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {"preload": list(preload), "listen": listen, "warm_up": warm_up, "hooks": hooks}
        command = [*prefix, sys.executable, "-m", "harness.runs.fork_server", str(theirs.fileno())]
        try:
            # En su propia sesión: ni un Ctrl-C de la terminal ni quien apaga el grupo de quien lo
            # arrancó (ipykernel) lo alcanzan. Lo apaga su socket.
            self.process = subprocess.Popen(
                [*command, json.dumps(config)],
                env={**env, SERVER_MARK: self.mark},
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except BaseException:
            self.sock.close()
            raise
        finally:
            theirs.close()
        self.marks = (f"{SERVER_MARK}={self.mark}",)

    def spawn(self, argv, cwd, env, fds, hook_fds=()):
        """Una corrida (un ``Run``): ``fds`` serán sus 0, 1, 2… (se cierran aquí); ``hook_fds`` van a
        ``supervise`` (siguen siendo de quien llama)."""
        request = {"argv": argv, "cwd": cwd, "env": env, "fds": len(fds)}
        try:
            return Run(self.sock, _ask(self.sock, request, [*fds, *hook_fds]))
        finally:
            for fd in fds:
                os.close(fd)

    def close(self, timeout=10):
        """Cierra su socket (sale al leer el fin) y lo espera; si no sale, SIGKILL."""
        self.sock.close()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _ask(sock, request, fds):
    """Manda el pedido y devuelve el pid de la corrida."""
    socket.send_fds(sock, [json.dumps(request).encode()], list(fds))
    reply = sock.recv(MESSAGE)
    if not reply:
        raise OSError("el servidor de corridas terminó antes de tiempo")
    return json.loads(reply)["pid"]


class Run:
    """Una corrida del servidor, con lo de ``Popen`` que usa quien la espera: ``pid``, ``poll``,
    ``wait``, ``kill`` y ``returncode``; ``exit_fd`` se puede leer cuando terminó. Si el servidor
    murió (la corrida lo mató), su código es -9: nadie más puede saberlo."""

    args = ("servidor de corridas",)  # no es sys.executable: se mata con ``kill``, como un aislado

    def __init__(self, sock, pid):
        self.sock, self.pid, self.returncode = sock, pid, None
        self.exit_fd = sock.fileno()

    def poll(self):
        if self.returncode is None:
            self.sock.setblocking(False)
            try:
                self._take(self.sock.recv(MESSAGE))
            except BlockingIOError:
                pass
            finally:
                self.sock.setblocking(True)
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            self.sock.settimeout(timeout)
            try:
                reply = self.sock.recv(MESSAGE)
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args[0], timeout) from None
            finally:
                self.sock.settimeout(None)
            self._take(reply)
        return self.returncode

    def kill(self):
        if self.returncode is None:
            try:
                self.sock.send(b"kill")
            except OSError:  # el servidor ya no está: la corrida tampoco
                pass

    def _take(self, reply):
        self.returncode = json.loads(reply)["returncode"] if reply else -signal.SIGKILL


def relay(path, argv, held=None):
    """En el proceso que lanzó una persona: si un servidor escucha en ``path``, la corrida de ``argv``
    la hace un fork suyo, con los 0, 1 y 2, el directorio y el entorno de este proceso; este le reenvía
    Ctrl-C, SIGTERM y SIGHUP (y la que ``held()`` dice que llegó antes) y sale como ella: con su código
    o muerto por la misma señal. Sin servidor (o si este proceso ya es una corrida suya), vuelve."""
    if _served:
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "fds": 3}
    try:
        sock.connect(path)
        run = Run(sock, _ask(sock, request, [0, 1, 2]))
    except (OSError, ValueError):  # el servidor no está o no responde: la corrida de siempre
        sock.close()
        return
    for name in RELAYED:  # la señal es para la corrida; este proceso solo espera su código
        signal.signal(getattr(signal, name), lambda signum, _frame: _forward(run.pid, signum))
    if held and held():
        _forward(run.pid, held())
    _exit_like(run.wait())


def _forward(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


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


if __name__ == "__main__":
    # Desde el módulo importado, no desde ``__main__``: una corrida que importa este módulo (``relay``)
    # ve el estado que el servidor le dejó (``_served``).
    from harness.runs.fork_server import main as serve

    sys.exit(serve(*sys.argv[1:]))

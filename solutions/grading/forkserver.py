"""Un servidor de corridas para las comprobaciones del Nivel 2: nacen bifurcadas, no desde cero, y
las observa un testigo que no es la corrida.

Cada comprobación corre el código de la entrega varias veces, cada vez en un proceso nuevo que muere
con SIGKILL en el momento pedido. Arrancar un intérprete aislado por corrida es casi todo su costo;
aquí arranca uno por comprobación (aislado con ``sandbox.prefix``, con el arnés ya importado) y cada
corrida es un ``fork`` suyo: un proceso real, en su propia sesión, que recibe sus tuberías por el
socket y corre lo mismo que ``python -m harness.runs.kill_at_moment``.

El servidor es además el testigo de cada corrida (``kill_at_moment.Witness``): las herramientas, la
escritura durable y ``crash_point`` de la corrida se le piden a él por un socket y él las hace. Antes
de cada una congela todos los procesos de la corrida (SIGSTOP a todos, y espera a verlos detenidos);
después avisa a quien lanzó la corrida (por una tubería que la corrida no tiene) y espera su decisión:
si es el momento, todo lo que hay en el aislamiento muere congelado, de una vez (``kill(-1)``, solo
dentro de su propio espacio de PIDs), antes de que nadie lea el disco; si no, todo sigue. El momento
no llega nunca a este servidor ni a la corrida: lo sabe solo quien la lanzó. Este proceso no se deja
inspeccionar (``PR_SET_DUMPABLE`` en 0): la corrida no puede leer su memoria ni engancharse a él; y es
el init del aislamiento (pid 1, ``--as-pid-1``): la corrida no puede matarlo ni detenerlo, y él recoge
a los huérfanos.

Antes del ``fork`` se importa lo que un proceso nuevo ya tendría antes de instalar sus ganchos
(``harness.runs.kill_at_moment``) y los módulos del arnés que el código de la entrega usa, que no guardan
copia de lo que los ganchos reemplazan (``crash_point``, ``write_durable`` y las herramientas se buscan
en su módulo al llamarlos). El agente se carga en cada corrida, después de los ganchos.
"""

import ctypes
import functools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
import traceback

import harness.base_loop  # noqa: F401 (ver arriba: se importan una vez, antes del fork)
import harness.notebook.exercise_feedback  # noqa: F401
from harness.runs import kill_at_moment
from harness.runs.fork_server import exit_code, shut_down

MESSAGE = 1 << 20  # un pedido: la especificación de la corrida, con el código de la entrega
FDS = 5  # por corrida: el valor al azar, los avisos, stdout, stderr y las decisiones
# Lo que tarda como mucho en morir lo que quedó de una corrida (un proceso en espera de disco muere
# al volver); no se espera para siempre.
KILL_LIMIT_S = 10


# —— Dentro del aislamiento ——


def serve(sock, sandboxed):
    while True:
        message, fds, _, _ = socket.recv_fds(sock, MESSAGE, FDS)
        if not message:
            return  # quien lo lanzó cerró el socket: se terminaron las corridas
        if not fds:
            continue  # un «kill» que llegó cuando la corrida ya había terminado
        spec = json.loads(message)
        nonce_fd, events_fd, out, err, decide_fd = fds
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            for fd in (nonce_fd, events_fd, decide_fd):
                os.close(fd)
            mine.close()
            _run(sock, spec, theirs.detach(), out, err)
        theirs.close()
        os.close(out)
        os.close(err)
        sock.send(json.dumps({"pid": pid}).encode())
        nonce = os.read(nonce_fd, 64).decode()
        os.close(nonce_fd)
        with os.fdopen(events_fd, "w", buffering=1) as events, os.fdopen(decide_fd, "rb", 0) as decide:
            report = functools.partial(_report, events, decide, nonce)
            witness = kill_at_moment.Witness(spec["env"])
            code = _supervise(sock, pid, sandboxed, mine, witness, report)
        mine.close()
        sock.send(json.dumps({"returncode": code}).encode())


def _report(events, decide, nonce, kind, value):
    """Avisa a quien lanzó la corrida y espera su decisión: True para seguir, False si es el momento."""
    try:
        events.write(f"{nonce} {json.dumps([kind, value], ensure_ascii=False)}\n")
    except BrokenPipeError:
        return False
    return decide.read(1) == b"c"


def _run(sock, spec, witness_fd, out, err):
    """El proceso de una corrida: nunca vuelve al bucle del servidor."""
    code = 1
    try:
        sock.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # la del servidor es ignorarla
        os.setsid()  # su propia sesión: la muerte alcanza a todo su grupo
        spec["witness_fd"] = witness_fd
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        module_path = os.environ.get("PYTHONPATH")  # la del aislamiento: dónde está ``harness``
        os.environ.clear()
        os.environ.update(spec.pop("env"))
        if module_path:
            os.environ["PYTHONPATH"] = module_path
        sys.path[0] = spec["workdir"]  # como ``python -m`` desde la carpeta de la corrida
        kill_at_moment._child(spec)
        code = 0
    except SystemExit as done:
        code = exit_code(done)
    except BaseException:  # noqa: BLE001 (como el intérprete: la traza a stderr y código 1)
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _supervise(sock, pid, sandboxed, rpc, witness, report):
    """Atiende los pedidos de la corrida al testigo hasta que termina, se pide matarla o llega el
    momento; su código de salida, como ``Popen``."""
    pidfd = os.pidfd_open(pid)  # se puede leer cuando la corrida termina
    watched = [sock, pidfd, rpc]
    try:
        while True:
            ready = select.select(watched, [], [])[0]
            if pidfd in ready:
                break
            if sock in ready and sock.recv(16) in (b"", b"kill"):
                _kill_run(pid, sandboxed)
                break
            if rpc in ready and not _witness(rpc, pid, sandboxed, witness, report, watched):
                break
    finally:
        os.close(pidfd)
    _kill_run(pid, sandboxed)  # lo que la corrida dejó vivo (un proceso separado, por ejemplo)
    _, status = os.waitpid(pid, 0)
    _reap_orphans()
    return os.waitstatus_to_exitcode(status)


def _reap_orphans():
    """Como init del aislamiento, recoge a los huérfanos de la corrida que ya murieron."""
    while True:
        try:
            found, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not found:
            return


def _witness(rpc, pid, sandboxed, witness, report, watched):
    """Un pedido de la corrida: congelar todo, hacerlo, avisar; False si era el momento (todo murió)."""
    request = rpc.recv(kill_at_moment.WITNESS_MESSAGE)
    if not request:
        watched.remove(rpc)  # nadie de la corrida puede pedir más
        return True
    _signal_run(pid, sandboxed, signal.SIGSTOP)
    _await_stopped(sandboxed)
    reply, events = witness.perform(json.loads(request))
    if not all(report(kind, value) for kind, value in events):
        _kill_run(pid, sandboxed)  # congelados: nada de la corrida actúa entre el aviso y la muerte
        return False
    _signal_run(pid, sandboxed, signal.SIGCONT)
    try:
        rpc.send(json.dumps(reply, ensure_ascii=False).encode())
    except OSError:
        pass  # la corrida ya murió
    return True


def _signal_run(pid, sandboxed, sig):
    """``sig`` a todo proceso del aislamiento salvo su init y este (sin aislamiento, al grupo de la
    corrida). ``kill(-1)`` es atómico: ningún proceso nace a mitad de camino."""
    try:
        if sandboxed:
            os.kill(-1, sig)
        else:
            os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def _others():
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]


def _state(pid):
    """La letra de estado de ``pid`` en /proc ('X' si ya no está)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return "X"


def _await_stopped(sandboxed):
    """Hasta que ningún proceso del aislamiento pueda correr código propio: detenido (``T``, ``t``),
    muerto, o dentro del núcleo sin poder ser interrumpido (``D``: un ``vfork`` que espera a su hijo,
    una escritura a disco; al volver, lo primero es la detención pendiente). SIGSTOP llega a cada uno
    cuando vuelve a correr, no al enviarse. Sin aislamiento no hay cómo verlos a todos."""
    if not sandboxed:
        return
    deadline = time.monotonic() + KILL_LIMIT_S  # red de seguridad: nunca colgar la calificación
    while [p for p in _others() if _state(p) not in "tTDZX"] and time.monotonic() < deadline:
        os.sched_yield()


def _kill_run(pid, sandboxed):
    _signal_run(pid, sandboxed, signal.SIGKILL)
    if sandboxed:
        _kill_everything_else()


def _kill_everything_else():
    """SIGKILL a todo proceso del aislamiento salvo su init (1) y este, y espera (con un pidfd por
    proceso, sin dormir) a que muera cada uno."""
    deadline = time.monotonic() + KILL_LIMIT_S
    while (alive := [p for p in _others() if _state(p) not in "ZX"]) and time.monotonic() < deadline:
        _signal_run(None, True, signal.SIGKILL)
        for pid in alive:
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                select.select([pidfd], [], [], max(0, deadline - time.monotonic()))
            finally:
                os.close(pidfd)


# —— Quien lo lanza ——


@functools.lru_cache(maxsize=1)
def available():
    """¿Hay con qué? (Linux: sockets de paquetes para pasar tuberías y ``pidfd`` para esperar cada
    corrida.) Si no, cada corrida arranca su propio intérprete, como antes."""
    if not (sys.platform.startswith("linux") and hasattr(socket, "SOCK_SEQPACKET")):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):  # Python o núcleo sin pidfd
        return False
    return True


class ForkServer:
    """El servidor, lanzado con ``prefix`` (el aislamiento) y ``cwd``; ``launch`` sirve de ``launch`` para
    ``run_and_kill``, y a cada corrida llegan solo las variables de entorno que ``passes`` deja pasar.
    Se usa con ``with``: al salir, el servidor y lo que quede de él mueren."""

    def __init__(self, prefix, cwd, passes=None, script=None):
        """``script``: la ruta de este archivo como la ve el aislamiento (si se lo prestó en otro lugar)."""
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Solo dentro de su propio espacio de PIDs puede matar «todo lo demás» sin tocar esta máquina.
        self.passes = passes
        mode = "aislado" if prefix else "libre"
        script = script or os.path.abspath(__file__)
        command = [*prefix, sys.executable, script, str(theirs.fileno()), mode]
        command.append(os.readlink("/proc/self/ns/pid") if os.path.exists("/proc/self/ns/pid") else "")
        # Aislado, con tope de procesos para todas sus corridas (un grupo de control propio). Se importa
        # aquí: este archivo corre también dentro del aislamiento, donde ``solutions`` no está.
        from solutions.grading import sandbox

        self.release_group = sandbox.release_group
        self.group = sandbox.process_group() if prefix else None
        command = sandbox.in_group(self.group, command)
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"}
        try:
            self.process = subprocess.Popen(command, cwd=cwd, env=env, pass_fds=(theirs.fileno(),))
        except BaseException:
            self.release_group(self.group)
            self.sock.close()
            raise
        finally:
            theirs.close()

    def launch(self, spec, env):
        # El momento de matar no sale de aquí: lo decide ``run_and_kill`` con cada aviso del testigo.
        hidden = ("stop_at", "nonce_fd", "events_fd", "decide_fd")
        fds = [spec["nonce_fd"], spec["events_fd"]]
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if self.passes:  # lo que no pasa el aislamiento tampoco llega a la corrida
            env = {name: value for name, value in env.items() if self.passes(name)}
        shown = {key: value for key, value in spec.items() if key not in hidden}
        message = json.dumps({**shown, "env": env}).encode()
        socket.send_fds(self.sock, [message], [*fds, out_w, err_w, spec["decide_fd"]])
        os.close(out_w)
        os.close(err_w)
        reply = self.sock.recv(MESSAGE)
        if not reply:
            raise RuntimeError("el servidor de corridas terminó antes de tiempo")
        return ServedRun(self.sock, json.loads(reply)["pid"], out_r, err_r)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shut_down(self.sock, self.process, timeout=5)
        self.release_group(self.group)


class ServedRun:
    """Una corrida del servidor con la interfaz de ``Popen`` que usa ``run_and_kill``."""

    args = ("servidor de corridas",)  # no es sys.executable: se mata con kill(), como un aislado
    witnessed = True  # sus avisos los da el testigo y esperan la decisión de ``run_and_kill``

    def __init__(self, sock, pid, out_r, err_r):
        self.sock, self.pid, self.returncode = sock, pid, None
        self.stdout, self.stderr = os.fdopen(out_r, "rb", buffering=0), os.fdopen(err_r, "rb", buffering=0)

    def kill(self):
        if self.returncode is None:
            self.sock.send(b"kill")

    def wait(self, timeout=None):
        if self.returncode is None:
            self.sock.settimeout(timeout)
            try:
                reply = self.sock.recv(MESSAGE)
            except TimeoutError:
                raise subprocess.TimeoutExpired("servidor de corridas", timeout) from None
            finally:
                self.sock.settimeout(None)
            if not reply:
                raise RuntimeError("el servidor de corridas terminó antes de tiempo")
            self.returncode = json.loads(reply)["returncode"]
        return self.returncode


def _undumpable():
    """Que ningún proceso de la corrida (mismo usuario, sin capacidades) pueda leer la memoria de este
    ni engancharse a él con ptrace."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def main(fd, mode, parent_namespace):
    _undumpable()
    # Como init del aislamiento (pid 1), el núcleo ya descarta SIGKILL y SIGSTOP de la corrida; SIGINT
    # tiene el manejador de Python, y se ignora.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=int(fd))
    own = os.readlink("/proc/self/ns/pid") if os.path.exists("/proc/self/ns/pid") else ""
    serve(sock, sandboxed=mode == "aislado" and own != parent_namespace and own != "")


if __name__ == "__main__":
    main(*sys.argv[1:])

"""Un servidor de corridas para las comprobaciones del Nivel 2: nacen bifurcadas, no desde cero.

Cada comprobación corre el código de la entrega varias veces, cada vez en un proceso nuevo que muere
con SIGKILL en el momento pedido. Arrancar un intérprete aislado por corrida es casi todo su costo;
aquí arranca uno por comprobación (aislado con ``sandbox.prefix``, con el arnés ya importado) y cada
corrida es un ``fork`` suyo: un proceso real, en su propia sesión, que recibe sus tuberías por el
socket y corre lo mismo que ``python -m harness.kill_at_moment``. Al terminar cada corrida el
servidor mata todo lo demás que haya en su aislamiento (``kill(-1)``, solo dentro de su propio
espacio de PIDs), así que nada de una corrida sobrevive para tocar la siguiente.

Antes del ``fork`` se importa lo que un proceso nuevo ya tendría antes de instalar sus ganchos
(``harness.kill_at_moment``) y los módulos del arnés que el código de la entrega usa, que no guardan
copia de lo que los ganchos reemplazan (``crash_point``, ``write_durable`` y las herramientas se buscan
en su módulo al llamarlos). El agente se carga en cada corrida, después de los ganchos.
"""

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
import harness.exercise_feedback  # noqa: F401
from harness import kill_at_moment

MESSAGE = 1 << 20  # un pedido: la especificación de la corrida, con el código de la entrega
FDS = 4  # por corrida: el valor al azar, los avisos, stdout y stderr


# —— Dentro del aislamiento ——


def serve(sock, sandboxed):
    while True:
        message, fds, _, _ = socket.recv_fds(sock, MESSAGE, FDS)
        if not message:
            return  # quien lo lanzó cerró el socket: se terminaron las corridas
        if not fds:
            continue  # un «kill» que llegó cuando la corrida ya había terminado
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _run(sock, json.loads(message), fds)
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"pid": pid}).encode())
        sock.send(json.dumps({"returncode": _supervise(sock, pid, sandboxed)}).encode())


def _run(sock, spec, fds):
    """El proceso de una corrida: nunca vuelve al bucle del servidor."""
    code = 1
    try:
        sock.close()
        os.setsid()  # su propia sesión: la muerte alcanza a todo su grupo
        spec["nonce_fd"], spec["events_fd"], out, err = fds
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        os.environ.clear()
        os.environ.update(spec.pop("env"))
        sys.path[0] = spec["workdir"]  # como ``python -m`` desde la carpeta de la corrida
        kill_at_moment._child(spec)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (done.code is not None)
        if isinstance(done.code, str):
            print(done.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 (como el intérprete: la traza a stderr y código 1)
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _supervise(sock, pid, sandboxed):
    """Espera a que la corrida termine o a que pidan matarla; su código de salida, como ``Popen``."""
    pidfd = os.pidfd_open(pid)  # se puede leer cuando la corrida termina
    try:
        while pidfd not in select.select([sock, pidfd], [], [])[0]:
            if sock.recv(16) in (b"", b"kill"):
                os.killpg(pid, signal.SIGKILL)
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    _kill_run(pid, sandboxed)  # lo que la corrida dejó vivo (un proceso separado, por ejemplo)
    return os.waitstatus_to_exitcode(status)


def _kill_run(pid, sandboxed):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if sandboxed:
        _kill_everything_else()


def _kill_everything_else():
    """SIGKILL a todo proceso del aislamiento salvo su init (1) y este, hasta que no quede ninguno."""
    deadline = time.monotonic() + 10  # un proceso en espera de disco muere al volver; no para siempre
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
        if not others:
            return
        time.sleep(0.001)


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

    def __init__(self, prefix, cwd, passes=None):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Solo dentro de su propio espacio de PIDs puede matar «todo lo demás» sin tocar esta máquina.
        self.passes = passes
        mode = "aislado" if prefix else "libre"
        command = [*prefix, sys.executable, os.path.abspath(__file__), str(theirs.fileno()), mode]
        command.append(os.readlink("/proc/self/ns/pid") if os.path.exists("/proc/self/ns/pid") else "")
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, cwd=cwd, env=env, pass_fds=(theirs.fileno(),))
        theirs.close()

    def launch(self, spec, env):
        fds = [spec["nonce_fd"], spec["events_fd"]]
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if self.passes:  # lo que no pasa el aislamiento tampoco llega a la corrida
            env = {name: value for name, value in env.items() if self.passes(name)}
        message = json.dumps({**spec, "env": env}).encode()
        socket.send_fds(self.sock, [message], [*fds, out_w, err_w])
        os.close(out_w)
        os.close(err_w)
        reply = self.sock.recv(MESSAGE)
        if not reply:
            raise RuntimeError("el servidor de corridas terminó antes de tiempo")
        return ServedRun(self.sock, json.loads(reply)["pid"], out_r, err_r)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ServedRun:
    """Una corrida del servidor con la interfaz de ``Popen`` que usa ``run_and_kill``."""

    args = ("servidor de corridas",)  # no es sys.executable: se mata con kill(), como un aislado

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


def main(fd, mode, parent_namespace):
    sock = socket.socket(fileno=int(fd))
    own = os.readlink("/proc/self/ns/pid") if os.path.exists("/proc/self/ns/pid") else ""
    serve(sock, sandboxed=mode == "aislado" and own != parent_namespace and own != "")


if __name__ == "__main__":
    main(*sys.argv[1:])

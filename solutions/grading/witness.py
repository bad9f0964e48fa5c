"""El testigo de las corridas del Nivel 2: los ganchos del servidor de corridas (``harness.runs.fork_server``)
con que quien califica corre el código de cada entrega, y cómo se le pide una corrida (``launch``).

Cada comprobación corre el código de la entrega varias veces, cada vez en un proceso nuevo que muere
con SIGKILL en el momento pedido. El servidor arranca uno por comprobación, aislado (``sandbox.prefix``)
y con el arnés ya importado (``PRELOAD``); cada corrida es un ``fork`` suyo que corre ``python -m
harness.runs.kill_at_moment``, con el socket del testigo en su descriptor 3.

El testigo (``supervise``, en el servidor) hace lo que la corrida le pide por ese socket (las
herramientas, la escritura durable y ``crash_point``: ``kill_at_moment.Witness``). Antes de cada pedido
congela todos los procesos de la corrida (SIGSTOP a todos, y espera a verlos detenidos); después avisa
a quien lanzó la corrida (por una tubería que la corrida no tiene) y espera su decisión: si es el
momento, todo lo que hay en el aislamiento muere congelado, de una vez (``kill(-1)``, solo dentro de
su propio espacio de PIDs), antes de que nadie lea el disco; si no, todo sigue. El momento no llega
nunca al servidor ni a la corrida: lo sabe solo quien la lanzó. El servidor no se deja inspeccionar
(``start``: ``PR_SET_DUMPABLE`` en 0): la corrida no puede leer su memoria ni engancharse a él; y es el
init del aislamiento (pid 1): la corrida no puede matarlo ni detenerlo, y él recoge a los huérfanos.

Este archivo se presta al aislamiento, donde ``solutions`` no está: importa solo del arnés, y no lanza
ningún proceso (los forks los hace el servidor).
"""

import ctypes
import functools
import json
import os
import select
import signal
import socket
import time

from harness.runs import kill_at_moment

# Lo que el servidor importa antes de los forks: lo que un proceso nuevo ya tendría antes de instalar
# sus ganchos (``kill_at_moment``) y los módulos del arnés que el código de la entrega usa, que no
# guardan copia de lo que los ganchos reemplazan (``crash_point``, ``write_durable`` y las herramientas
# se buscan en su módulo al llamarlos). El agente se carga en cada corrida, después de los ganchos.
PRELOAD = ("harness.base_loop", "harness.notebook.exercise_feedback", "harness.runs.kill_at_moment")
# Lo que tarda como mucho en morir lo que quedó de una corrida (un proceso en espera de disco muere
# al volver); no se espera para siempre.
KILL_LIMIT_S = 10
WITNESS_FD = 3  # el socket del testigo, en la corrida
SPEC_FILE = ".ejecucion.json"  # lo que ``kill_at_moment`` corre, en la carpeta de la corrida


# —— Quien califica ——


def launch(server, run_env, spec, env):
    """``launch`` de ``run_and_kill``: la corrida nace de ``server`` con el entorno ``run_env(env)``. El
    valor al azar, los avisos y las decisiones van al testigo, no a ella; el momento no sale de aquí."""
    hidden = ("stop_at", "nonce_fd", "events_fd", "decide_fd")
    path = os.path.join(spec["workdir"], SPEC_FILE)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({**{k: v for k, v in spec.items() if k not in hidden}, "witness_fd": WITNESS_FD}, f)
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fds = [os.open(os.devnull, os.O_RDONLY), out_w, err_w, theirs.detach()]
    argv = ["-m", "harness.runs.kill_at_moment", path]
    with mine:
        hook_fds = [mine.fileno(), spec["nonce_fd"], spec["events_fd"], spec["decide_fd"]]
        run = server.spawn(argv, spec["workdir"], run_env(env), fds, hook_fds)
    run.stdout, run.stderr = os.fdopen(out_r, "rb", buffering=0), os.fdopen(err_r, "rb", buffering=0)
    run.witnessed = True  # sus avisos los da el testigo y esperan la decisión de ``run_and_kill``
    return run


# —— En el servidor ——


def start():
    """Que ningún proceso de la corrida (mismo usuario, sin capacidades) pueda leer la memoria del
    servidor ni engancharse a él con ptrace."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def supervise(conn, pid, request, fds):
    """Atiende los pedidos de la corrida al testigo hasta que termina, quien la pidió dice «kill» o se
    va, o llega el momento; al volver, nada de la corrida sigue vivo."""
    rpc_fd, nonce_fd, events_fd, decide_fd = fds
    nonce = os.read(nonce_fd, 64).decode()
    os.close(nonce_fd)
    with (
        socket.socket(fileno=rpc_fd) as rpc,
        os.fdopen(events_fd, "w", buffering=1) as events,
        os.fdopen(decide_fd, "rb", 0) as decide,
    ):
        report = functools.partial(_report, events, decide, nonce)
        _watch(conn, pid, rpc, kill_at_moment.Witness(request["env"]), report)
    _kill_run(pid)  # lo que la corrida dejó vivo (un proceso separado, por ejemplo)


def _watch(conn, pid, rpc, witness, report):
    pidfd = os.pidfd_open(pid)  # se puede leer cuando la corrida termina
    watched = [conn, pidfd, rpc]
    try:
        while True:
            ready = select.select(watched, [], [])[0]
            if pidfd in ready:
                return
            if conn in ready and conn.recv(16) in (b"", b"kill"):
                _kill_run(pid)
                return
            if rpc in ready and not _witness(rpc, pid, witness, report, watched):
                return
    finally:
        os.close(pidfd)


def _report(events, decide, nonce, kind, value):
    """Avisa a quien lanzó la corrida y espera su decisión: True para seguir, False si es el momento."""
    try:
        events.write(f"{nonce} {json.dumps([kind, value], ensure_ascii=False)}\n")
    except BrokenPipeError:
        return False
    return decide.read(1) == b"c"


def _witness(rpc, pid, witness, report, watched):
    """Un pedido de la corrida: congelar todo, hacerlo, avisar; False si era el momento (todo murió)."""
    request = rpc.recv(kill_at_moment.WITNESS_MESSAGE)
    if not request:
        watched.remove(rpc)  # nadie de la corrida puede pedir más
        return True
    _signal_run(pid, signal.SIGSTOP)
    _await_stopped()
    reply, events = witness.perform(json.loads(request))
    if not all(report(kind, value) for kind, value in events):
        _kill_run(pid)  # congelados: nada de la corrida actúa entre el aviso y la muerte
        return False
    _signal_run(pid, signal.SIGCONT)
    try:
        rpc.send(json.dumps(reply, ensure_ascii=False).encode())
    except OSError:
        pass  # la corrida ya murió
    return True


def _sandboxed():
    """¿Es el servidor el init de su propio espacio de PIDs (aislado)? Solo ahí «todos los demás
    procesos» son los de la corrida y no los de esta máquina."""
    return os.getpid() == 1


def _signal_run(pid, sig):
    """``sig`` a todo proceso del aislamiento salvo su init (sin aislamiento, al grupo de la corrida).
    ``kill(-1)`` es atómico: ningún proceso nace a mitad de camino."""
    try:
        if _sandboxed():
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


def _await_stopped():
    """Hasta que ningún proceso del aislamiento pueda correr código propio: detenido (``T``, ``t``),
    muerto, o dentro del núcleo sin poder ser interrumpido (``D``: un ``vfork`` que espera a su hijo,
    una escritura a disco; al volver, lo primero es la detención pendiente). SIGSTOP llega a cada uno
    cuando vuelve a correr, no al enviarse. Sin aislamiento no hay cómo verlos a todos."""
    if not _sandboxed():
        return
    deadline = time.monotonic() + KILL_LIMIT_S  # red de seguridad: nunca colgar la calificación
    while [p for p in _others() if _state(p) not in "tTDZX"] and time.monotonic() < deadline:
        os.sched_yield()


def _kill_run(pid):
    _signal_run(pid, signal.SIGKILL)
    if _sandboxed():
        _kill_everything_else()


def _kill_everything_else():
    """SIGKILL a todo proceso del aislamiento salvo su init, y espera (con un pidfd por proceso, sin
    dormir) a que muera cada uno."""
    deadline = time.monotonic() + KILL_LIMIT_S
    while (alive := [p for p in _others() if _state(p) not in "ZX"]) and time.monotonic() < deadline:
        _signal_run(None, signal.SIGKILL)
        for pid in alive:
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                select.select([pidfd], [], [], max(0, deadline - time.monotonic()))
            finally:
                os.close(pidfd)

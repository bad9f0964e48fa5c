"""Contener una corrida del agente que se juzga: ningún proceso suyo la sobrevive y su salida tiene tope.

Cada corrida arranca en su propio grupo de procesos (``start_new_session``), sin entrada estándar, con
una marca propia en el entorno (``CONFORMANCE_RUN_MARK``). Al terminar (o al vencer su plazo, o al pasar
su salida del tope) se mata con SIGKILL todo lo que sea de ella:

- su grupo de procesos entero;
- en Linux, todo proceso que lleve su marca en el entorno o que tenga abierto uno de sus pipes, aunque
  haya dejado el grupo (``setsid``, doble fork);
- y quien lanza se declara *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): un nieto huérfano
  pasa a ser hijo suyo, no de init, así que ``kill_adopted`` lo encuentra al terminar cada corrida aunque
  haya borrado su entorno y cerrado sus pipes. La suite como programa (``own_children``) lo es siempre;
  dentro de un kernel o de pytest (``workbook.conformance()``), solo mientras dura alguna corrida
  (``_start_adopting``), y los hijos que ese proceso ya tenía son ajenos: ni se matan ni se recogen.
  Lo que deja corriendo una corrida con «keep» (``pg_ctl start``) sigue aunque lo adopte.

Así corre todo ``harness.runs.launcher.launch`` con ``orphans="kill"`` (lo de siempre); con «keep» (y sin
sesión propia, si se pide) solo quedan el tope y el plazo, y lo que la corrida deja corriendo sigue.

Un hijo que deja abierta la salida no hace esperar a la fila: la corrida termina cuando termina el
proceso del agente, no cuando se cierra el pipe. En macOS quedan el grupo, el tope y el plazo (sin
/proc no hay cómo encontrar a quien dejó el grupo); en Windows, solo el plazo (``_run_plain``).

No se usa un espacio de nombres de PID (``unshare --pid``): el agente sería el PID 1 de ese espacio,
que ignora SIGINT y SIGTERM sin manejador (las filas de señales medirían otra cosa), y un init
intermedio costaría un proceso más por corrida y escondería la señal que mató al agente.
"""

import contextlib
import ctypes
import math
import multiprocessing
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import uuid
from typing import NamedTuple

from harness.errors import os_reason
from harness.runs import fork_server

# La marca de cada corrida en el entorno del agente (y de todo lo que lance sin borrarla).
RUN_MARK = "CONFORMANCE_RUN_MARK"
# Cuánto de cada flujo se guarda: la lección imprime menos de 2 KiB; más de esto es un agente roto.
OUTPUT_CAP = 4 * 1024 * 1024
# Lo que se espera, tras matar todo lo de la corrida, a que sus pipes lleguen al final.
DRAIN_SECONDS = 2.0
_PR_SET_CHILD_SUBREAPER = 36
SERVER_ENV = "CONFORMANCE_RUN_SERVER"
_LINUX = sys.platform.startswith("linux") and os.path.isdir("/proc")

# Los procesos que arrancó este módulo y siguen vivos: kill_adopted no los toca (son de una fila).
_started = set()
_started_lock = threading.Lock()


class Outcome(NamedTuple):
    """Lo que dejó una corrida contenida. ``ended``: «exit» (terminó sola), «timeout» (no terminó en su
    plazo) u «overflow» (su salida pasó del tope: se cortó y se detuvo)."""

    returncode: int
    stdout: str
    stderr: str
    ended: str

    @property
    def finished(self):
        return self.ended == "exit"


def become_subreaper():
    """En Linux, este proceso adopta a los huérfanos de sus descendientes. True si quedó así."""
    return _LINUX and _set_subreaper(1)


def _set_subreaper(value):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def run_contained(
    args, *, cwd, env, timeout, cap=OUTPUT_CAP, servers=None, new_session=True, kill_orphans=True
):
    """Corre ``args`` en ``cwd`` con ``env`` y devuelve su ``Outcome``; al volver, no queda vivo ningún
    proceso de la corrida que se pueda encontrar (grupo, marca, pipes). Con ``servers`` (``Servers``),
    una corrida de este mismo intérprete nace de un servidor de corridas (``harness.runs.fork_server``).
    ``timeout`` o ``cap`` None: sin plazo, o sin tope. Sin ``new_session``, la corrida queda en el grupo
    de quien la lanza; sin ``kill_orphans``, solo se detiene su proceso (si no terminó), y lo que haya
    dejado corriendo sigue (``pg_ctl start``). Quien lanza usa ``harness.runs.launcher.launch``, que
    llama aquí con sus opciones ya puestas en ``args`` y ``env``."""
    if os.name != "posix":
        return _run_plain(args, cwd=cwd, env=env, timeout=timeout)
    mark = uuid.uuid4().hex
    if not kill_orphans:  # lo que deja corriendo sigue, aunque lo adopte este proceso (kill_adopted)
        _kept_marks.add(f"{RUN_MARK}={mark}")
    adopting = kill_orphans and _start_adopting()
    try:
        proc, server = _start_protected(args, cwd, {**env, RUN_MARK: mark}, servers, new_session)
    except BaseException as err:
        if adopting:
            _stop_adopting()
        if not isinstance(err, OSError):
            raise
        # el programa no existe o no se puede ejecutar: como en la terminal, 127
        return Outcome(127, "", f"no se pudo lanzar {args[0]}: {os_reason(err)}", "exit")
    marks = {f"{RUN_MARK}={mark}", *(server.marks if server else ())}
    spared = {server.process.pid} if server else set()
    if kill_orphans:
        kill = lambda inodes=frozenset(): _kill_run(proc, marks, inodes, spared)  # noqa: E731
    else:
        kill = lambda inodes=frozenset(): _stop(proc)  # noqa: E731
    reader = _Reader(proc, cap)
    try:
        ended = reader.wait_exit(timeout)
    finally:
        kill()
        proc.wait()
        with _started_lock:
            _started.discard(proc.pid)
        if adopting:
            _stop_adopting()
        elif _owns_children:
            kill_adopted()
        reader.drain(DRAIN_SECONDS, lambda: kill(reader.pipe_inodes))
    out, err = reader.text()
    return Outcome(proc.returncode if ended == "exit" else -1, out, err, ended)


@contextlib.contextmanager
def row_process(start):
    """Un proceso que una fila lanza por su cuenta (``start()``, sin ``run_contained``: el agente que
    espera al modelo), protegido mientras dura: ``kill_adopted`` no lo toma por un huérfano (lo mataría
    y lo recogería, y su ``Popen`` diría código 0). Se lanza con el candado tomado por lo mismo.
    Sus huérfanos mueren al terminar, como los de ``run_contained`` (él sigue protegido mientras tanto)."""
    adopting = _start_adopting()
    try:
        with _started_lock:
            proc = start()
            _started.add(proc.pid)
    except BaseException:
        if adopting:
            _stop_adopting()
        raise
    try:
        yield proc
    finally:
        if adopting:
            _stop_adopting()
        with _started_lock:
            _started.discard(proc.pid)


def _start_protected(args, cwd, env, servers, new_session):
    """``_start`` con el candado tomado: su pid queda entre los protegidos antes de que ``kill_adopted``
    pueda verlo como un huérfano."""
    with _started_lock:
        proc, server = _start(args, cwd, env, servers, new_session)
        _started.add(proc.pid)
    return proc, server


def _start(args, cwd, env, servers, new_session):
    """(proceso, servidor): la corrida lanzada con ``Popen`` (servidor None) o nacida de un servidor
    de corridas (siempre en su sesión), con los mismos pipes y sin entrada estándar."""
    argv = fork_server.program(args) if servers is not None else None
    if argv is None:
        popen = subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=new_session,
        )
        return popen, None
    server = servers.get(env)
    try:
        return _spawn(server, argv, cwd, env), server
    except OSError:
        # El servidor murió (una corrida anterior lo mató) y su proceso todavía no se recogió: la
        # corrida nace de uno nuevo. Si ese también falla, el error sigue (código 127).
        servers.retire(server)
        server = servers.get(env)
        return _spawn(server, argv, cwd, env), server


def _spawn(server, argv, cwd, env):
    """La corrida nacida de ``server``, con sus pipes de salida y sin entrada estándar."""
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    fds = (os.open(os.devnull, os.O_RDONLY), out_w, err_w)
    try:
        proc = server.spawn(argv, os.path.abspath(cwd), env, fds)
    except OSError:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    proc.stdout, proc.stderr = os.fdopen(out_r, "rb", 0), os.fdopen(err_r, "rb", 0)
    return proc


class Servers:
    """Los servidores de corridas de una suite (``harness.runs.fork_server``): uno por hilo (atienden una
    corrida a la vez, así su marca señala solo a la corrida en curso) y por entorno de arranque."""

    def __init__(self):
        self._local, self._all, self._lock = threading.local(), [], threading.Lock()

    def get(self, env):
        """El servidor de este hilo para ``env`` (arranca uno si no hay, o si el anterior murió).
        Se llama con ``_started_lock`` tomado: su pid queda entre los protegidos antes de existir."""
        key = tuple(sorted(fork_server.startup_env(env).items()))
        mine = self._local.__dict__.setdefault("servers", {})
        server = mine.get(key)
        if server is None or server.process.poll() is not None:
            base = {k: v for k, v in os.environ.items() if k not in fork_server.startup_env(os.environ)}
            server = mine[key] = fork_server.Server({**base, **dict(key)})
            _started.add(server.process.pid)
            with self._lock:
                self._all.append(server)
        return server

    def retire(self, server):
        """Deja de usar ``server`` (ya no atiende): el próximo ``get`` de este hilo arranca otro."""
        mine = self._local.__dict__.get("servers", {})
        for key in [k for k, found in mine.items() if found is server]:
            del mine[key]
        server.process.kill()

    def __len__(self):
        """Cuántos servidores arrancaron desde el último ``close``."""
        with self._lock:
            return len(self._all)

    def close(self):
        """Apaga todos (al terminar la suite); si se vuelven a pedir, arrancan de nuevo."""
        with self._lock:
            servers, self._all = self._all, []
            self._local = threading.local()
        for server in servers:
            server.close()
            with _started_lock:
                _started.discard(server.process.pid)


def forking():
    """¿Nacen de un servidor las corridas de Python? (``CONFORMANCE_RUN_SERVER=0`` lo apaga: cada corrida
    arranca su intérprete, como en la terminal.)"""
    return fork_server.available() and os.environ.get(SERVER_ENV, "") != "0"


def _run_plain(args, *, cwd, env, timeout):
    """Fuera de POSIX (Windows): sin grupos de procesos ni pipes sin bloqueo; el plazo sí se respeta
    y el proceso se mata al vencer, pero la salida no tiene tope y un nieto puede sobrevivir."""
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        ended = "exit"
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        ended = "timeout"
    decode = lambda b: b.decode("utf-8", "replace")  # noqa: E731
    return Outcome(proc.returncode if ended == "exit" else -1, decode(out), decode(err), ended)


class _Reader:
    """Lee stdout y stderr a la vez, sin bloquear, guardando hasta ``cap`` bytes de cada uno."""

    def __init__(self, proc, cap):
        self.proc, self.cap = proc, cap
        self.data = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
        self.dropped = dict.fromkeys(self.data, 0)
        self.pipe_inodes = {os.fstat(fd).st_ino for fd in self.data}
        self.selector = selectors.DefaultSelector()
        for fd in self.data:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ)
        # Lo que se puede leer cuando la corrida terminó: su pidfd, o el socket de su servidor.
        self.exit_fd = getattr(proc, "exit_fd", None)
        self.pidfd = _pidfd(proc.pid) if self.exit_fd is None else None
        self.exit_fd = self.pidfd if self.exit_fd is None else self.exit_fd
        if self.exit_fd is not None:
            self.selector.register(self.exit_fd, selectors.EVENT_READ)

    def wait_exit(self, timeout):
        """Lee hasta que el proceso del agente termina: «exit», «timeout» u «overflow»."""
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        while True:
            if self.proc.poll() is not None:
                return "exit"
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            # Con pidfd, el fin del proceso despierta al selector; sin él, se mira cada tanto.
            self._read_ready(min(left, 5.0 if self.exit_fd is not None else 0.05))
            if any(self.dropped.values()):
                return "overflow"

    def drain(self, seconds, kill_holders):
        """Lo que quedó en los pipes, hasta que se cierran (o ``seconds``). Si tardan, es que alguien
        más los tiene abiertos (heredados, sin quedar en el grupo ni con la marca): ``kill_holders``."""
        deadline = time.monotonic() + seconds
        while self._pipes_open():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if not self._read_ready(min(left, 0.1)):
                kill_holders()
        self.selector.close()
        for pipe in (self.proc.stdout, self.proc.stderr):
            pipe.close()
        if self.pidfd is not None:
            os.close(self.pidfd)

    def _pipes_open(self):
        return any(key.fd != self.exit_fd for key in self.selector.get_map().values())

    def _read_ready(self, timeout):
        """Lee lo que esté listo (esperando hasta ``timeout``); False si no llegó nada."""
        ready = self.selector.select(timeout)
        for key, _ in ready:
            if key.fd == self.exit_fd:
                continue
            try:
                chunk = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                self.selector.unregister(key.fd)
                continue
            kept = self.data[key.fd]
            room = len(chunk) if self.cap is None else self.cap - len(kept)
            kept += chunk[: max(room, 0)]
            self.dropped[key.fd] += max(len(chunk) - max(room, 0), 0)
        return bool(ready)

    def text(self):
        """(stdout, stderr) como texto; lo que pasó del tope se dice en la última línea de cada uno."""
        out = []
        for fd, kept in self.data.items():
            text = kept.decode("utf-8", "replace")
            if self.dropped[fd]:
                text += (
                    f"\n[conformidad] la salida pasó de {self.cap // (1024 * 1024)} MiB: se descartó "
                    "el resto y se detuvo la corrida\n"
                )
            out.append(text)
        return out[0], out[1]


def _stop(proc):
    """SIGKILL solo al proceso de la corrida, si sigue vivo (lo que dejó corriendo no se toca)."""
    if proc.poll() is None:
        proc.kill()


def _pidfd(pid):
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _kill_run(proc, marks, pipe_inodes=frozenset(), spared=frozenset()):
    """SIGKILL al grupo de la corrida y, en Linux, a todo proceso con una de sus ``marks`` (la de la
    corrida, o la del servidor del que nació, salvo el servidor mismo: ``spared``), o con uno de sus pipes,
    si se dan sus ``pipe_inodes``: mirar los descriptores de cada proceso cuesta más, y solo hace falta
    si los pipes no se cierran); los que quedan huérfanos (hijos de este proceso, subreaper) se recogen."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if not _LINUX:
        return
    killed = False
    for _ in range(50):  # quien hace fork en bucle puede dejar un hijo nuevo entre dos pasadas
        found = [
            pid
            for pid in _own_pids()
            if pid != proc.pid and pid not in spared and _belongs(pid, marks, pipe_inodes)
        ]
        if not found:
            break
        killed = True
        for pid in found:
            _kill(pid)
    if killed:  # los que mató quedan como zombis hijos de este proceso (es subreaper): se recogen
        _reap_children(exclude=_protected())


def _own_pids():
    """Los procesos de la máquina, salvo este (leer el entorno de uno ajeno falla, y se salta)."""
    me = os.getpid()
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != me]


def _belongs(pid, marks, pipe_inodes):
    """¿Es ``pid`` de la corrida? Lleva una de sus marcas en el entorno, o tiene abierto uno de sus
    pipes (un zombi no tiene ni entorno ni descriptores: no cuenta)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            if {m.encode() for m in marks} & set(f.read().split(b"\0")):
                return True
        for fd in os.listdir(f"/proc/{pid}/fd") if pipe_inodes else ():
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("pipe:[") and int(link[6:-1]) in pipe_inodes:
                return True
    except (OSError, ValueError):
        return False
    return False


def _stat_fields(pid):
    """(estado, ppid) de ``/proc/PID/stat``, o None si el proceso ya no está."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            rest = f.read().rpartition(")")[2].split()
        return rest[0], int(rest[1])
    except (OSError, IndexError, ValueError):
        return None


def _state(pid):
    fields = _stat_fields(pid)
    return fields and fields[0]


def _kill(pid):
    """SIGKILL por pidfd cuando se puede: así un pid reciclado entre mirar y matar no recibe la señal."""
    fd = _pidfd(pid)
    try:
        if fd is not None:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    finally:
        if fd is not None:
            os.close(fd)


def _children():
    me = os.getpid()
    return [pid for pid in _own_pids() if (_stat_fields(pid) or ("", 0))[1] == me]


def _protected():
    """Los hijos de este proceso que no son huérfanos adoptados: las corridas en curso, los
    trabajadores de ``multiprocessing`` y los que ya tenía antes de adoptar (``_foreign``)."""
    with _started_lock:
        mine = set(_started) | _foreign
    return mine | {p.pid for p in multiprocessing.active_children()}


def _reap_children(exclude):
    """Recoge a los hijos de este proceso que ya terminaron (huérfanos adoptados y ya muertos)."""
    for pid in _children():
        if pid not in exclude and _state(pid) == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def own_children():
    """Quien corre la suite como programa (``python -m harness.conformidad``) lo declara: todo hijo
    suyo que no arrancó ``run_contained`` es un huérfano de una corrida, y muere al terminar cada
    corrida. Dentro de pytest o de un notebook no: ahí otros hijos (un servidor de prueba) son ajenos,
    y ese proceso es subreaper solo mientras corre una fila (``_start_adopting``)."""
    global _owns_children
    _owns_children = become_subreaper() or _owns_children


_owns_children = False
# Sin own_children: cuántas corridas en curso tienen a este proceso como subreaper, y los hijos que
# ya tenía cuando empezó a serlo (los de un kernel o de pytest: no son de ninguna corrida).
_adopters = 0
_foreign = set()
# Las marcas de las corridas con «keep» (``pg_ctl start``): su servidor, si un subreaper lo adopta
# mientras otra corrida está en curso, no es un huérfano que matar.
_kept_marks = set()


def _start_adopting():
    """Sin ``own_children`` (un kernel, pytest), este proceso es subreaper mientras dure la corrida que
    empieza: así la contiene igual que la suite como programa. True si quedó así (hay que llamar a
    ``_stop_adopting``); con ``own_children`` ya lo es, y fuera de Linux no se puede."""
    global _adopters
    if _owns_children or not _LINUX:
        return False
    with _started_lock:
        if _adopters == 0:
            _foreign.update(_children())
            if not become_subreaper():
                _foreign.clear()
                return False
        _adopters += 1
    return True


def _stop_adopting():
    """La corrida terminó: mata a los huérfanos adoptados y, si era la última en curso, este proceso deja
    de ser subreaper (antes de la última pasada de ``kill_adopted``: un nieto que quedó huérfano en el
    medio ya es hijo suyo y muere; uno posterior, ajeno, vuelve a ir a init)."""
    global _adopters
    with _started_lock:
        _adopters -= 1
        last = _adopters == 0
        if last:
            _set_subreaper(0)
    kill_adopted()
    with _started_lock:
        if last and _adopters == 0:
            _foreign.clear()


def kill_adopted():
    """SIGKILL a todo huérfano adoptado que siga vivo (uno que dejó el grupo, borró su marca y cerró
    sus pipes), salvo el de una corrida con «keep», y recogerlo. Devuelve cuántos había."""
    if not _LINUX:
        return 0
    with _started_lock:  # ninguna corrida arranca a medias mientras tanto: su hijo no se toma por huérfano
        protected = set(_started) | _foreign | {p.pid for p in multiprocessing.active_children()}
        orphans = [
            pid
            for pid in _children()
            if pid not in protected and _state(pid) != "Z" and not _belongs(pid, _kept_marks, ())
        ]
        for pid in orphans:
            _kill(pid)
    for pid in orphans:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    _reap_children(exclude=_protected())
    return len(orphans)

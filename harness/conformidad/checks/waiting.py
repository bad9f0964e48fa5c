"""Dejar al agente esperando al modelo, de verdad y sin demoras: el modelo guionado anota cada pedido
en ``SCRIPTED_MODEL_LOG``; si ese archivo es una FIFO casi llena, el segundo pedido no cabe y el agente
queda detenido dentro de su segunda llamada al modelo (después del punto B del turno 1) hasta que se
le mande una señal. Se sabe que llegó ahí por un evento: imprimió su punto B y tiene la FIFO abierta.
Solo Linux (una FIFO con tope, ``/proc``)."""

import contextlib
import functools
import json
import os
import select
import tempfile
import threading
import time
from typing import NamedTuple

try:
    import fcntl
except ImportError:  # Windows: sin FIFO con tope; ``unavailable`` dice por qué no se pudo comprobar
    fcntl = None

from harness.contract import MODEL_LOG_VAR, parse_log
from harness.runs.containment import row_process
from harness.runs.launcher import AgentRun, start_agent_process
from harness.scenario import TASK

from ..processes import scratch
from ..rows import judged, unchecked

SAFETY = 60  # una red de seguridad, no una medida: el agente llega ahí en décimas de segundo
FIRST_REQUEST = (json.dumps([{"role": "user", "content": TASK}], ensure_ascii=False) + "\n").encode()


def unavailable():
    """'' si se puede dejar al agente esperando aquí, o por qué no."""
    if fcntl is None or not hasattr(fcntl, "F_SETPIPE_SZ") or not os.path.isdir("/proc/self/fd"):
        return "hace falta Linux (una FIFO con tope y /proc) para dejar al agente esperando al modelo"
    return ""


def _holders(fifo):
    """Los procesos (que no son este) que tienen ``fifo`` abierta."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == fifo:
                        found.append(int(pid))
                        break
    return found


class Waiting(NamedTuple):
    proc: object
    holder: int | None  # el proceso que espera al modelo (el agente, aunque corra bajo strace)
    out: list
    err: list
    fd: int  # el lado de la FIFO que tiene la suite
    readers: tuple  # los hilos que leen stdout y stderr: lo último llega después de que el proceso sale

    def not_held(self, scenario, expected, section):
        """La fila ✗ de un agente que no llegó a esperar al modelo (terminó antes o quedó en otro lado)."""
        ended = (
            f"terminó con código {self.proc.returncode}"
            if self.proc.poll() is not None
            else "siguió en otro lado"
        )
        return judged(
            scenario,
            expected,
            f"no llegó a esperar al modelo: {ended}",
            False,
            "el agente no llegó a su segunda llamada al modelo (después del punto B del turno 1)",
            "".join(self.err),
            section,
        )

    def finish(self):
        """Vacía la FIFO (la escritura detenida termina: Python atiende la señal que ya llegó, y cerrar
        el archivo no vuelve a quedarse esperando) hasta que el agente termina; devuelve la corrida."""
        deadline = time.monotonic() + SAFETY
        while self.proc.poll() is None and time.monotonic() < deadline:
            if select.select([self.fd], [], [], 0.05)[0]:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.fd, 1 << 16)
        self.proc.wait(timeout=SAFETY)
        for reader in self.readers:  # hasta el fin de cada pipe: la última línea de stderr es la que importa
            reader.join(timeout=SAFETY)
        return AgentRun(self.proc.returncode, "".join(self.out), "".join(self.err))


def _drain(stream, into):
    for line in stream:
        into.append(line)


@contextlib.contextmanager
def waiting_for_model(ctx, workdir, prefix=(), env=None):
    """El agente arrancado en ``workdir`` y detenido en su segunda llamada al modelo (``holder`` None si
    no llegó ahí: terminó antes o se quedó en otro lado)."""
    with tempfile.TemporaryDirectory(prefix="conformidad-modelo-") as folder, contextlib.ExitStack() as stack:
        fifo = os.path.join(folder, "pedidos.fifo")
        os.mkfifo(fifo)
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        proc = None
        try:
            size = fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 4096)
            os.write(fd, b"x" * (size - len(FIRST_REQUEST)))  # cabe el primer pedido, el segundo no
            log = {**ctx.env, **(env or {}), MODEL_LOG_VAR: fifo}
            start = functools.partial(start_agent_process, workdir, agent=ctx.agent, env=log, prefix=prefix)
            proc = stack.enter_context(row_process(start))
            out, err = [], []
            readers = [
                threading.Thread(target=_drain, args=(s, b), daemon=True)
                for s, b in ((proc.stdout, out), (proc.stderr, err))
            ]
            for reader in readers:
                reader.start()
            yield Waiting(proc, _wait_held(proc, fifo, out), out, err, fd, tuple(readers))
        finally:
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(fd)


def _wait_held(proc, fifo, out):
    deadline = time.monotonic() + SAFETY
    while proc.poll() is None and time.monotonic() < deadline:
        saved_b = any(p.kind == "save" and p.point == "B" for p in parse_log("".join(out)))
        holders = _holders(fifo) if saved_b else []
        if holders:
            return holders[0]
        time.sleep(0.01)  # se espera un estado (punto B impreso y la FIFO abierta), no un tiempo
    return None


def while_waiting(ctx, scenario, expected, section, act, judge):
    """La fila de una defensa que se prueba con el agente esperando al modelo, en una carpeta nueva
    ``w``: ``act(w, held)`` mientras espera, y ``judge(w, lo que devolvió act)`` ya sin él. «No aplica»
    si aquí no se puede dejarlo esperando, y ✗ si no llegó a esperar."""
    why = unavailable()
    if why:
        return unchecked(scenario, expected, why, section)
    with scratch() as w:
        with waiting_for_model(ctx, w) as held:
            if held.holder is None:
                return held.not_held(scenario, expected, section)
            acted = act(w, held)
        return judge(w, acted)

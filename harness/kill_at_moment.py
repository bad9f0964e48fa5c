"""Correr código de un ejercicio en un proceso aparte y matarlo con SIGKILL en un momento exacto.

Para el Nivel 2: tu ``run_tool_uses_fixed`` o tu script de reproducción corren en un proceso nuevo,
con el agente de la lección (su ``save_effect`` y ``now_ms``); el proceso avisa por una tubería cada
cosa real que pasa (la herramienta volvió, el registro se escribió, un ``crash_point`` disparó) y,
al llegar al momento pedido, se queda quieto hasta que quien lo lanzó lo mata de verdad. Nada de
esto conoce la respuesta: solo cuenta lo que hizo tu código.

Cada aviso lleva un valor al azar de esta corrida que el proceso recibe por una tubería y cierra:
un script que escribe los archivos a mano, sin correr nada, no deja avisos válidos.
"""

import functools
import json
import os
import secrets
import selectors
import signal
import subprocess
import sys
import time
from typing import NamedTuple

from harness.contract import EFFECTS_FILE
from harness.runner import load_agent

# Qué nombres recibe la función de la persona (y nada más): el contrato del Nivel 2, parte B.
FUNCTION_NAME = "run_tool_uses_fixed"
# Lo que se guarda de stdout y de stderr de cada corrida: su final (lo que una comprobación muestra).
OUTPUT_TAIL = 1 << 20


class KillRun(NamedTuple):
    """Lo que pasó: los avisos reales en orden, si murió en el momento, y lo que imprimió."""

    events: list
    killed_at_moment: bool
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


# —— El proceso hijo ——


class _Probe:
    """Los ganchos del proceso hijo: envuelven las herramientas, la escritura durable y crash_point."""

    def __init__(self, nonce, events_fd, stop_at):
        self.nonce, self.out, self.stop_at = nonce, os.fdopen(events_fd, "w", buffering=1), stop_at

    def emit(self, kind, value):
        self.out.write(f"{self.nonce} {json.dumps([kind, value], ensure_ascii=False)}\n")
        if kind in self.stop_at or f"{kind}:{value}" in self.stop_at:
            self.out.write(f"{self.nonce} {json.dumps(['momento', kind])}\n")
            self.out.flush()
            while True:  # quieto hasta el SIGKILL de quien lo lanzó
                signal.pause()

    def install(self):
        from harness import crash, durable, tools

        real_write, real_crash_point = durable.write_durable, crash.crash_point

        def write_durable(path, data):
            real_write(path, data)
            if os.path.basename(path) == EFFECTS_FILE:
                ledger = json.loads(data)
                self.emit("registro", {tid: (e or {}).get("result") for tid, e in ledger.items()})

        def crash_point(kind):
            try:
                real_crash_point(kind)
            except crash.SimulatedCrash as err:
                self.emit("caida", str(err).rsplit(" ", 1)[-1])
                raise

        durable.write_durable, crash.crash_point = write_durable, crash_point
        for name, impl in list(tools.TOOL_IMPLS.items()):
            tools.TOOL_IMPLS[name] = self._tool(name, impl)

    def _tool(self, name, impl):
        def wrapped(tool_input):
            output = impl(tool_input)
            self.emit("herramienta", name)
            return output

        return wrapped


def _child(spec):
    """El proceso hijo: ``spec`` dice qué correr, dónde y por cuáles tuberías avisar."""
    nonce = os.read(spec["nonce_fd"], 64).decode()
    os.close(spec["nonce_fd"])
    probe = _Probe(nonce, spec["events_fd"], spec["stop_at"])
    probe.install()
    os.environ["LESSON_AGENT"] = spec["agent"]
    os.chdir(spec["workdir"])
    if spec.get("script"):
        import runpy

        sys.argv = [spec["script"]]
        runpy.run_path(spec["script"], run_name="__main__")
        return
    from harness.base_loop import tool_result, tool_uses
    from harness.tools import run_tool

    agent = load_agent(spec["agent"])
    namespace = {"__name__": "respuesta", "tool_uses": tool_uses, "tool_result": tool_result}
    namespace.update(run_tool=run_tool, save_effect=agent.save_effect, now_ms=agent.now_ms)
    exec(compile(spec["source"], "<tu celda>", "exec"), namespace)  # noqa: S102 (el código es el tuyo)
    results = namespace[spec["function"]](spec["content"])
    probe.emit("devolvio", results)


# —— Quien lo lanza ——


def run_and_kill(
    workdir,
    *,
    agent,
    stop_at,
    function=FUNCTION_NAME,
    source=None,
    script=None,
    content=None,
    env=None,
    prefix=(),
    timeout=30,
    launch=None,
):
    """Corre ``source`` (la celda con ``run_tool_uses_fixed``, llamada con ``content``) o ``script`` en
    un proceso nuevo dentro de ``workdir``; lo mata con SIGKILL cuando llega ``stop_at`` («herramienta:
    write_report», «registro», «caida», o una lista: lo primero que ocurra; None: que termine solo).
    ``prefix`` antepone un comando (un aislamiento); sin él, el proceso va en su propia sesión y la muerte alcanza a todo su grupo.
    ``launch(spec, env)`` cambia cómo nace el proceso (por ejemplo, bifurcado de uno ya preparado):
    devuelve algo con la interfaz de ``Popen`` que usa esta función (``args``, ``kill``, ``wait``,
    ``stdout``, ``stderr``, ``returncode``)."""
    workdir = os.path.abspath(workdir)
    nonce = secrets.token_hex(16)
    nonce_r, nonce_w = os.pipe()
    events_r, events_w = os.pipe()
    stops = [stop_at] if isinstance(stop_at, str) else list(stop_at or ())
    spec = {"nonce_fd": nonce_r, "events_fd": events_w, "stop_at": stops, "agent": os.path.abspath(agent)}
    spec.update(
        workdir=workdir,
        function=function,
        source=source,
        content=content,
        script=script and os.path.abspath(script),
    )
    full_env = {k: v for k, v in os.environ.items() if k != "CRASH_AFTER"}
    full_env.update(env or {}, PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
    child = (launch or functools.partial(_popen, prefix))(spec, full_env)
    os.close(nonce_r)
    os.close(events_w)
    os.write(nonce_w, nonce.encode())
    os.close(nonce_w)
    watch = _Watch(child, events_r, nonce)
    timed_out = watch.until_done(timeout)
    text = lambda b: b.decode("utf-8", "replace")  # noqa: E731
    out, err = (text(watch.tails[name]) for name in ("stdout", "stderr"))
    return KillRun(watch.events, watch.at_moment, child.returncode, out, err, timed_out)


def _popen(prefix, spec, env):
    """Un proceso nuevo con ``python -m harness.kill_at_moment``; lee ``spec`` de un archivo que
    borra al empezar."""
    spec_path = os.path.join(spec["workdir"], ".ejecucion.json")
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    return subprocess.Popen(
        [*prefix, sys.executable, "-m", "harness.kill_at_moment", spec_path],
        cwd=spec["workdir"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(spec["nonce_fd"], spec["events_fd"]),
        start_new_session=not prefix,
    )


def _kill(child, prefix_used):
    try:
        if prefix_used:
            child.kill()
        else:
            os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class _Watch:
    """Lee a la vez los avisos, stdout y stderr del hijo. Leer su salida mientras corre importa: con la
    tubería llena (64 KiB), un código correcto que imprime mucho se quedaría esperando y parecería un
    bucle. De cada salida se guarda solo el final (``OUTPUT_TAIL``)."""

    def __init__(self, child, events_r, nonce):
        self.child, self.nonce, self.events, self.at_moment = child, nonce, [], False
        self.prefix_used = child.args[0] != sys.executable
        self.files = [os.fdopen(events_r, "rb", buffering=0), child.stdout, child.stderr]
        self.pipes = {
            f.fileno(): name for f, name in zip(self.files, ("avisos", "stdout", "stderr"), strict=True)
        }
        self.tails, self.buffer = {"stdout": b"", "stderr": b""}, b""

    def until_done(self, timeout):
        """Hasta que el hijo muere (en el momento, o solo) y cierra sus tuberías; True si se pasó de
        ``timeout`` y hubo que matarlo."""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            for fd in self.pipes:
                sel.register(fd, selectors.EVENT_READ)
            try:
                while self.pipes:
                    left = deadline - time.monotonic()
                    ready = sel.select(left) if left > 0 else []
                    if not ready:
                        _kill(self.child, self.prefix_used)
                        self._reap(deadline)
                        return True
                    for key, _ in ready:
                        self._read(sel, key.fd)
            finally:
                for f in self.files:
                    f.close()
        return self._reap(deadline)

    def _read(self, sel, fd):
        chunk = os.read(fd, 65536)
        name = self.pipes[fd]
        if not chunk:
            sel.unregister(fd)
            del self.pipes[fd]
        elif name == "avisos":
            self._events(chunk)
        else:
            self.tails[name] = (self.tails[name] + chunk)[-OUTPUT_TAIL:]

    def _events(self, chunk):
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        if len(self.buffer) > OUTPUT_TAIL:
            self.buffer = b""  # una línea así no la escribe el gancho: no se guarda sin fin
        for line in lines:
            given, _, payload = line.decode("utf-8", "replace").partition(" ")
            if given != self.nonce or self.at_moment:
                continue  # un aviso sin el valor de esta corrida no lo escribió el gancho
            kind, value = json.loads(payload)
            if kind == "momento":
                self.at_moment = True
                _kill(self.child, self.prefix_used)
            else:
                self.events.append((kind, value))

    def _reap(self, deadline):
        """Espera el código de salida (ya cerró sus tuberías); True si tampoco así terminó."""
        try:
            self.child.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill(self.child, self.prefix_used)
            self.child.wait()
            return True
        return False


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    os.remove(sys.argv[1])
    _child(spec)

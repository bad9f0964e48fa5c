"""Correr código de un ejercicio en un proceso aparte y matarlo con SIGKILL en un momento exacto.

Para el Nivel 2: tu ``run_tool_uses_fixed`` o tu script de reproducción corren en un proceso nuevo,
con el agente de la lección (su ``save_effect`` y ``now_ms``); se avisa por una tubería cada cosa
real que pasa (la herramienta volvió, el registro se escribió, un ``crash_point`` disparó) y, al
llegar al momento pedido, quien lo lanzó lo mata de verdad. Nada de esto conoce la respuesta: solo
cuenta lo que hizo tu código.

Hay dos maneras de observar la corrida:

- **Con un testigo** (al calificar, ``Witness``): las herramientas, la escritura durable y
  ``crash_point`` no corren en tu proceso sino en otro (el testigo), al que tu proceso se lo pide por
  un socket y espera la respuesta. El testigo congela todos los procesos de la corrida, hace lo
  pedido, avisa y espera la decisión de quien lanzó la corrida, que es el único que sabe en qué
  momento matar: si es ese, todo muere congelado; si no, todo sigue. Tu proceso no tiene la tubería
  de los avisos ni sabe el momento: no puede escribir avisos falsos, ni leer ni adivinar el momento.
- **Sin testigo** (en tu máquina, ``_Probe``): los ganchos están en tu mismo proceso y cada aviso
  lleva un valor al azar de esta corrida que el proceso recibe por una tubería y cierra: un script
  que escribe los archivos a mano, sin correr nada, no deja avisos válidos.
"""

import base64
import functools
import importlib
import json
import os
import secrets
import selectors
import signal
import socket
import subprocess
import sys
import time
from typing import NamedTuple

from harness.contract import CRASH_VAR, EFFECTS_FILE, LESSON_AGENT_VAR, crash_message
from harness.runs.launcher import load_agent, start

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
        if stops_here(self.stop_at, kind, value):
            self.out.write(f"{self.nonce} {json.dumps(['momento', kind])}\n")
            self.out.flush()
            while True:  # quieto hasta el SIGKILL de quien lo lanzó
                signal.pause()

    def install(self):
        from harness import crash, tools
        from harness.defenses import durable

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


def _wire_error(err):
    """Una excepción del testigo como JSON: su clase, su mensaje y sus atributos simples."""
    simple = {k: v for k, v in vars(err).items() if isinstance(v, (str, int, float, bool, type(None)))}
    return {"error": [type(err).__module__, type(err).__qualname__, str(err), simple]}


def _rebuild_error(module, qualname, message, attributes):
    """La excepción que lanzó el testigo, para lanzarla en el proceso de la corrida."""
    try:
        cls = getattr(importlib.import_module(module), qualname)
    except (ImportError, AttributeError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        return RuntimeError(message)
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    for name, value in attributes.items():
        try:
            setattr(err, name, value)
        except AttributeError:
            pass
    return err


class _Stub:
    """Los ganchos del proceso de la corrida cuando hay testigo: piden al testigo (por ``sock``) lo
    que antes hacían aquí y esperan su respuesta. Aquí no hay avisos ni momento que leer."""

    def __init__(self, sock):
        self.sock = sock

    def ask(self, request):
        request["cwd"] = os.getcwd()
        self.sock.send(json.dumps(request, ensure_ascii=False).encode())
        reply = self.sock.recv(WITNESS_MESSAGE)
        if not reply:
            os._exit(1)  # el testigo ya no está: la corrida terminó
        reply = json.loads(reply)
        if "error" in reply:
            raise _rebuild_error(*reply["error"])
        return reply.get("ok")

    def install(self):
        from harness import crash, tools
        from harness.defenses import durable

        def write_durable(path, data):
            data = data.encode() if isinstance(data, str) else bytes(data)
            payload = base64.b64encode(data).decode()
            self.ask({"op": "escribir", "path": os.path.abspath(path), "data": payload})

        def crash_point(kind):
            label = self.ask({"op": "caida", "kind": kind})
            if label:
                raise crash.SimulatedCrash(crash_message(label))

        durable.write_durable, crash.crash_point = write_durable, crash_point
        for name in list(tools.TOOL_IMPLS):
            tools.TOOL_IMPLS[name] = self._tool(name)

    def _tool(self, name):
        def wrapped(tool_input):
            return self.ask({"op": "herramienta", "name": name, "input": tool_input})

        return wrapped

    def emit(self, kind, value):
        self.ask({"op": "devolvio", "value": value})


# Un pedido al testigo: una escritura durable (el reporte, el registro) con su contenido.
WITNESS_MESSAGE = 16 << 20


class Witness:
    """El testigo de una corrida: hace de verdad lo que el proceso de la corrida le pide (una
    herramienta, una escritura durable, contar un ``crash_point``), fuera de ese proceso, y lo cuenta
    en ``events`` (lista de (tipo, valor)). Lo usa el servidor de corridas de quien califica."""

    def __init__(self, env):
        from harness import crash, tools
        from harness.defenses import durable

        self.crash_after = env.get(CRASH_VAR, "")
        self.counts = {}
        self.real_write, self.tools = durable.write_durable, dict(tools.TOOL_IMPLS)
        self.simulated = crash

    def perform(self, request):
        """(respuesta para el proceso de la corrida, avisos) de ``request``."""
        events = []
        try:
            os.chdir(request["cwd"])
            ok = getattr(self, "_" + request["op"])(request, events)
        except Exception as err:  # noqa: BLE001 (la misma excepción, del lado de la corrida)
            return _wire_error(err), events
        return {"ok": ok}, events

    def _herramienta(self, request, events):
        name = request["name"]
        if name not in self.tools:
            raise KeyError(name)
        output = self.tools[name](request["input"])
        events.append(("herramienta", name))
        return output

    def _escribir(self, request, events):
        path, data = request["path"], base64.b64decode(request["data"])
        self.real_write(path, data)
        if os.path.basename(path) == EFFECTS_FILE:
            ledger = json.loads(data)
            events.append(("registro", {tid: (e or {}).get("result") for tid, e in ledger.items()}))

    def _caida(self, request, events):
        kind = request["kind"]
        if kind not in self.simulated.KINDS:
            raise ValueError(f"crash_point: tipo desconocido {kind}")
        self.counts[kind] = self.counts.get(kind, 0) + 1
        label = f"{kind}:{self.counts[kind]}"
        saved, os.environ[CRASH_VAR] = os.environ.get(CRASH_VAR), self.crash_after
        try:
            wanted = self.simulated.crash_after()  # valida la etiqueta como crash_point
        finally:
            if saved is None:
                os.environ.pop(CRASH_VAR, None)
            else:
                os.environ[CRASH_VAR] = saved
        if label != wanted:
            return None
        events.append(("caida", label))
        return label

    def _devolvio(self, request, events):
        events.append(("devolvio", request["value"]))


def stops_here(stops, kind, value):
    """¿Es (``kind``, ``value``) el momento de matar, según ``stops``?"""
    return kind in stops or f"{kind}:{value}" in stops


def _child(spec):
    """El proceso hijo: ``spec`` dice qué correr, dónde y por cuáles tuberías avisar."""
    if spec.get("witness_fd") is not None:
        probe = _Stub(socket.socket(fileno=spec["witness_fd"]))
    else:
        nonce = os.read(spec["nonce_fd"], 64).decode()
        os.close(spec["nonce_fd"])
        probe = _Probe(nonce, spec["events_fd"], spec["stop_at"])
    probe.install()
    os.environ[LESSON_AGENT_VAR] = spec["agent"]
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
    full_env = {k: v for k, v in os.environ.items() if k != CRASH_VAR}
    full_env.update(env or {}, PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
    # Con testigo, por aquí va la decisión de cada aviso: seguir («c») o matar («k»).
    decide_r, decide_w = os.pipe()
    spec["decide_fd"] = decide_r
    try:
        child = (launch or functools.partial(_popen, prefix))(spec, full_env)
    finally:
        for fd in (nonce_r, events_w, decide_r):
            os.close(fd)
    os.write(nonce_w, nonce.encode())
    os.close(nonce_w)
    watch = _Watch(child, events_r, nonce, stops, decide_w)
    try:
        timed_out = watch.until_done(timeout)
    finally:
        watch.stop_deciding()
    text = lambda b: b.decode("utf-8", "replace")  # noqa: E731
    out, err = (text(watch.tails[name]) for name in ("stdout", "stderr"))
    return KillRun(watch.events, watch.at_moment, child.returncode, out, err, timed_out)


def _popen(prefix, spec, env):
    """Un proceso nuevo con ``python -m harness.runs.kill_at_moment``; lee ``spec`` de un archivo que
    borra al empezar."""
    spec_path = os.path.join(spec["workdir"], ".ejecucion.json")
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    return start(
        [sys.executable, "-m", "harness.runs.kill_at_moment", spec_path],
        cwd=spec["workdir"],
        env=env,
        sandbox=prefix,
        new_session=not prefix,
        text=False,
        pass_fds=(spec["nonce_fd"], spec["events_fd"]),
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

    def __init__(self, child, events_r, nonce, stops=(), decide=None):
        self.child, self.nonce, self.events, self.at_moment = child, nonce, [], False
        # Con testigo (``child.witnessed``), cada aviso espera la decisión de aquí: solo aquí se sabe
        # en qué momento matar.
        self.stops, self.decide_fd = stops, decide
        self.decide = decide if getattr(child, "witnessed", False) else None
        self.prefix_used = child.args[0] != sys.executable
        self.files = [os.fdopen(events_r, "rb", buffering=0), child.stdout, child.stderr]
        self.pipes = {
            f.fileno(): name for f, name in zip(self.files, ("avisos", "stdout", "stderr"), strict=True)
        }
        self.tails, self.buffer = {"stdout": b"", "stderr": b""}, b""

    def stop_deciding(self):
        """Cierra la tubería de las decisiones: un testigo que espera una la recibe como «matar»."""
        if self.decide_fd is not None:
            os.close(self.decide_fd)
            self.decide_fd = self.decide = None

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
                        self.stop_deciding()
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
                continue
            self.events.append((kind, value))
            if self.decide is not None:
                self.at_moment = stops_here(self.stops, kind, value)
                try:  # el testigo mata a toda la corrida, congelada, si es el momento
                    os.write(self.decide, b"k" if self.at_moment else b"c")
                except BrokenPipeError:
                    pass

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

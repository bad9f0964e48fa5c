"""El orden en que una corrida de Python escribió en stdout y en stderr, para mostrarla como una terminal.

Dos pipes no dicen qué llegó primero: si los dos tienen algo cuando se leen, el orden se pierde (y un
stdout que no es una terminal va con búfer de bloque, así que ni siquiera sale a tiempo). Aquí el mismo
proceso lo anota: ``install`` cambia ``sys.stdout`` y ``sys.stderr`` por streams sin búfer que, tras cada
escritura, agregan «fd bytes» a un registro. Es exacto para todo lo que pasa por ``sys.stdout``/
``sys.stderr`` (``print``, un traceback, ``logging``), cuesta una escritura corta por cada una, y el
agente corre tal cual (``python agent.py``: sin envoltorio, el traceback no cambia). strace daría el
orden también de un proceso hijo, pero no está en toda máquina y detiene cada escritura.

Lo arma ``harness.runs.launcher.agent_run(..., ordered=True)``: copia este archivo como
``sitecustomize.py`` en una carpeta propia que va primero en ``PYTHONPATH``; Python lo importa al arrancar
y se instala solo. Es una copia y no un ``import harness…``: el agente no necesita ver el paquete, y este
módulo solo usa la biblioteca estándar.
"""

import importlib.machinery
import importlib.util
import io
import os
import sys
import threading

# La carpeta de la corrida: su sitecustomize y el registro del orden.
ORDER_VAR = "HARNESS_WRITE_ORDER"
LOG_NAME = "orden"

# Escritura y anotación van juntas: dos hilos no cruzan sus anotaciones (reentrante: un manejador de
# señal que imprime a mitad de una escritura no se traba).
_lock = threading.RLock()


class _Recorded(io.RawIOBase):
    """Un stream binario sobre ``fd`` que anota cada escritura en ``log`` (no cierra ``fd``)."""

    def __init__(self, fd, log):
        super().__init__()
        self.fd, self.log = fd, log

    def write(self, data):
        with _lock:
            view = memoryview(data).cast("B")
            while view:
                written = os.write(self.fd, view)
                os.write(self.log, f"{self.fd} {written}\n".encode())
                view = view[written:]
        return len(data)

    def fileno(self):
        return self.fd

    def writable(self):
        return True


def install():
    """Al arrancar el agente (desde el sitecustomize): sus dos streams anotan el orden. Sus hijos no
    heredan nada: la variable y la carpeta salen del entorno, y se carga el sitecustomize de siempre."""
    folder = os.environ.pop(ORDER_VAR, None)
    if not folder:
        return
    log = os.open(
        os.path.join(folder, LOG_NAME),
        os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
        0o600,
    )
    sys.stdout = sys.__stdout__ = _text(sys.stdout, _Recorded(1, log))
    sys.stderr = sys.__stderr__ = _text(sys.stderr, _Recorded(2, log))
    _forget(folder)


def _text(original, raw):
    """Como el stream del arranque (codificación, errores), pero cada ``write`` sale en el acto."""
    return io.TextIOWrapper(raw, encoding=original.encoding, errors=original.errors, write_through=True)


def _forget(folder):
    """Saca ``folder`` de ``sys.path`` y de ``PYTHONPATH``, y carga el sitecustomize que hubiera tapado."""
    sys.path[:] = [p for p in sys.path if p != folder]
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != folder]
    if rest:
        os.environ["PYTHONPATH"] = os.pathsep.join(rest)
    else:
        os.environ.pop("PYTHONPATH", None)
    # Sin pasar por ``import``: mientras corre este archivo, «sitecustomize» en sys.modules es él.
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


def interleave(stdout, stderr, log):
    """stdout y stderr en el orden del registro ``log`` («fd bytes» por línea). Lo que el registro no
    cubre (una escritura que no pasó por ``sys.stdout``, el aviso de un tope) va al final, stdout primero."""
    streams = {"1": stdout.encode(), "2": stderr.encode()}
    taken = dict.fromkeys(streams, 0)
    parts = []
    for line in log.splitlines():
        fd, _, size = line.partition(" ")
        if fd in streams and size.isdigit():
            parts.append(streams[fd][taken[fd] : taken[fd] + int(size)])
            taken[fd] += int(size)
    parts += [streams[fd][taken[fd] :] for fd in streams]
    return b"".join(parts).decode("utf-8", "replace")


if __name__ == "sitecustomize":  # la copia que importa el agente al arrancar
    install()

"""Provocar una falla de E/S en un archivo del agente, para cualquier lenguaje: ``strace`` inyecta el
error en cada apertura de ese archivo (solo Linux, y solo si strace está instalado y se puede usar)."""

import functools

from harness.runs.launcher import QUIET_STRACE, launch
from harness.runs.strace_log import STRACE

from ..processes import scratch


@functools.cache
def strace_missing():
    """'' si strace puede inyectar fallas aquí, o por qué no."""
    if not STRACE:
        return "hace falta strace (para provocar la falla de disco) y no está instalado"
    with scratch() as w:
        done = launch(["true"], cwd=w, strace=["-f", *QUIET_STRACE])
    if done.ended != "exit" or done.returncode == 127:  # no arrancó (127, como en la terminal) o no terminó
        return "strace no pudo correr aquí"
    return "" if done.returncode == 0 else "strace no puede seguir procesos aquí (¿un contenedor sin ptrace?)"


def failing(path, errno_name):
    """El prefijo que hace fallar con ``errno_name`` cada apertura de ``path`` (relativo a la carpeta)."""
    calls = "openat,open,creat"
    return [
        STRACE,
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        "-P",
        path,
        "-e",
        f"trace={calls}",
        "-e",
        f"inject={calls}:error={errno_name}",
    ]


def without_strace(result):
    """La corrida sin las líneas que strace mismo escribe en stderr («/usr/bin/strace: …»: strace se
    nombra con la ruta con que se lo lanzó)."""
    kept = [line for line in result.stderr.splitlines(keepends=True) if not line.startswith(f"{STRACE}: ")]
    return result._replace(stderr="".join(kept))

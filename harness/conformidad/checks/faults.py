"""Provocar una falla de E/S en un archivo del agente, para cualquier lenguaje: ``strace`` inyecta el
error en cada apertura de ese archivo (solo Linux, y solo si strace está instalado y se puede usar)."""

from harness.runs.launcher import QUIET_STRACE, launch
from harness.runs.strace_log import STRACE

from ..processes import scratch

# Una respuesta que no cambia (strace falta, o no puede seguir procesos) se guarda; un plazo vencido
# bajo carga no: guardado, dejaría sin comprobar todas las filas de strace del proceso (o del kernel).
_known = {}
CANNOT_RUN = "strace no pudo correr aquí"
PROBES = 3


def strace_missing():
    """'' si strace puede inyectar fallas aquí, o por qué no."""
    if "reason" not in _known:
        reason = CANNOT_RUN
        for _ in range(PROBES):
            reason, final = _probe()
            if final:
                _known["reason"] = reason
                break
        return reason
    return _known["reason"]


def _probe():
    """(motivo, si es definitivo) de una prueba de strace con ``true``."""
    if not STRACE:
        return "hace falta strace (para ver y provocar llamadas al sistema) y no está instalado", True
    with scratch() as w:
        done = launch(["true"], cwd=w, strace=["-f", *QUIET_STRACE])
    if done.ended != "exit":  # no terminó en su plazo: bajo carga, se vuelve a probar
        return CANNOT_RUN, False
    if done.returncode == 127:  # no arrancó (127, como en la terminal)
        return CANNOT_RUN, True
    return (
        "" if done.returncode == 0 else "strace no puede seguir procesos aquí (¿un contenedor sin ptrace?)"
    ), True


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

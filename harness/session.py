"""La sesión de un agente en la terminal: entra al directorio de trabajo, valida ``CRASH_AFTER`` y toma
el candado (un solo agente por directorio); lo que salga mal dentro es un ``AgentFailure`` con una
línea en español y su código de salida, nunca una traza. ``SimulatedCrash`` pasa de largo: la caída
simulada la atiende ``main`` (``[kill] …`` y 137, como en la lección).

    with agent_session():
        ...            # Ctrl-C → 130, SIGTERM → 143, SIGHUP → 129; un archivo dañado, el disco lleno → 1

Una falla, una línea en stderr: los avisos de la corrida (``warn``, el de la lección cuando falla la
escritura del registro) se muestran al terminar; si la corrida termina en error, van dentro de esa
misma línea.
"""

import contextlib
import os
import signal
import sys
import threading

from harness.contract import EXIT_FAILED, EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_TERMINATED
from harness.crash import SimulatedCrash, crash_after
from harness.errors import HarnessError, disk_failure
from harness.lock import workdir_lock
from harness.replies import interrupted
from harness.tool_input import ToolOSError
from harness.workdir import enter_workdir

# Las señales que terminan una corrida como un Ctrl-C: (cómo se dice, código de salida).
_STOPS = {"SIGTERM": ("con SIGTERM", EXIT_TERMINATED), "SIGHUP": ("con SIGHUP", EXIT_HANGUP)}
# Los avisos de la sesión en curso (None: no hay sesión, el aviso se muestra enseguida).
_held = None


class AgentFailure(Exception):  # noqa: N818 (no es un error del programa: es la salida de la corrida)
    """Una corrida que termina por un problema esperado: ``str(err)`` es la línea, ``code`` la salida."""

    def __init__(self, line, code):
        super().__init__(line)
        self.code = code


class _Stopped(BaseException):  # noqa: N818 (como KeyboardInterrupt: no la atrapa un «except Exception»)
    """SIGTERM o SIGHUP llegaron: se desenrolla como un Ctrl-C."""

    def __init__(self, how, code):
        super().__init__(how)
        self.how, self.code = how, code


def warn(line):
    """Un aviso para una persona (en stderr). Dentro de ``agent_session`` se guarda hasta el final: si
    la corrida termina en error, va en la misma línea que el error."""
    if _held is None:
        print(line, file=sys.stderr)
    else:
        _held.append(line)


@contextlib.contextmanager
def _stop_signals():
    """Mientras dura la sesión, SIGTERM y SIGHUP se desenrollan como un Ctrl-C (solo en el hilo
    principal, donde Python entrega las señales; Windows no tiene SIGHUP)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}

    def stop(signum, _frame):
        name = signal.Signals(signum).name
        raise _Stopped(*_STOPS[name])

    for name in _STOPS:
        if hasattr(signal, name):
            previous[name] = signal.signal(getattr(signal, name), stop)
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)


def _failure(line, code, warnings):
    """Una sola línea: el error, y si antes hubo avisos, también ellos."""
    if warnings:
        line = f"{line} Antes, durante la corrida: {' / '.join(warnings)}"
    return AgentFailure(line, code)


@contextlib.contextmanager
def agent_session():
    global _held
    outer, _held = _held, []
    warnings = _held
    try:
        with _stop_signals():
            try:
                enter_workdir(os.environ.get("AGENT_WORKDIR"))  # un directorio que no sirve: error claro
                crash_after()  # una etiqueta mal escrita se avisa antes de empezar, no se ignora
                with workdir_lock():  # un segundo agente en el mismo directorio se rechaza, no se mezcla
                    yield
            except KeyboardInterrupt:  # Ctrl-C: una línea que dice dónde quedó el disco
                raise _failure(interrupted(), EXIT_INTERRUPTED, warnings) from None
            except _Stopped as stop:  # SIGTERM, SIGHUP: lo mismo, con su código
                raise _failure(interrupted(stop.how), stop.code, warnings) from None
            except ToolOSError as err:  # una herramienta que falla por el entorno al reanudar
                raise _failure(err.line(), EXIT_FAILED, warnings) from None
            except HarnessError as err:
                raise _failure(str(err), EXIT_FAILED, warnings) from None
            except OSError as err:  # disco lleno, sin permiso…: qué falló y qué quedó
                raise _failure(disk_failure(err), EXIT_FAILED, warnings) from None
            except SimulatedCrash:
                _show(warnings)
                raise
        _show(warnings)
    finally:
        _held = outer


def _show(warnings):
    for line in warnings:
        with contextlib.suppress(OSError, ValueError):
            print(line, file=sys.stderr, flush=True)

"""La sesión de un agente en la terminal: entra al directorio de trabajo, valida ``CRASH_AFTER`` y toma
el candado (un solo agente por directorio); lo que salga mal dentro es un ``AgentFailure`` con una
línea en español y su código de salida, nunca una traza. ``SimulatedCrash`` pasa de largo: la caída
simulada la atiende ``main`` (``[kill] …`` y 137, como en la lección).

    with agent_session():
        ...            # Ctrl-C → 130, SIGTERM → 143, SIGHUP → 129; un archivo dañado, el disco lleno → 1

Una señal, en cualquier momento: dentro de la sesión detiene la corrida con su línea y su código; desde
que la sesión termina (la corrida ya terminó, bien o mal) hasta que el proceso sale, espera: la corrida
muestra su propia última línea y sale con su código (una segunda señal sale enseguida, con una línea).
Así ninguna señal mata al proceso en silencio justo antes de su ``[done]``.

El contrato de stderr (``docs/agente.md``): cada aviso sale cuando ocurre, en su línea, que empieza con
su etiqueta entre corchetes (``warn``: el del registro que no se pudo escribir, como el ``console.error``
de la lección; el de las credenciales); después, a lo sumo una línea final, la del error. Nada más,
nunca una traza: un texto ajeno con saltos de línea se muestra escapado. ``stderr_problems`` lo comprueba.
"""

import contextlib
import os
import re
import signal
import sys
import threading

from harness.contract import EXIT_FAILED, EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_TERMINATED, WORKDIR_VAR
from harness.crash import SimulatedCrash, crash_after
from harness.defenses.early_signals import pending
from harness.defenses.lock import workdir_lock
from harness.defenses.replies import interrupted, note_live
from harness.defenses.workdir import enter_workdir
from harness.errors import HarnessError, disk_failure, one_line
from harness.tool_input import ToolOSError

# Las señales que detienen una corrida: (cómo se dice, código de salida). Windows no tiene SIGHUP.
_STOPS = {
    "SIGINT": ("con Ctrl-C", EXIT_INTERRUPTED),
    "SIGTERM": ("con SIGTERM", EXIT_TERMINATED),
    "SIGHUP": ("con SIGHUP", EXIT_HANGUP),
}


class AgentFailure(Exception):  # noqa: N818 (no es un error del programa: es la salida de la corrida)
    """Una corrida que termina por un problema esperado: ``str(err)`` es la línea (una sola, aunque
    nombre algo ajeno con saltos de línea), ``code`` la salida."""

    def __init__(self, line, code):
        super().__init__(one_line(line))
        self.code = code


class _Stopped(BaseException):  # noqa: N818 (como KeyboardInterrupt: no la atrapa un «except Exception»)
    """Una señal llegó durante la corrida: se desenrolla como un Ctrl-C."""

    def __init__(self, how, code):
        super().__init__(how)
        self.how, self.code = how, code


# Un aviso empieza con su etiqueta entre corchetes («[credenciales] …»); la línea final, no.
NOTICE = re.compile(r"\[[^\]\n]+\] ")


def warn(line):
    """Un aviso para una persona (``line`` empieza con su etiqueta, ver ``NOTICE``), en stderr y
    enseguida: una falla, una línea, que no se repite después."""
    with contextlib.suppress(OSError, ValueError):  # stderr cerrado: el aviso no tumba la corrida
        print(one_line(line), file=sys.stderr, flush=True)


def stderr_problems(text):
    """Lo que el stderr de una corrida (``text``) tiene fuera del contrato: avisos con su etiqueta,
    cuando ocurren, y después a lo sumo una línea final; nunca una traza. Una lista vacía si lo cumple."""
    lines = text.splitlines()
    finals = [i for i, line in enumerate(lines) if not NOTICE.match(line)]
    problems = ["una traza de Python"] if "Traceback (most recent call last)" in text else []
    if len(finals) > 1:
        problems.append(f"{len(finals)} líneas que no son avisos (a lo sumo una, la final)")
    elif finals and finals[0] != len(lines) - 1:
        problems.append("un aviso después de la línea final")
    if text and not text.endswith("\n"):
        problems.append("la última línea no termina")
    return problems


class _Signals:
    """Las señales de una sesión. Mientras corre, la primera detiene la corrida (``_Stopped``); desde
    ``ending()`` esperan a que el proceso salga con la última línea de la corrida. Quien llamó a la
    sesión (``anchor``) marca hasta cuándo: si ya volvió (una prueba, un notebook que siguen
    vivos), la señal vuelve a su manejador de antes."""

    def __init__(self, anchor):
        self.running, self.waiting, self.anchor, self.previous = True, None, anchor, {}

    def install(self):
        for name in _STOPS:
            if hasattr(signal, name):
                self.previous[name] = signal.signal(getattr(signal, name), self.handle)
        early = pending()  # una señal que llegó durante el arranque (``hold_signals``): se atiende ya
        if early:
            self.handle(early, None)

    def ending(self):
        self.running = False

    def handle(self, signum, frame):
        name = signal.Signals(signum).name
        how, code = _STOPS[name]
        if self.running:
            self.running = False  # una sola señal detiene la corrida; las que siguen esperan
            raise _Stopped(how, code)
        if not _on_stack(self.anchor, frame):  # la corrida ya volvió: el manejador de antes
            self._give_back(name, signum, frame)
        elif self.waiting:  # otra señal mientras la corrida termina: salir ya, con una línea
            _say(f"{interrupted(how)} (la corrida ya había terminado; no se mostró su última línea)")
            os._exit(code)
        else:
            self.waiting = name

    def _give_back(self, name, signum, frame):
        for other, handler in self.previous.items():
            if handler is not None:  # None: lo puso C, no Python; no se puede volver a poner
                signal.signal(getattr(signal, other), handler)
        handler = self.previous[name]
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), signum)


def _on_stack(target, frame):
    while frame is not None:
        if frame is target:
            return True
        frame = frame.f_back
    return False


# Cuántas llamadas puede haber entre el ``<module>`` de un script y quien abre la sesión (el ``main``
# del agente, o el ``agent_main`` que llama el ``main`` de los de «Más allá»).
_SCRIPT_DEPTH = 3


def _anchor():
    """El marco que dura lo que dura la corrida: el ``<module>`` del script si la sesión se abrió desde
    su ``main`` (el proceso sale después de mostrar la última línea), o si no, el de quien abrió la
    sesión (una prueba o un notebook, que siguen vivos después)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in (__file__, contextlib.__file__):
        frame = frame.f_back
    top = frame
    for _ in range(_SCRIPT_DEPTH):
        if top is None:
            break
        if top.f_code.co_name == "<module>" and top.f_globals.get("__name__") == "__main__":
            return top
        top = top.f_back
    return frame


def _say(line):
    with contextlib.suppress(OSError):
        os.write(2, (one_line(line) + "\n").encode("utf-8", "replace"))


def _failure(err):
    """(línea, código) de lo que detuvo la corrida."""
    if isinstance(err, KeyboardInterrupt):
        return interrupted(), EXIT_INTERRUPTED
    if isinstance(err, _Stopped):
        return interrupted(err.how), err.code
    if isinstance(err, ToolOSError):  # una herramienta que falla por el entorno al reanudar
        return err.line(), EXIT_FAILED
    if isinstance(err, HarnessError):
        return str(err), EXIT_FAILED
    return disk_failure(err), EXIT_FAILED  # OSError: disco lleno, sin permiso…: qué falló y qué quedó


_STOPPING = (KeyboardInterrupt, _Stopped, ToolOSError, HarnessError, OSError)


@contextlib.contextmanager
def agent_session():
    signals = _Signals(_anchor())
    try:
        try:
            if threading.current_thread() is threading.main_thread():  # Python entrega las señales ahí
                signals.install()  # una señal a mitad de esto ya detiene la corrida con su línea
            note_live(False)  # hasta que la corrida pida el modelo real (make_client)
            enter_workdir(os.environ.get(WORKDIR_VAR))  # un directorio que no sirve: error claro
            crash_after()  # una etiqueta mal escrita se avisa antes de empezar, no se ignora
            with workdir_lock():  # un segundo agente en el mismo directorio se rechaza, no se mezcla
                yield
        finally:
            signals.ending()  # la corrida terminó: una señal desde aquí espera a su última línea
    except SimulatedCrash:
        raise
    except _STOPPING as err:  # también una señal que llegó mientras se atendía otro error
        signals.ending()
        line, code = _failure(err)
        raise AgentFailure(line, code) from None

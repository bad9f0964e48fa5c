"""Las señales desde el arranque de un agente hasta su sesión (``harness.defenses.session``).

Antes de la sesión, Python deja SIGTERM y SIGHUP con su efecto de siempre (el proceso muere sin una
línea) y Ctrl-C con una traza de ``KeyboardInterrupt``; y los imports de un agente pueden tardar (el de
DBOS, más de un segundo). ``hold_signals()``, la primera línea de un agente, hace que esas señales
queden anotadas en vez de matarlo: la sesión las atiende apenas empieza, con la línea y el código de
siempre (``Interrumpido con SIGTERM…``, 143). No importa nada del paquete: cuesta lo mismo que un
``import signal``.
"""

import signal

_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")  # Windows no tiene SIGHUP
_pending = []


def hold_signals():
    """Desde aquí hasta la sesión, una señal de parada espera (la primera que llega)."""
    for name in _NAMES:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _hold)


def _hold(signum, _frame):
    if not _pending:
        _pending.append(signum)


def pending():
    """El número de la primera señal que llegó antes de la sesión, o None."""
    return _pending[0] if _pending else None

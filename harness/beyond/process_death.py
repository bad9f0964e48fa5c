"""Morir de verdad en un punto de caída: imprimir ``[kill] …`` y salir con 137 sin pasar por nada más;
detenerse con una línea y salida 1 sin que el motor anote nada (``stop_here``); y salir sin esperar a
los hilos del motor (``leave``).

Dentro de un paso de DBOS no sirve lanzar ``SimulatedCrash``: el motor la atraparía y anotaría el
paso como fallido, justo lo contrario de una muerte. ``os._exit`` termina el proceso sin que ningún
``except`` ni ``finally`` corra, como un SIGKILL: lo que no llegó a la base de datos no está.
"""

import os
import sys

from harness.contract import EXIT_FAILED, EXIT_KILLED, kill_line
from harness.crash import SimulatedCrash, crash_point


def die_at(kind):
    """``crash_point(kind)``; si su etiqueta es la de ``CRASH_AFTER``, el proceso muere con 137."""
    try:
        crash_point(kind)
    except SimulatedCrash as err:
        print(kill_line(err))
        leave(EXIT_KILLED)


def stop_here(line):
    """Termina la corrida con ``line`` en stderr y salida 1, sin volver al motor: un flujo que no
    terminó (el tope de turnos, un final sin su reporte) queda PENDING en la base, y ``--resume`` lo
    sigue desde su último paso anotado, en vez de quedar SUCCESS con un resultado que no lo es."""
    sys.stdout.flush()
    print(line, file=sys.stderr)
    leave(EXIT_FAILED)


def leave(code):
    """Sale con ``code`` después de vaciar stdout y stderr, sin esperar a nada más: ni a un hilo del
    motor que sigue dentro de un paso (un modelo que no contesta), ni a ``atexit``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # una salida cerrada: el código de salida igual llega
            pass
    os._exit(code)

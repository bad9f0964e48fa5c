"""Lo que cuesta la maquinaria de la lección frente a un turno del modelo («Proporción»).

Las escrituras se miden con las funciones de la lección, en el directorio actual. El turno del modelo
solo cuenta si es del modelo real: con una credencial en el entorno, una llamada de ``--live``; sin
ella no se mide, y la salida lo dice y cita de dónde sale la cifra con la que se compara. El modelo
guionado no es un turno del modelo: contesta desde la memoria, sin red, y compararlo no enseña nada.

    from harness.notebook.turn_cost import durable_turn, show_turn_cost, time_turns
"""

import json
import os
import time
from typing import NamedTuple

from harness.base_loop import ask_model
from harness.contract import CHECKPOINT_FILE, CREDENTIALS, EFFECTS_FILE
from harness.defenses.durable import write_durable
from harness.errors import HarnessError
from harness.text import number
from harness.tools import TOOLS

TURNS = 20
# Sin credencial, la cifra con la que se compara: el orden de magnitud del texto de la lección, no una
# medición. La tarea de la lección hace cuatro llamadas al modelo (tres herramientas y el cierre).
LESSON_MODEL_MS = 1000
LESSON_SOURCE = (
    "la lección («Proporción») habla de «una tarea chica que termina en unos segundos»; con las "
    "cuatro llamadas al modelo de esta tarea, del orden de 1 s por llamada"
)


class Turns(NamedTuple):
    """Lo medido: milisegundos por turno y, tras cada turno, los bytes que escribió."""

    ms: float
    written: list

    def bytes_in_turn(self, turn):
        return self.written[turn - 1]


def time_turns(step, files=(), turns=TURNS):
    """Corre ``step(turn)`` ``turns`` veces y mide su tiempo. Los bytes de un turno son los tamaños de
    ``files`` tras el turno, un archivo por cada escritura (cada una reescribe el archivo entero)."""
    elapsed, written = 0.0, []
    for turn in range(1, turns + 1):
        start = time.perf_counter()
        step(turn)
        elapsed += time.perf_counter() - start
        written.append(sum(os.path.getsize(path) for path in files))
    return Turns(elapsed / turns * 1000, written)


def durable_turn(cp, checkpoint_path=CHECKPOINT_FILE, effects_path=EFFECTS_FILE):
    """Las tres escrituras de un turno (punto A, anotación, punto B) con los fsync de producción
    (``write_durable``): el registro se lee y se reescribe entero, como en ``save_effect``."""

    def step(turn):
        data = json.dumps(cp, ensure_ascii=False, indent=2).encode("utf-8")
        write_durable(checkpoint_path, data)
        effects = {}
        if os.path.exists(effects_path):
            with open(effects_path, "rb") as f:
                effects = json.loads(f.read())
        effects[f"toolu_{turn:02d}"] = {
            "name": "read_notes",
            "result": "notas",
            "at": int(time.time() * 1000),
        }
        write_durable(effects_path, json.dumps(effects, ensure_ascii=False, indent=2).encode("utf-8"))
        write_durable(checkpoint_path, data)

    return step


def has_credentials():
    return any(os.environ.get(name) for name in CREDENTIALS)


def model_turn_ms(messages):
    """Milisegundos de un turno del modelo real: una llamada de --live con la conversación
    ``messages`` y las herramientas de la tarea. Crear el cliente (importar el SDK) no se cuenta."""
    from harness.defenses.clients import make_client  # el SDK, solo si se va a medir

    client = make_client(live=True)
    start = time.perf_counter()
    ask_model(client, TOOLS, messages)
    return (time.perf_counter() - start) * 1000


def ms_text(ms):
    """«0,55 ms»: con coma decimal, como se escriben los números en el curso."""
    return f"{ms:.2f}".replace(".", ",") + " ms"


def times_text(ratio):
    """«unas 650 veces»: dos cifras significativas bastan para un orden de magnitud."""
    return f"unas {number(int(float(f'{ratio:.2g}')))} veces"


def model_figure(messages):
    """(milisegundos, None) de un turno medido con --live, o (None, por qué no se midió)."""
    if not has_credentials():
        return None, f"no hay {CREDENTIALS[0]}; con ella, esta celda lo mide con una llamada de --live"
    try:
        return model_turn_ms(messages), None
    except HarnessError as err:  # sin red, una clave rechazada…: una línea, y la cifra citada
        return None, f"la llamada de --live falló: {err}"


def show_turn_cost(writes, durable, messages):
    """Imprime las escrituras de un turno, sin y con fsync, y el turno del modelo a su lado: el medido,
    o la cifra citada de la lección, dicho como tal."""
    print(f"tres escrituras atómicas por turno:    {ms_text(writes.ms)}")
    print(f"las mismas, con fsync (write_durable): {ms_text(durable.ms)}")
    model_ms, why_not = model_figure(messages)
    if model_ms is None:
        print(f"un turno del modelo real: no se mide aquí ({why_not})")
        print(f"la cifra con la que se compara no es una medición: {LESSON_SOURCE}")
        ratio = times_text(LESSON_MODEL_MS / durable.ms)
        print(f"a ese orden, un turno del modelo dura {ratio} lo que las tres escrituras con fsync")
    else:
        print(f"un turno del modelo real (--live), medido ahora con una llamada: {ms_text(model_ms)}")
        print(f"ese turno dura {times_text(model_ms / durable.ms)} lo que las tres escrituras con fsync")

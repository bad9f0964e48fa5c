"""Lo que comparten las comprobaciones: las corridas por etiqueta (hechas una sola vez por suite y
juzgadas por varias capacidades), la lectura del disco y las filas de una llamada a una función.

Una corrida por etiqueta es: una corrida nueva que muere en la etiqueta; un ``--resume`` que muere en
su primer punto B (el rellenado, si había llamada colgante); y, tras un is_error, un segundo
``--resume`` que termina (``goes_on``).
"""

import json
import os
import threading
from typing import NamedTuple

from harness.contract import (
    CHECKPOINT_FILE,
    EXIT_KILLED,
    EXIT_USAGE,
    IS_ERROR,
    VARIANT_VAR,
    crash_message,
    kill_line,
    parse_log,
)
from harness.notebook.disk_state import read_disk_state
from harness.scenario import EXPECTED, SAVE_B, TASK, TURNS, moment, split
from harness.text import shorten
from harness.tools import NOTES_PATH

from ..processes import missing, run, scratch
from ..rows import judged, not_yet

RESUME_CRASH = f"{SAVE_B}:1"  # el primer punto B de un --resume: el rellenado, si había colgante


PYTHON_DRIVER = "llama una función del agente en Python (harness.conformidad.driver)"
SCRIPTED_LOG = "deja al agente esperando en el registro de pedidos del modelo guionado de harness"


def needs(why):
    """Marca una fila que necesita algo más que la línea de comandos del agente (``why``): con un agente
    en otro lenguaje, esa fila «no aplica» por eso."""

    def mark(function):
        function.needs = why
        return function

    return mark


def read_json(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def said(result):
    """Lo que devolvió o lanzó una llamada, en pocas palabras."""
    if "error" in result:
        return shorten(f"{result['error']}: {result['message']}")
    return shorten(f"devolvió {json.dumps(result['value'], ensure_ascii=False)}", 100)


def row_or_not_yet(result, scenario, expected, ok, got, hint):
    """La fila de una llamada a una función del agente: «todavía no» si el agente dice que le falta."""
    piece = missing(result.get("message"))
    if piece:
        return not_yet(scenario, expected, piece)
    return judged(scenario, expected, got, ok, hint, result.get("message", "") if "error" in result else "")


def sample_checkpoint():
    """Un punto de control del turno 1, con read_notes colgante (como lo guarda el punto A)."""
    call_1 = {"id": TURNS[1].id, "name": TURNS[1].name, "input": {"path": NOTES_PATH}}
    return {
        "version": 1,
        "task": TASK,
        "turns": 1,
        "tokensUsed": 60,
        "messages": [{"role": "user", "content": TASK}],
        "pendingToolUse": call_1,
    }


def died_at(result, label):
    """¿Murió esta corrida con la caída simulada ``label``?"""
    return result.returncode == EXIT_KILLED and kill_line(crash_message(label)) in result.stdout


def refilled_then_died(result):
    """¿La última línea de punto B antes del [kill] es la del punto B rellenado?"""
    lines = parse_log(result.stdout)
    saves = [p for p in lines if p.kind == "save"]
    return bool(saves) and saves[-1].point == "B" and saves[-1].refilled and lines[-1].kind == "kill"


def goes_on(label):
    """¿Hace falta un segundo --resume tras el punto B rellenado? No si reconcile reutilizó o volvió a
    ejecutar: el punto de control rellenado es entonces el de after-save-b del mismo turno, cuyo
    --resume hasta el final juzga su propia fila. Sí tras is_error: el modelo sigue otro camino."""
    return EXPECTED[label].branch == IS_ERROR


def ended(result):
    """Cómo terminó una corrida, en pocas palabras (con su última línea de stderr)."""
    lines = [line for line in (result.stderr or "").splitlines() if line.strip()]
    last = f": «{shorten(lines[-1], 120)}»" if lines else ""
    return f"código {result.returncode}{last}"


def crash_hint(result, label):
    """Por qué una corrida no murió en ``label``."""
    if "Traceback" in (result.stderr or ""):
        return "el agente terminó con una traza de Python: mira las últimas líneas de su stderr, abajo"
    if result.returncode == EXIT_USAGE:
        return f"el agente rechazó su línea de comandos o su {VARIANT_VAR} (código {EXIT_USAGE}): mira su stderr, abajo"
    if result.returncode == -1:
        return "la corrida no terminó: ¿un bucle, o espera algo que no llega?"
    if kill_line(crash_message(label)) in (result.stdout or ""):
        return f"la caída ocurrió ahí, pero el agente salió con código {result.returncode}: una caída simulada sale con {EXIT_KILLED}"
    return f"la caída {moment(label)} nunca ocurrió: ¿llama tu agente a crash_point('{split(label)[0]}') ahí?"


def crash_first(ctx, w, label, scenario, expected, section="", **options):
    """Una corrida nueva en ``w`` que tiene que morir en ``label``: (corrida, None), o (corrida, la fila
    ✗ que dice por qué no murió ahí)."""
    crashed = run(ctx, w, crash_after=label, **options)
    if died_at(crashed, label):
        return crashed, None
    got = f"no murió en {label}: {ended(crashed)}"
    return crashed, judged(
        scenario, expected, got, False, crash_hint(crashed, label), crashed.stderr, section
    )


class LabelRecord(NamedTuple):
    """Todo lo que pasó con una etiqueta: las tres corridas y el disco después de cada una."""

    label: str
    crash: object  # AgentRun
    after_crash: object  # DiskState
    resume: object  # el primer --resume (muere en RESUME_CRASH si había colgante)
    after_resume: object
    last: object  # el segundo --resume, o None si el primero ya terminó
    final: object

    @property
    def finished(self):
        return self.last or self.resume

    def stderr(self):
        return "\n".join(r.stderr for r in (self.crash, self.resume, self.last) if r and r.stderr)

    def missing_piece(self):
        return next((m for r in (self.crash, self.resume, self.last) if r and (m := missing(r.stderr))), None)


def _label_record(ctx, label):
    with scratch() as w:
        crash = run(ctx, w, crash_after=label)
        after_crash = read_disk_state(w)
        pending = after_crash.pending is not None
        resume = run(ctx, w, resume=True, crash_after=RESUME_CRASH if pending else None)
        after_resume = read_disk_state(w)
        last = run(ctx, w, resume=True) if resume.returncode == EXIT_KILLED and goes_on(label) else None
        final = read_disk_state(w) if last else after_resume
        return LabelRecord(label, crash, after_crash, resume, after_resume, last, final)


def _clean_record(ctx):
    with scratch() as w:
        return run(ctx, w), read_disk_state(w)


class Runs:
    """Las corridas de una suite: cada etiqueta se corre una vez, la pida la capacidad que la pida (y
    aunque la pidan dos hilos a la vez); y una corrida sin caída, con la que se comparan los finales."""

    def __init__(self, ctx):
        self.ctx, self._done, self._locks, self._lock = ctx, {}, {}, threading.Lock()

    def _once(self, key, make):
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._done:
                self._done[key] = make(self.ctx)
            return self._done[key]

    def label(self, label):
        return self._once(label, lambda ctx: _label_record(ctx, label))

    def clean(self):
        """(corrida, disco al terminar) de una corrida nueva sin caída."""
        return self._once(None, _clean_record)


def checkpoint_of(state):
    return state.checkpoint if isinstance(state.checkpoint, dict) else {}


def write(path, content):
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode, **({} if isinstance(content, bytes) else {"encoding": "utf-8"})) as f:
        f.write(content)


def checkpoint_path(w):
    return os.path.join(w, CHECKPOINT_FILE)

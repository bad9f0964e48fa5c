"""La Práctica: un momento nuevo cada vez que lo pides, tu predicción y la corrida de verdad que la mide.

``Practice.draw`` saca un momento de la familia de práctica (``moments.PRACTICE``: la tarea de la
lección, ninguno con nota), de la dificultad que pidas o de cualquiera: nunca el mismo dos veces
seguidas, y ninguno se repite hasta que salieron todos los de esa dificultad. ``Practice.check`` revisa
la forma de tu predicción (las siete claves del Nivel 1) y solo si está escrita corre el momento de
verdad con el agente de la lección que arman tus celdas ``#| export`` (``moment_run``: ``CRASH_AFTER``,
el disco, ``--resume``): la respuesta aparece después de que escribiste la tuya. Muestra el disco, la
rama y, por cada clave equivocada, el razonamiento que lleva a su valor (``moment_reasons``). Cuenta tu
racha: un momento con las siete claves bien la alarga; una clave mal la corta.
"""

import os
import random
from typing import NamedTuple

from harness.defenses.workdir import fresh_dir
from harness.errors import HarnessError
from harness.notebook.disk_state import read_disk_state
from harness.notebook.display import show_table
from harness.notebook.exercise_feedback import FIELDS, LESSON, format_problems, same_value
from harness.notebook.export import render_agent
from harness.notebook.moment_reasons import reasoned
from harness.notebook.moment_run import observe
from harness.notebook.moments import PRACTICE, agent_source
from harness.notebook.prediction import shown
from harness.text import plural

WORKDIR = os.path.join("_trabajo", "practica")
LEVELS = sorted({m.difficulty for m in PRACTICE.values()})
# Lo que se dice si lo medido contradice el razonamiento: el agente no es el de la lección tal cual.
CHANGED = "lo medido no es lo que razona la lección (¿cambiaste una celda #| export de la lección?)"
ASK = "escribe tu predicción en la celda de arriba (cada ... por tu valor) y vuelve a ejecutar esta celda"


class Verdict(NamedTuple):
    """Lo que dejó una comprobación: el momento, sus siete claves medidas, las equivocadas y la racha."""

    moment: object
    observed: dict
    wrong: tuple
    streak: int


def pool(difficulty=None):
    """Los ids de la práctica de esa dificultad (o de todas), en orden."""
    if difficulty is not None and difficulty not in LEVELS:
        said = f"{', '.join(map(str, LEVELS[:-1]))} o {LEVELS[-1]}"
        raise ValueError(f"la dificultad es {said}, o ninguna para cualquiera")
    return [i for i, m in PRACTICE.items() if difficulty is None or m.difficulty == difficulty]


class Practice:
    """Tu serie de práctica. ``seed`` fija la serie (la misma semilla, los mismos momentos)."""

    def __init__(self, seed=None, folder=WORKDIR, lesson=LESSON):
        self._random = random.Random(seed)
        self._folder, self._lesson = folder, lesson
        self._dealt = set()  # los que ya salieron en esta vuelta
        self._agents = {}
        self.moment, self.checked, self.streak, self.last = None, False, 0, None

    def draw(self, difficulty=None):
        """Saca un momento nuevo (de ``difficulty``, 1, 2 o 3, si la das) y lo describe."""
        try:
            ids = pool(difficulty)
        except ValueError as err:
            print(f"✗ {err}")
            return
        previous = self.moment.id if self.moment else None
        fresh = [i for i in ids if i not in self._dealt and i != previous]
        if not fresh:  # salieron todos: otra vuelta, sin repetir el último
            self._dealt -= set(ids)
            fresh = [i for i in ids if i != previous]
        self.moment, self.checked = PRACTICE[self._random.choice(fresh)], False
        self._dealt.add(self.moment.id)
        print(self.moment.describe())
        print("Escribe tu predicción en la celda de abajo y comprueba con practica.check(prediction).")

    def problem(self, prediction):
        """Por qué ``prediction`` todavía no se puede comprobar (None si se puede): sin revelar nada."""
        if self.moment is None:
            return "todavía no hay momento: saca uno con practica.draw()"
        if self.checked:
            return f"ya comprobaste {self.moment.id} y viste su respuesta: saca otro con practica.draw()"
        found = format_problems(prediction, FIELDS)
        if not found:
            return None
        if type(prediction) is dict and all(v is Ellipsis for v in prediction.values()):
            return f"{self.moment.id}: {ASK}"
        return f"{self.moment.id}: {ASK}\n" + "\n".join(f"  ✗ {key}: {why}" for key, why in found)

    def agent(self, variant):
        """El ``agent.py`` de ``variant``: el de tus celdas ``#| export`` de la lección, con su cambio."""
        if variant not in self._agents:
            if not os.path.exists(self._lesson):
                raise HarnessError(f"No encuentro {self._lesson}: abre la Práctica desde notebooks/.")
            path = os.path.join(self._folder, "agentes", f"{variant.replace('-', '_')}.py")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(agent_source(variant, render_agent([self._lesson])))
            self._agents[variant] = path
        return self._agents[variant]

    def answer(self, prediction):
        """Corre el momento de verdad y juzga ``prediction`` (ya con su forma): el ``Verdict``, lo observado
        (``moment_run.Observation``) y el disco al final."""
        workdir = fresh_dir(os.path.abspath(os.path.join(self._folder, self.moment.id)))
        seen = observe(workdir, os.path.abspath(self.agent(self.moment.agent)), self.moment)
        wrong = tuple(k for k in FIELDS if not same_value(k, prediction[k], seen.keys[k]))
        self.streak = 0 if wrong else self.streak + 1
        self.checked, self.last = True, Verdict(self.moment, seen.keys, wrong, self.streak)
        return self.last, seen, read_disk_state(workdir)

    def check(self, prediction):
        """Revisa la forma de ``prediction``; si está escrita, corre el momento y muestra qué pasó."""
        problem = self.problem(prediction)
        if problem:
            print(f"✗ {problem}")
            return
        try:
            verdict, seen, end = self.answer(prediction)
        except HarnessError as err:
            print(f"✗ {err}")
            return
        show(verdict, seen, end, prediction)


def show(verdict, seen, end, prediction):
    """El disco tras la caída y tras ``--resume`` (``end``), la rama, tu predicción junto a lo medido y,
    por cada clave equivocada, por qué vale lo que vale."""
    after = end.rows()
    rows = [(name, text, after[i][1]) for i, (name, text) in enumerate(seen.crashed_state.rows())]
    show_table(["archivo", "justo tras la caída", "tras --resume"], rows)
    print(f"rama de --resume: «{seen.keys['reconcile_branch']}»; salió con código {seen.resumed.returncode}")
    marks = [
        [key, shown(prediction[key]), shown(value), "✗" if key in verdict.wrong else "✓"]
        for key, value in verdict.observed.items()
    ]
    show_table(["clave", "tu predicción", "lo medido", ""], marks)
    reasons = reasoned(verdict.moment)
    for key in verdict.wrong:
        value, why = reasons[key]
        said = why if same_value(key, value, verdict.observed[key]) else CHANGED
        print(f"✗ {key}: {said}.")
    right = len(FIELDS) - len(verdict.wrong)
    print(f"{verdict.moment.id}: {right} de {len(FIELDS)} claves bien. " + streak_text(verdict))


def streak_text(verdict):
    if verdict.wrong:
        return "La racha vuelve a 0. Saca otro momento con practica.draw()."
    run = plural(verdict.streak, "momento", "momentos seguidos")
    return f"Racha: {run} con las siete claves bien. Saca otro con practica.draw()."

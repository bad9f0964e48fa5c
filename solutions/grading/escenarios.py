"""Los escenarios del Nivel 1 que nada de lo que se reparte puede correr, armados solo aquí.

El ejercicio los describe en prosa y la verdad se mide con ellos (``truth``): son el agente de la
lección (``solutions/agent_leccion.py``, lo único que los ejercicios suponen leído) con un cambio,
corrido como proceso de verdad (``CRASH_AFTER``, ``--resume``).

- La tarea del nivel suma una segunda herramienta con efecto secundario, ``notify_team``: agrega una
  línea a ``avisos.txt``. El modelo guionado la pide apenas el reporte queda escrito (o verificado) y,
  si vuelve con ``is_error``, la pide otra vez: no tiene con qué verificarla.
- «Punto A tarde»: el punto A se guarda después de empujar el turno del asistente a ``messages`` (en
  la lección, antes). El resto del agente, ``resume_scene`` incluido, no cambia.
- «Solo el punto B»: ``run_agent`` sin las líneas del punto A (el agente de la lección no lee
  ``AGENT_VARIANT``: la variante se arma en su texto, como la anterior).
"""

import os

from harness import scripted_model, tools
from harness.defenses.durable import read_present, write_durable
from harness.tool_input import text_arg, tool_path
from solutions.grading.paths import LESSON_AGENT

NOTIFY = "notify_team"
NOTICES_PATH = "avisos.txt"
NOTICE_INPUT = {"path": NOTICES_PATH, "text": "Reporte listo en report.txt\n"}
NOTIFIED_TEXT = "Reporte escrito en report.txt y equipo avisado, tarea completa."

# Las dos líneas de ``run_agent`` que «punto A tarde» cambia de orden (una sola vez cada una).
ASSISTANT_PUSH = '        messages.append({"role": "assistant", "content": content})\n'
POINT_A = "        # —— Punto A"
# La última línea del bloque del punto A: «solo el punto B» borra desde POINT_A hasta ella, inclusive.
POINT_A_END = '        crash_point("after-save-a")\n'
# Cada cambio de los escenarios sobre el texto del agente (None: el agente de la lección tal cual).
LATE_A, ONLY_B = "punto-a-tarde", "solo-b"
# El agente del escenario: instala la segunda herramienta y corre el agente como programa.
RUNNER = """import runpy
import sys

from solutions.grading import escenarios

escenarios.install_notify()
sys.argv[0] = {agent!r}
runpy.run_path({agent!r}, run_name="__main__")
"""


def notify_team(tool_input):
    """Agrega ``text`` al final del archivo (efecto secundario, como ``write_report``)."""
    path, text = tool_path(tool_input), text_arg(tool_input, "text")
    write_durable(path, (read_present(path) or b"") + text.encode("utf-8"))
    return f"Aviso agregado a {tool_input['path']}"


def with_notice(next_step):
    """El guion de la lección, con ``notify_team`` antes de cada final que da la tarea por hecha."""

    def step(messages):
        content = messages[-1]["content"]  # el primero es el texto de la tarea
        results = [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
        last = results[-1] if results else None
        if last and scripted_model._tool_uses(messages)[last["tool_use_id"]]["name"] == NOTIFY:
            return (NOTIFY, NOTICE_INPUT) if last.get("is_error") else (None, NOTIFIED_TEXT)
        name, value = next_step(messages)
        if name is None and value in (scripted_model.FINAL_TEXT, scripted_model.VERIFIED_TEXT):
            return NOTIFY, NOTICE_INPUT
        return name, value

    return step


def install_notify():
    """En el proceso del agente: la herramienta en el arnés y su paso en el guion (ninguno de los dos
    se extiende desde afuera: se reemplazan sus piezas en este proceso, y solo en él)."""
    tools.TOOL_IMPLS[NOTIFY] = notify_team
    scripted_model._next_step = with_notice(scripted_model._next_step)


def _once(source, *lines):
    """Las líneas que un cambio toca están una sola vez en ``source``, o el cambio no se puede hacer."""
    if any(source.count(line) != 1 for line in lines):
        raise RuntimeError("run_agent ya no tiene la forma que cambian los escenarios: revisa escenarios.py")


def point_a_late(source):
    """El texto del agente con el turno del asistente empujado antes de guardar el punto A."""
    _once(source, ASSISTANT_PUSH, POINT_A)
    return source.replace(ASSISTANT_PUSH, "").replace(POINT_A, ASSISTANT_PUSH + POINT_A)


def only_b(source):
    """El texto del agente sin el bloque del punto A: nada guarda la llamada colgante."""
    _once(source, POINT_A, POINT_A_END)
    start = source.index(POINT_A)
    return source[:start] + source[source.index(POINT_A_END, start) + len(POINT_A_END) :]


CHANGES = {LATE_A: point_a_late, ONLY_B: only_b}


def build(folder, change=None):
    """Escribe en ``folder`` el agente del escenario (el de la lección con ``change``) y devuelve la
    ruta a correr."""
    agent = LESSON_AGENT
    if change:
        agent = os.path.join(folder, f"agente_{change.replace('-', '_')}.py")
        with open(LESSON_AGENT, encoding="utf-8") as f:
            source = CHANGES[change](f.read())
        with open(agent, "w", encoding="utf-8") as f:
            f.write(source)
    runner = os.path.join(folder, "agente_del_escenario.py")
    with open(runner, "w", encoding="utf-8") as f:
        f.write(RUNNER.format(agent=agent))
    return runner


def notices(workdir):
    """Cuántos avisos hay en ``avisos.txt`` (0 si no existe)."""
    data = read_present(os.path.join(workdir, NOTICES_PATH))
    return 0 if data is None else data.decode("utf-8").count(NOTICE_INPUT["text"])

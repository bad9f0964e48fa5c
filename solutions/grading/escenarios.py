"""Los escenarios del Nivel 1 que nada de lo que se reparte puede correr, armados solo aquí.

El ejercicio los describe en prosa y la verdad se mide con ellos (``truth``): son el agente de
referencia con un cambio, corrido como proceso de verdad (``CRASH_AFTER``, ``--resume``).

- La tarea del nivel suma una segunda herramienta con efecto secundario, ``notify_team``: agrega una
  línea a ``avisos.txt``. El modelo guionado la pide apenas el reporte queda escrito (o verificado) y,
  si vuelve con ``is_error``, la pide otra vez: no tiene con qué verificarla.
- «Punto A tarde»: el punto A se guarda después de empujar el turno del asistente a ``messages`` (en
  la lección, antes). El resto del agente, ``resume_scene`` incluido, no cambia.
"""

import os

from harness import scripted_model, tools
from harness.defenses.durable import read_present, write_durable
from harness.tool_input import text_arg, tool_path
from solutions.grading.paths import REFERENCE_AGENT

NOTIFY = "notify_team"
NOTICES_PATH = "avisos.txt"
NOTICE_INPUT = {"path": NOTICES_PATH, "text": "Reporte listo en report.txt\n"}
NOTIFIED_TEXT = "Reporte escrito en report.txt y equipo avisado, tarea completa."

# Las dos líneas de ``run_agent`` que «punto A tarde» cambia de orden (una sola vez cada una).
ASSISTANT_PUSH = '        messages.append({"role": "assistant", "content": content})\n'
POINT_A = "        # —— Punto A"
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


def point_a_late(source):
    """El texto del agente con el turno del asistente empujado antes de guardar el punto A."""
    if source.count(ASSISTANT_PUSH) != 1 or source.count(POINT_A) != 1:
        raise RuntimeError("run_agent ya no tiene la forma que «punto A tarde» cambia: revisa escenarios.py")
    return source.replace(ASSISTANT_PUSH, "").replace(POINT_A, ASSISTANT_PUSH + POINT_A)


def build(folder, late_a=False):
    """Escribe en ``folder`` el agente del escenario y devuelve la ruta a correr."""
    agent = REFERENCE_AGENT
    if late_a:
        agent = os.path.join(folder, "agente_punto_a_tarde.py")
        with open(REFERENCE_AGENT, encoding="utf-8") as f:
            source = point_a_late(f.read())
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

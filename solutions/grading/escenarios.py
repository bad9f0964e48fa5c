"""Los agentes de los momentos del Nivel 1, armados solo aquí: con la segunda herramienta, ``notify_team``.

El ejercicio describe cada momento en prosa (``harness.notebook.moments``) y la verdad se mide con
estos agentes (``truth``): el de la lección (``solutions/agent_leccion.py``, lo único que los ejercicios
suponen leído) con el cambio de su variante, corrido como proceso de verdad (``CRASH_AFTER``,
``--resume``). Las tareas con aviso no las corre ningún notebook: la herramienta y su paso en el guion
se instalan solo en el proceso del agente de un momento.

- ``notify_team`` agrega una línea a ``avisos.txt``. Con «aviso después», el modelo guionado la pide
  apenas el reporte queda escrito (o verificado); con «aviso antes», apenas contó las palabras, y
  escribe el reporte después del aviso. Si vuelve con ``is_error``, la pide otra vez: no tiene con qué
  verificarla.
"""

import os

from harness import scripted_model, tools
from harness.defenses.durable import read_present, write_durable
from harness.notebook import moments
from harness.notebook.moments import NOTICE_TEXT, NOTICES_PATH, NOTIFY
from harness.tool_input import text_arg, tool_path
from solutions.grading.paths import LESSON_AGENT

NOTICE_INPUT = {"path": NOTICES_PATH, "text": NOTICE_TEXT}
NOTIFIED_TEXT = "Reporte escrito en report.txt y equipo avisado, tarea completa."
# El agente de un momento: instala la segunda herramienta (según la tarea) y corre el agente como programa.
RUNNER = """import runpy
import sys

from solutions.grading import escenarios

escenarios.install_notify({task!r})
sys.argv[0] = {agent!r}
runpy.run_path({agent!r}, run_name="__main__")
"""


def notify_team(tool_input):
    """Agrega ``text`` al final del archivo (efecto secundario, como ``write_report``)."""
    path, text = tool_path(tool_input), text_arg(tool_input, "text")
    write_durable(path, (read_present(path) or b"") + text.encode("utf-8"))
    return f"Aviso agregado a {tool_input['path']}"


def _last_result(messages):
    """(nombre de la herramienta, ¿con is_error?) del último tool_result recibido, o (None, False)."""
    content = messages[-1]["content"]  # el primero es el texto de la tarea
    results = [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
    if not results:
        return None, False
    name = scripted_model._tool_uses(messages)[results[-1]["tool_use_id"]]["name"]
    return name, bool(results[-1].get("is_error"))


def notify_after(next_step):
    """El guion de la lección, con ``notify_team`` antes de cada final que da la tarea por hecha."""

    def step(messages):
        name, failed = _last_result(messages)
        if name == NOTIFY:
            return (NOTIFY, NOTICE_INPUT) if failed else (None, NOTIFIED_TEXT)
        name, value = next_step(messages)
        if name is None and value in (scripted_model.FINAL_TEXT, scripted_model.VERIFIED_TEXT):
            return NOTIFY, NOTICE_INPUT
        return name, value

    return step


def notify_first(next_step):
    """El guion de la lección, con ``notify_team`` antes del primer ``write_report``."""

    def step(messages):
        name, failed = _last_result(messages)
        if name == NOTIFY:
            return (
                (NOTIFY, NOTICE_INPUT)
                if failed
                else (scripted_model.WRITE, scripted_model._write_input(messages))
            )
        name, value = next_step(messages)
        notified = NOTIFY in {u["name"] for u in scripted_model._tool_uses(messages).values()}
        return (NOTIFY, NOTICE_INPUT) if name == scripted_model.WRITE and not notified else (name, value)

    return step


STEPS = {moments.NOTIFY_AFTER: notify_after, moments.NOTIFY_FIRST: notify_first}


def install_notify(task):
    """En el proceso del agente: la herramienta en el arnés y su paso en el guion de ``task`` (ninguno de
    los dos se extiende desde afuera: se reemplazan sus piezas en este proceso, y solo en él)."""
    if task in STEPS:
        tools.TOOL_IMPLS[NOTIFY] = notify_team
        scripted_model._next_step = STEPS[task](scripted_model._next_step)


def build(folder, moment):
    """Escribe en ``folder`` el agente de ``moment`` (el de la lección con el cambio de su variante) y
    devuelve la ruta a correr."""
    with open(LESSON_AGENT, encoding="utf-8") as f:
        source = moments.agent_source(moment.agent, f.read())
    agent = os.path.join(folder, f"agente_{moment.agent.replace('-', '_')}.py")
    with open(agent, "w", encoding="utf-8") as f:
        f.write(source)
    runner = os.path.join(folder, "agente_del_momento.py")
    with open(runner, "w", encoding="utf-8") as f:
        f.write(RUNNER.format(task=moment.task, agent=agent))
    return runner

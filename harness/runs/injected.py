"""Fallas inyectadas en un agente de verdad, para «De la lección a producción»: un modelo que responde
lo que el guion nunca responde, y una llamada al sistema que falla (con strace).

El agente corre entero, en un proceso nuevo, con su ``main`` de siempre; solo cambia su modelo: el
guionado, envuelto para que haga lo que hace un modelo real (o lo que le pasa a un proceso real).

    run_with_model(workdir, agent="agent.py", model="texto-antes", crash_after="after-tool:3")
    proc = start_with_model(workdir, agent="agent.py", model="espera")   # espera a una señal
    run_with_strace(workdir, agent="agent.py", path="sales-notes.txt", inject="openat:error=EIO")

    python -m harness.runs.injected MODELO AGENTE [--resume]     # lo que corren los dos primeros
"""

import os
import sys

from harness.errors import HarnessError
from harness.runs.launcher import PIPE, QUIET_STRACE, AgentRun, agent_command, agent_run, load_agent, start
from harness.scenario import TURNS
from harness.scripted_model import Message, ScriptedModel, TextBlock, ToolUseBlock
from harness.tools import NOTES_PATH

# Lo que escribe en stderr el modelo «espera» cuando se queda esperando, antes del turno 3.
WAITING = "[modelo] pensando la respuesta del turno 3…"
# La conversación que recibe el modelo justo antes de pedir write_report (tarea + dos turnos).
BEFORE_TURN_3 = 5


class _Faulty:
    """El modelo guionado, con ``reply(messages, response)`` para cambiar su respuesta."""

    def __init__(self):
        self.messages = self
        self._script = ScriptedModel().messages

    def create(self, *, messages, **options):
        return self.reply(messages, self._script.create(messages=messages, **options))

    def reply(self, messages, response):
        return response


class TextBefore(_Faulty):
    """Como un modelo real: antes de cada ``tool_use``, un texto que dice qué va a hacer."""

    def reply(self, messages, response):
        if response.stop_reason == "tool_use":
            call = response.content[0]
            response.content = [TextBlock(f"Voy a usar {call.name}."), call]
        return response


class TwoCalls(_Faulty):
    """En el primer turno pide dos herramientas a la vez: read_notes y count_words."""

    def reply(self, messages, response):
        if len(messages) == 1:
            second = ToolUseBlock(TURNS[2].id, TURNS[2].name, {"path": NOTES_PATH})
            response.content = [*response.content, second]
        return response


class EmptyFinal(_Faulty):
    """Termina su turno (``end_turn``) sin texto: no dice que la tarea terminó."""

    def reply(self, messages, response):
        if response.stop_reason == "end_turn":
            return Message(99, [TextBlock("")], "end_turn", response.usage)
        return response


class Waits(_Faulty):
    """Antes de responder el turno 3 avisa ``WAITING`` en stderr y espera una línea en stdin: como un
    modelo real que tarda, el proceso queda esperando la respuesta (y ahí llega la señal que se le
    mande). Leer stdin se interrumpe con una señal, como la espera de una respuesta HTTP."""

    def reply(self, messages, response):
        if len(messages) == BEFORE_TURN_3:
            print(WAITING, file=sys.stderr, flush=True)
            sys.stdin.readline()
        return response


MODELS = {"texto-antes": TextBefore, "dos-llamadas": TwoCalls, "final-vacio": EmptyFinal, "espera": Waits}


def _command(workdir, agent, model, resume=False, crash_after=None, env=None):
    args, full_env = agent_command(
        workdir,
        agent=agent,
        resume=resume,
        crash_after=crash_after,
        env={**(env or {}), "PYTHONUNBUFFERED": "1"},
    )
    return [sys.executable, "-m", "harness.runs.injected", model, *args[1:]], full_env


def run_with_model(workdir, *, agent, model, resume=False, crash_after=None, env=None, timeout=60):
    """El agente en ``workdir`` con el modelo ``model`` (una clave de ``MODELS``), hasta que termina."""
    args, full_env = _command(workdir, agent, model, resume, crash_after, env)
    return agent_run(args, cwd=workdir, env=full_env, timeout=timeout)


def start_with_model(workdir, *, agent, model="espera", env=None):
    """El agente arrancado con el modelo ``model``, sin esperarlo; con «espera», vuelve cuando el
    proceso ya espera la respuesta del turno 3 (leyó ``WAITING``, un evento y no un tiempo)."""
    args, full_env = _command(workdir, agent, model, env=env)
    proc = start(args, cwd=workdir, env=full_env, new_session=False, default_signals=True, stdin=PIPE)
    first = proc.stderr.readline().strip() if model == "espera" else WAITING
    if first != WAITING:  # la primera línea de stderr es el error que lo terminó
        proc.kill()
        proc.communicate()
        raise HarnessError(f"El agente terminó antes de esperar al modelo en el turno 3: {first[:200]}")
    return proc


def finish(proc, send=None):
    """Manda la señal ``send`` (None: una línea en stdin, que el modelo siga) y espera a que termine."""
    if send:
        proc.send_signal(send)
    out, err = proc.communicate("sigue\n", timeout=60)
    return AgentRun(proc.returncode, out, err)


def run_with_strace(workdir, *, agent, path, inject, resume=False, env=None):
    """El agente con strace haciendo fallar cada llamada ``inject`` (p. ej. ``openat:error=EIO``) que
    toca ``path`` dentro de ``workdir``: una falla del sistema de verdad, que dura."""
    args, full_env = agent_command(workdir, agent=agent, resume=resume, env=env)
    syscall = inject.partition(":")[0]
    target = os.path.join(os.path.abspath(workdir), path)
    options = [*QUIET_STRACE, "-P", target]  # solo las llamadas que tocan ``path``
    options += ["-e", f"trace={syscall}", "-e", f"inject={inject}"]
    return agent_run(args, cwd=workdir, env=full_env, strace=options)


def main(argv):
    """``MODELO AGENTE [banderas]``: el ``main`` del agente, con ese modelo en lugar del guionado."""
    model, path, *flags = argv
    agent = load_agent(path)
    factory = MODELS[model]
    agent.ScriptedModel = factory  # el agente de la lección crea su modelo así
    agent.make_client = lambda live=False: factory()  # el de referencia, así
    return agent.main(flags)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

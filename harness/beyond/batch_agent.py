"""El agente de la lección con varias llamadas por turno: ``pendingToolUse`` es una lista.

    LESSON_AGENT=RUTA/agent.py python -m harness.beyond.batch_agent             # corrida nueva
    LESSON_AGENT=RUTA/agent.py python -m harness.beyond.batch_agent --resume    # retoma
    CRASH_AFTER=after-tool:3 LESSON_AGENT=… python -m harness.beyond.batch_agent     # muere a mitad de un lote

Lo que cambia respecto de la lección es lo que ella misma anuncia en «Proporción»: el punto A anota
todas las llamadas del turno (``pendingToolUse`` pasa de objeto a lista, y el formato a
``version: 2``) y ``reconcile`` corre sobre cada llamada colgante. Todo lo demás es el agente de la
lección mismo, cargado desde ``LESSON_AGENT`` (su ``agent.py`` exportado): su registro, su
``run_tool_uses`` (que ya anota cada llamada apenas tiene éxito), su ``reconcile`` de tres ramas, su
apertura limpia y su ``save_checkpoint``; aquí no hay una segunda copia de ninguno. Las llamadas de un
lote se ejecutan en orden: en paralelo harían lo mismo, pero el orden fijo deja nombrar cada punto de
caída con una etiqueta.

``AGENT_VARIANT=idempotente`` escribe los reportes con el ``tool_use_id`` como clave: una escritura
sin anotación en el registro se puede volver a ejecutar sin ``is_error``. ``--live`` usa el modelo
real, que puede pedir varias herramientas en un turno.
"""

if (
    __name__ == "__main__"
):  # lo primero: una señal durante los imports espera a la sesión, no mata en silencio
    from harness.defenses.early_signals import hold_signals

    hold_signals()
    # Con el servidor del preload (el notebook de «Más allá»), la corrida nace de él: sin el arranque
    # de Python ni los imports en cada proceso.
    from harness.beyond.preload import relay_if_preloaded

    relay_if_preloaded("harness.beyond.batch_agent")


import os

from harness.base_loop import MAX_TURNS, ask_model, final_text, tool_uses, usage_tokens
from harness.beyond.command_line import agent_main
from harness.beyond.file_types import BatchCheckpoint
from harness.beyond.parallel_model import SUMMARY_PATH, TASK, ParallelScriptedModel
from harness.beyond.process_death import leave
from harness.contract import (
    BATCH_VERSION,
    CHECKPOINT_FILE,
    EFFECTS_FILE,
    LESSON_AGENT_VAR,
    PENDING_CONTENT,
    resume_line,
    save_a_line,
    save_b_line,
)
from harness.crash import crash_point
from harness.defenses.bounded import Unbounded, loads
from harness.defenses.clients import make_client
from harness.defenses.durable import read_bytes, remove_durably
from harness.defenses.guards import require_matching_ledger, unreadable
from harness.defenses.idempotent import receipts_path
from harness.defenses.replies import TurnLimitReached, check_done
from harness.defenses.shapes import batch_checkpoint_problem
from harness.defenses.workdir import check_agent_files
from harness.errors import HarnessError
from harness.protocol import block_to_dict
from harness.runs.launcher import load_agent
from harness.scenario import SAVE_A, SAVE_B
from harness.tools import REPORT_PATH, TOOLS

VARIANTS = ("is-error", "idempotente")
USAGE = f"uso: python -m harness.beyond.batch_agent [--resume] [--live], con {LESSON_AGENT_VAR}=RUTA/agent.py"


class StateError(HarnessError):
    """El punto de control falta, está dañado o es de otra versión; o falta el agente de la lección."""


def lesson_agent(variant):
    """El agente de la lección (``LESSON_AGENT``), con la escritura con clave si la variante la pide."""
    path = os.environ.get(LESSON_AGENT_VAR, "")
    if not os.path.isfile(path):
        raise StateError(
            f"{LESSON_AGENT_VAR}={path or '(vacía)'} no nombra un archivo: este agente reúsa las piezas del "
            "de la lección; pon ahí la ruta de su agent.py (el que arma la lección, o el agente de referencia)."
        )
    lesson = load_agent(path, "leccion")
    lesson.KEYED_WRITES = variant == "idempotente"  # lo elige este agente, no una variable global
    return lesson


def checkpoint(task, turns, tokens_used, messages, pending, content=None):
    """El estado guardado de la lección con ``pendingToolUse`` como lista (vacía = nada colgando) y el turno del
    asistente tal como llegó, para reconstruirlo al reanudar."""
    cp = BatchCheckpoint(
        version=BATCH_VERSION,
        task=task,
        turns=turns,
        tokensUsed=tokens_used,
        messages=messages,
        pendingToolUse=pending,
    )
    return {**cp, PENDING_CONTENT: content} if content else cp


def load_checkpoint():
    """El punto de control de version 2, o un ``StateError`` que dice qué le pasa (nunca uno a medias)."""
    try:
        raw = read_bytes(CHECKPOINT_FILE)
    except FileNotFoundError:
        raise StateError(
            f"No se encuentra {CHECKPOINT_FILE}; no hay nada desde donde hacer --resume"
        ) from None
    except OSError as err:  # un directorio con ese nombre, un enlace, uno demasiado grande…
        raise StateError(unreadable(CHECKPOINT_FILE, err)) from None
    try:
        cp = loads(raw)
    except Unbounded as err:  # JSON, pero anidado sin fin o con un texto que no se puede volver a escribir
        problem = str(err)
    except ValueError:
        problem = "no es JSON (quedó a medio escribir o está dañado)"
    else:
        problem = batch_checkpoint_problem(cp)
    if problem:
        raise StateError(
            f"{CHECKPOINT_FILE} no sirve para reanudar: {problem}. Bórralo junto con {EFFECTS_FILE} y "
            "empieza de nuevo sin --resume."
        )
    return cp


def fresh_scene(lesson, task):
    """La apertura limpia de la lección, más el resumen que este agente también escribe."""
    remove_durably(SUMMARY_PATH, receipts_path(SUMMARY_PATH))
    return lesson.fresh_scene(task)


def resume_scene(lesson, task):
    """Carga el punto de control, concilia cada llamada colgante con el ``reconcile`` de la lección y
    rellena el punto B."""
    cp = load_checkpoint()
    effects, pending = lesson.load_effects(), cp["pendingToolUse"]
    for call in pending:
        require_matching_ledger(call, effects)
    # Antes de la primera escritura: ni un directorio donde irá un archivo, ni reportes enlazados.
    check_agent_files(CHECKPOINT_FILE, EFFECTS_FILE, appended=(REPORT_PATH, SUMMARY_PATH))
    turns, tokens_used, messages = cp["turns"], cp["tokensUsed"], cp["messages"]
    print(resume_line(turns, [p["name"] for p in pending]))
    if pending:
        content = cp.get(PENDING_CONTENT) or [{"type": "tool_use", **p} for p in pending]
        messages.append({"role": "assistant", "content": content})
        messages.append(
            {"role": "user", "content": [lesson.reconcile({"pendingToolUse": p}) for p in pending]}
        )
        lesson.save_checkpoint(checkpoint(task, turns, tokens_used, messages, []))
        print(save_b_line(turns, refilled=True))
        crash_point(SAVE_B)
    return turns, tokens_used, messages


def run_agent(lesson, client, task, scene):
    turns, tokens_used, messages = scene
    first_turn = turns  # un tope por corrida, como en la lección: --resume sigue con otros tantos
    response = ask_model(client, TOOLS, messages)
    tokens_used += usage_tokens(response)
    while response.stop_reason == "tool_use":
        if turns >= first_turn + MAX_TURNS:
            raise TurnLimitReached(MAX_TURNS)  # no es un final del modelo: salida 1, retomable
        turns += 1
        content = [block_to_dict(b) for b in response.content]
        pending = [{"id": c["id"], "name": c["name"], "input": c["input"]} for c in tool_uses(content)]
        # —— Punto A: todas las llamadas colgantes del turno, juntas ——
        lesson.save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending, content))
        print(save_a_line(turns, [p["name"] for p in pending]))
        crash_point(SAVE_A)
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": lesson.run_tool_uses(content)})
        # —— Punto B: un tool_result por llamada en messages; la lista colgante, vacía ——
        lesson.save_checkpoint(checkpoint(task, turns, tokens_used, messages, []))
        print(save_b_line(turns))
        crash_point(SAVE_B)
        response = ask_model(client, TOOLS, messages)
        tokens_used += usage_tokens(response)
    text = final_text(response)
    check_done(messages, text, outputs=(REPORT_PATH, SUMMARY_PATH))  # sin los dos archivos, no es un [done]
    return text


def main(argv=None):
    def run(resume, live, variant):
        lesson = lesson_agent(variant)
        client = make_client(True) if live else ParallelScriptedModel()
        scene = resume_scene(lesson, TASK) if resume else fresh_scene(lesson, TASK)
        return run_agent(lesson, client, TASK, scene)

    return agent_main(argv, variants=VARIANTS, usage=USAGE, run=run)


if __name__ == "__main__":  # sus archivos ya están en disco: salir sin el cierre lento del montón de DBOS
    leave(main())

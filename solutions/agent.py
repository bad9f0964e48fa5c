# GENERADO desde notebooks/leccion_6_puntos_de_control.ipynb: no lo edites a mano.
# Cada bloque viene de la celda «#| export» que nombra su línea «# %%». Para cambiarlo, edita esa
# celda, guarda el notebook y vuelve a exportar (harness.export.export_agent).


# %% leccion_6_puntos_de_control.ipynb · celda code-03
"""El agente de la Lección 6: el ``agent.js`` de la lección, en Python.

    python solutions/agent.py             # corrida nueva (borra el estado de la anterior)
    python solutions/agent.py --resume    # retoma desde checkpoint.json
    CRASH_AFTER=after-effect-write:3 python solutions/agent.py   # muere ahí, con código 137
    python solutions/agent.py --live      # con el modelo real (SDK de anthropic)

El directorio de trabajo es ``AGENT_WORKDIR`` (por omisión, el actual); todos los archivos viven ahí.
``AGENT_VARIANT=solo-b`` corre la variante que la lección discute y descarta: sin el punto A.
"""

import json
import os
import sys
import time

from harness.base_loop import MAX_TURNS, ask_model, final_text, tool_result, tool_uses, usage_tokens
from harness.clients import make_client
from harness.crash import SimulatedCrash, crash_after, crash_point
from harness.durable import read_bytes, remove_durably, write_durable
from harness.errors import HarnessError, disk_failure, os_reason, print_final
from harness.lock import workdir_lock
from harness.protocol import block_to_dict
from harness.replies import check_resumable, checked_call, finished, interrupted
from harness.shapes import checkpoint_problem, ledger_problem, pending_entry_problem
from harness.tools import TOOLS, prepare_task_files, rerun_reason, rerunnable, run_tool
from harness.workdir import check_agent_files, enter_workdir

CHECKPOINT_PATH = "checkpoint.json"
EFFECTS_PATH = "effects.json"
TASK = "Convierte sales-notes.txt en un reporte breve y escríbelo en report.txt."
# Clave opcional del punto A: el turno del asistente tal cual llegó, si trae más que su tool_use.
PENDING_CONTENT = "pendingAssistantContent"
# La variante «idempotente» (ver «Más allá de la lección»): write_report lleva el tool_use_id como
# clave y reanudar la puede repetir sin duplicar el reporte. La elige el agente, al arrancar.
KEYED_WRITES = os.environ.get("AGENT_VARIANT") == "idempotente"


# %% leccion_6_puntos_de_control.ipynb · celda code-18
def checkpoint(task, turns, tokens_used, messages, pending_tool_use):
    """La escena que se guarda, con las claves de la lección."""
    return {
        "version": 1,
        "task": task,
        "turns": turns,
        "tokensUsed": tokens_used,
        "messages": messages,
        "pendingToolUse": pending_tool_use,
    }


# %% leccion_6_puntos_de_control.ipynb · celda code-20
def write_json_atomic(path, data):
    """Temporal + rename atómico, como en la lección (``write_durable`` agrega los fsync de un corte
    de luz: ver «Más allá de la lección»)."""
    write_durable(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))


def save_checkpoint(cp):
    write_json_atomic(CHECKPOINT_PATH, cp)


# %% leccion_6_puntos_de_control.ipynb · celda code-22
class CheckpointError(HarnessError):
    """El punto de control falta, está a medio escribir o es de otra versión."""


def load_checkpoint():
    try:
        raw = read_bytes(CHECKPOINT_PATH)  # bytes: un carácter UTF-8 cortado también es «a medias»
    except FileNotFoundError:
        raise CheckpointError(
            f"No se encuentra {CHECKPOINT_PATH}; no hay nada desde donde hacer --resume"
        ) from None
    except OSError as err:  # un directorio con ese nombre, sin permiso de lectura…
        raise CheckpointError(
            f"No se puede leer {CHECKPOINT_PATH} ({os_reason(err)}); revisa ese archivo."
        ) from None
    try:
        cp = json.loads(raw)
    except ValueError:
        raise CheckpointError(
            f"No se pudo parsear {CHECKPOINT_PATH}; puede que el archivo haya quedado interrumpido a mitad "
            "de escritura. Bórralo y empieza de nuevo sin --resume en vez de seguir usándolo: un punto de "
            "control escrito a medias no se puede adivinar de vuelta a su forma."
        ) from None
    version = cp.get("version") if isinstance(cp, dict) else None
    if version != 1 or isinstance(version, bool):  # en Python True == 1; en la lección true !== 1
        raise CheckpointError(
            f"{CHECKPOINT_PATH} tiene version={json.dumps(version)}; este programa solo acepta version=1 "
            "y se niega a cargarlo."
        )
    problem = checkpoint_problem(cp)  # JSON válido con otra forma: reanudar fallaría a mitad de camino
    if problem:
        raise CheckpointError(
            f"{CHECKPOINT_PATH} no tiene la forma de un punto de control: {problem}. No se puede reanudar "
            "desde él: bórralo y empieza de nuevo sin --resume."
        )
    return cp


# %% leccion_6_puntos_de_control.ipynb · celda code-28a
def fresh_scene(task):
    """Una apertura limpia: sin punto de control ni registro de una corrida anterior."""
    # Un directorio en lugar de un archivo del agente: rechazado antes de borrar nada.
    check_agent_files(CHECKPOINT_PATH, EFFECTS_PATH)
    # El punto de control primero, y fijado en disco: si esto muere a mitad (o se corta la luz), un --resume
    # no encuentra una tarea vieja «terminada» cuyo reporte ya se borró. Los .tmp nunca se leen.
    remove_durably(CHECKPOINT_PATH, EFFECTS_PATH, CHECKPOINT_PATH + ".tmp", EFFECTS_PATH + ".tmp")
    prepare_task_files()  # borra el reporte viejo (también en disco) y crea sales-notes.txt si falta
    return 0, 0, [{"role": "user", "content": task}]


# %% leccion_6_puntos_de_control.ipynb · celda code-28c
def keep_assistant_turn(cp, content):
    """Si el turno trae más que su tool_use (un modelo real suele escribir un texto antes), se guarda
    tal cual llegó en ``pendingAssistantContent``: rehacerlo desde pendingToolUse perdería el resto.
    Solo entonces: el turno del guion se rehace idéntico y el punto A guarda las claves de la lección."""
    if content != [{"type": "tool_use", **cp["pendingToolUse"]}]:
        cp[PENDING_CONTENT] = content
    return cp


# %% leccion_6_puntos_de_control.ipynb · celda code-28
def run_agent(client, task, tools, scene=None, point_a=True):
    """``scene``: (turns, tokens_used, messages) desde donde seguir, la de un --resume; sin ella,
    una corrida nueva."""
    turns, tokens_used, messages = scene or fresh_scene(task)
    response = ask_model(client, tools, messages)
    tokens_used += usage_tokens(response)

    while response.stop_reason == "tool_use":
        if turns >= MAX_TURNS:
            return f"Se alcanzó el máximo de {MAX_TURNS} turnos, deteniéndonos por nuestra cuenta"
        turns += 1

        content = [block_to_dict(b) for b in response.content]
        # Antes del punto A: una respuesta inválida no toca el disco. None: una herramienta que no existe,
        # sin nada colgante que anotar (run_tool_uses la responde con is_error).
        call = checked_call(content, messages)
        # —— Punto A: apenas llega la respuesta, anota la llamada colgante de este turno ——
        if point_a and call:  # la variante «solo el punto B» se lo salta: la llamada colgante queda invisible
            pending = {"id": call["id"], "name": call["name"], "input": call["input"]}
            cp = checkpoint(task, turns, tokens_used, messages, pending)
            save_checkpoint(keep_assistant_turn(cp, content))
            print(f"[turn {turns}][save A] pending={call['name']}")
            crash_point("after-save-a")

        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": run_tool_uses(content)})

        # —— Punto B: el resultado está en messages (y el registro en disco): colgante limpiada ——
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))
        print(f"[turn {turns}][save B]")
        crash_point("after-save-b")

        response = ask_model(client, tools, messages)
        tokens_used += usage_tokens(response)
    text = final_text(response)  # un final vacío no es un final: es un error, nunca un [done]
    # La tarea terminó: así un --resume lo sabe y no vuelve a llamar al modelo.
    save_checkpoint(finished(checkpoint(task, turns, tokens_used, messages, None), text))
    return text


# %% leccion_6_puntos_de_control.ipynb · celda code-34
class LedgerError(HarnessError):
    """El registro de efectos no se puede leer: nunca se trata como vacío."""


def load_effects():
    try:
        raw = read_bytes(EFFECTS_PATH)
    except FileNotFoundError:
        return {}  # nunca se ejecutó nada todavía
    except OSError as err:
        raise LedgerError(
            f"No se puede leer {EFFECTS_PATH} ({os_reason(err)}); revisa ese archivo."
        ) from None
    try:
        effects = json.loads(raw)
    except ValueError:
        effects = None
    if not isinstance(effects, dict):
        # Tratarlo como vacío volvería a ejecutar efectos secundarios que ya ocurrieron.
        raise LedgerError(
            f"No se pudo parsear {EFFECTS_PATH}; el registro de efectos está dañado y no se puede tratar "
            "como vacío sin arriesgar efectos secundarios duplicados. Revísalo a mano, o bórralo junto con "
            f"{CHECKPOINT_PATH} y empieza de nuevo sin --resume."
        )
    problem = ledger_problem(effects)  # un «result» que no es texto se le devolvería al modelo como tal
    if problem:
        raise LedgerError(
            f"{EFFECTS_PATH} no tiene la forma de un registro de efectos: {problem}. No se puede usar ni "
            f"tratar como vacío: revísalo a mano, o bórralo junto con {CHECKPOINT_PATH} y empieza de nuevo "
            "sin --resume."
        )
    return effects


def save_effect(tool_use_id, entry):
    effects = load_effects()
    effects[tool_use_id] = entry
    write_json_atomic(EFFECTS_PATH, effects)


def now_ms():
    return int(time.time() * 1000)


# %% leccion_6_puntos_de_control.ipynb · celda code-38
def run_tool_uses(content):
    """El run_tool_uses del Curso 7, con el registro: ejecutar primero, anotar después."""
    results = []
    for block in tool_uses(content):
        try:
            output = run_tool(block["name"], block["input"], key=block["id"] if KEYED_WRITES else None)
        except Exception as err:  # el modelo recibe el error y decide, como en el Curso 7
            results.append(tool_result(block["id"], f"Error de ejecución de la herramienta: {err}", True))
            continue
        crash_point("after-tool")
        # El efecto secundario ya ocurrió: aunque la escritura del registro falle, no hay que mentir
        # con is_error (el modelo reintentaría y duplicaría el efecto); solo avisar a una persona.
        try:
            save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})
        except (OSError, LedgerError):
            print(
                f"[falló la escritura del registro] tool_use_id={block['id']}: el efecto secundario ya "
                "ocurrió, riesgo de ejecución duplicada al reanudar, por favor revisa a mano",
                file=sys.stderr,
            )
        else:
            crash_point("after-effect-write")
        results.append(tool_result(block["id"], output))
    return results


# %% leccion_6_puntos_de_control.ipynb · celda code-46
def reconcile(cp):
    pending = cp["pendingToolUse"]
    if not pending:
        return None  # no hay llamada colgante, simplemente seguir

    hit = load_effects().get(pending["id"])
    where = f"[resume][reconcile] tool_use_id={pending['id']} name={pending['name']}"

    if hit:
        print(f"{where} acierto en el registro, reutilizando resultado, sin volver a ejecutar")
        return tool_result(pending["id"], hit["result"])

    if rerunnable(pending["name"], KEYED_WRITES):  # solo lectura (o write_report con clave: «idempotente»)
        print(f"{where} fallo en el registro, {rerun_reason(pending['name'])}, volviendo a ejecutar")
        output = run_tool(pending["name"], pending["input"], key=pending["id"] if KEYED_WRITES else None)
        save_effect(pending["id"], {"name": pending["name"], "result": output, "at": now_ms()})
        return tool_result(pending["id"], output)

    print(f"{where} fallo en el registro con efectos secundarios, no resoluble, agregando is_error")
    return tool_result(
        pending["id"],
        f"Se desconoce el estado de ejecución previo a la reanudación de esta llamada a {pending['name']}: "
        "no hay anotación en el registro y, para evitar un efecto secundario duplicado, no se volvió a "
        "ejecutar. Por favor verifica por tu cuenta si se completó.",
        True,
    )


# %% leccion_6_puntos_de_control.ipynb · celda code-61
def assistant_turn(cp):
    """El turno del asistente de la llamada colgante, como se le mandará de nuevo a la API (la forma
    de ``pendingAssistantContent`` ya se validó al cargar el punto de control)."""
    return cp.get(PENDING_CONTENT) or [{"type": "tool_use", **cp["pendingToolUse"]}]


def resume_scene(task):
    """Carga el punto de control, concilia la llamada colgante y rellena el punto B si hacía falta."""
    cp = load_checkpoint()
    check_resumable(cp)  # ni una tarea ya terminada ni una conversación que la API rechazaría
    # Antes de escribir nada, no a mitad de camino: un registro dañado o de otra llamada, un directorio
    # donde irá un archivo o su temporal.
    problem = pending_entry_problem(cp["pendingToolUse"], load_effects())
    if problem:
        raise LedgerError(f"{EFFECTS_PATH} no corresponde a {CHECKPOINT_PATH}: {problem}. Revísalo a mano.")
    check_agent_files(CHECKPOINT_PATH, EFFECTS_PATH)
    turns, tokens_used, messages = cp["turns"], cp["tokensUsed"], cp["messages"]
    pending = cp["pendingToolUse"]
    print(f"[resume] leído turn={turns} pending={pending['name'] if pending else 'null'}")
    result = reconcile(cp)
    if result:
        # El punto A se guardó antes de empujar el turno del asistente: se recupera del punto de control.
        messages.append({"role": "assistant", "content": assistant_turn(cp)})
        messages.append({"role": "user", "content": [result]})
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))
        print(f"[turn {turns}][save B] rellenado el resultado de herramienta de este turno tras reanudar")
        crash_point("after-save-b")
    return turns, tokens_used, messages


# %% leccion_6_puntos_de_control.ipynb · celda code-63
USAGE = "uso: python agent.py [--resume] [--live]"
OPTIONS = {"--resume", "--live"}
VARIANTS = ("dos-puntos", "solo-b", "idempotente")


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    unknown = set(args) - OPTIONS
    if unknown:
        print(f"Argumento desconocido: {' '.join(sorted(unknown))}. {USAGE}", file=sys.stderr)
        return 2
    resume = "--resume" in args
    variant = os.environ.get("AGENT_VARIANT") or VARIANTS[0]
    if variant not in VARIANTS:
        print(
            f"AGENT_VARIANT={variant} no es una variante conocida: usa {' o '.join(VARIANTS)}.",
            file=sys.stderr,
        )
        return 2
    try:
        enter_workdir(os.environ.get("AGENT_WORKDIR"))  # un directorio que no sirve es un error claro
        crash_after()  # una etiqueta mal escrita se avisa antes de empezar, no se ignora
        with workdir_lock():  # un segundo agente en el mismo directorio se rechaza, no se mezcla
            # --live sin clave falla acá, antes de tocar el disco: el reporte y el punto de control intactos.
            client = make_client("--live" in args)
            scene = resume_scene(TASK) if resume else None
            result = run_agent(client, TASK, TOOLS, scene, point_a=variant != "solo-b")
    except SimulatedCrash as err:
        print(f"[kill] {err}")
        return 137
    except KeyboardInterrupt:  # Ctrl-C: una línea que dice dónde quedó el disco, sin traza
        print(interrupted(), file=sys.stderr)
        return 130
    except HarnessError as err:
        print(err, file=sys.stderr)
        return 1
    except OSError as err:  # disco lleno, sin permiso…: una línea que dice qué falló y qué quedó
        print(disk_failure(err), file=sys.stderr)
        return 1
    return print_final(f"[done] {result}")  # con la salida cerrada: una línea en stderr, sin traza


if __name__ == "__main__":
    sys.exit(main())

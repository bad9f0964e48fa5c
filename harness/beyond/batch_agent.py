"""El agente de la lección con varias llamadas por turno: ``pendingToolUse`` es una lista.

    python -m harness.beyond.batch_agent             # corrida nueva
    python -m harness.beyond.batch_agent --resume    # retoma desde checkpoint.json
    CRASH_AFTER=after-tool:3 python -m harness.beyond.batch_agent   # muere a mitad de un lote

Lo que cambia respecto de la lección es lo que ella misma anuncia en «Proporción»: el punto A anota
todas las llamadas del turno (``pendingToolUse`` pasa de objeto a lista, y el formato a
``version: 2``), el registro se escribe por llamada apenas cada una tiene éxito, y ``reconcile`` corre
sobre cada llamada colgante con las mismas tres ramas. Las llamadas de un lote se ejecutan en orden:
en paralelo harían lo mismo, pero el orden fijo deja nombrar cada punto de caída con una etiqueta.

``AGENT_VARIANT=idempotente`` escribe los reportes con ``write_report_once`` y el ``tool_use_id``
como clave: una escritura sin anotación en el registro se puede volver a ejecutar sin ``is_error``.
``--live`` usa el modelo real, que puede pedir varias herramientas en un turno.
"""

import json
import os
import sys
import time

from harness.base_loop import MAX_TURNS, ask_model, final_text, tool_result, tool_uses, usage_tokens
from harness.beyond.command_line import agent_main
from harness.beyond.idempotent import receipts_path, write_report_once
from harness.beyond.parallel_model import SUMMARY_PATH, ParallelScriptedModel
from harness.clients import make_client
from harness.crash import crash_point
from harness.durable import read_bytes, write_durable
from harness.errors import HarnessError
from harness.protocol import block_to_dict, pairing_error
from harness.tools import READ_ONLY, REPORT_PATH, TOOLS, prepare_task_files, run_tool

CHECKPOINT_PATH = "checkpoint.json"
EFFECTS_PATH = "effects.json"
VERSION = 2
TASK = "Convierte sales-notes.txt en un reporte breve y un resumen; escríbelos en report.txt y resumen.txt."
VARIANTS = ("is-error", "idempotente")
USAGE = "uso: python -m harness.beyond.batch_agent [--resume] [--live]"


class StateError(HarnessError):
    """El punto de control o el registro faltan, están dañados o son de otra versión."""


def write_json(path, data):
    write_durable(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))


def _read_json(path, missing):
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        if missing is None:
            raise StateError(f"No se encuentra {path}; no hay nada desde donde hacer --resume") from None
        return missing
    try:
        return json.loads(raw)
    except ValueError:
        raise StateError(
            f"No se pudo parsear {path}; quedó a medio escribir o dañado. Bórralo junto con "
            f"{CHECKPOINT_PATH} y empieza de nuevo sin --resume."
        ) from None


def checkpoint(task, turns, tokens_used, messages, pending, content=None):
    """La escena de la lección, con ``pendingToolUse`` como lista (vacía = nada colgando) y el turno del
    asistente tal como llegó, para reconstruirlo al reanudar."""
    cp = {"version": VERSION, "task": task, "turns": turns, "tokensUsed": tokens_used}
    cp.update(messages=messages, pendingToolUse=pending)
    return {**cp, "pendingAssistantContent": content} if content else cp


def load_checkpoint():
    cp = _read_json(CHECKPOINT_PATH, None)
    version = cp.get("version") if isinstance(cp, dict) else None
    if version != VERSION or isinstance(version, bool):
        raise StateError(
            f"{CHECKPOINT_PATH} tiene version={json.dumps(version)}; este programa solo acepta "
            f"version={VERSION} (pendingToolUse como lista) y se niega a cargarlo."
        )
    pending = cp.get("pendingToolUse")
    shapes_ok = isinstance(pending, list) and all(
        isinstance(p, dict) and {"id", "name", "input"} <= p.keys() for p in pending
    )
    if not shapes_ok or not isinstance(cp.get("messages"), list) or pairing_error(cp["messages"]):
        raise StateError(f"{CHECKPOINT_PATH} no tiene la forma de un punto de control de version=2.")
    return cp


def load_effects():
    effects = _read_json(EFFECTS_PATH, {})
    if not isinstance(effects, dict):  # tratarlo como vacío volvería a ejecutar efectos secundarios
        raise StateError(f"{EFFECTS_PATH} no es un registro de efectos; revísalo a mano.")
    return effects


def save_effect(tool_use_id, entry):
    effects = load_effects()
    effects[tool_use_id] = entry
    write_json(EFFECTS_PATH, effects)


def execute(call, idempotent):
    """La herramienta de ``call``; con ``idempotent``, un reporte se escribe con su id como clave."""
    if idempotent and call["name"] == "write_report":
        return write_report_once(call["input"], key=call["id"])
    return run_tool(call["name"], call["input"])


def run_tool_uses(content, idempotent):
    """Ejecutar primero, anotar después: una anotación por llamada, apenas esa llamada tiene éxito."""
    results = []
    for block in tool_uses(content):
        try:
            output = execute(block, idempotent)
        except Exception as err:
            results.append(tool_result(block["id"], f"Error de ejecución de la herramienta: {err}", True))
            continue
        crash_point("after-tool")
        try:
            save_effect(block["id"], {"name": block["name"], "result": output, "at": int(time.time() * 1000)})
        except (OSError, StateError):
            print(
                f"[falló la escritura del registro] tool_use_id={block['id']}: el efecto secundario ya "
                "ocurrió, riesgo de ejecución duplicada al reanudar, por favor revisa a mano",
                file=sys.stderr,
            )
        else:
            crash_point("after-effect-write")
        results.append(tool_result(block["id"], output))
    return results


def reconcile_one(pending, effects, idempotent):
    """Las tres ramas de la lección para una llamada colgante, más una: con una escritura idempotente,
    volver a ejecutarla es seguro aunque no haya anotación."""
    where = f"[resume][reconcile] tool_use_id={pending['id']} name={pending['name']}"
    hit = effects.get(pending["id"])
    if hit:
        print(f"{where} acierto en el registro, reutilizando resultado, sin volver a ejecutar")
        return tool_result(pending["id"], hit["result"])
    rerun = pending["name"] in READ_ONLY or (idempotent and pending["name"] == "write_report")
    if rerun:
        why = "herramienta de solo lectura" if pending["name"] in READ_ONLY else "escritura idempotente"
        print(f"{where} fallo en el registro, {why}, volviendo a ejecutar")
        output = execute(pending, idempotent)
        save_effect(pending["id"], {"name": pending["name"], "result": output, "at": int(time.time() * 1000)})
        return tool_result(pending["id"], output)
    print(f"{where} fallo en el registro con efectos secundarios, no resoluble, agregando is_error")
    return tool_result(
        pending["id"],
        f"Se desconoce el estado de ejecución previo a la reanudación de esta llamada a {pending['name']}: "
        "no hay anotación en el registro y, para evitar un efecto secundario duplicado, no se volvió a "
        "ejecutar. Por favor verifica por tu cuenta si se completó.",
        True,
    )


def reconcile(cp, idempotent):
    """``reconcile`` sobre cada llamada colgante del lote, en orden: un resultado por llamada."""
    effects = load_effects()
    return [reconcile_one(p, effects, idempotent) for p in cp["pendingToolUse"]]


def fresh_scene(task):
    leftovers = [CHECKPOINT_PATH, EFFECTS_PATH, CHECKPOINT_PATH + ".tmp", EFFECTS_PATH + ".tmp", SUMMARY_PATH]
    leftovers += [receipts_path(REPORT_PATH), receipts_path(SUMMARY_PATH)]
    for path in leftovers:
        if os.path.isfile(path):
            os.remove(path)
    prepare_task_files()
    return 0, 0, [{"role": "user", "content": task}]


def resume_scene(task, idempotent):
    cp = load_checkpoint()
    load_effects()
    turns, tokens_used, messages, pending = (
        cp["turns"],
        cp["tokensUsed"],
        cp["messages"],
        cp["pendingToolUse"],
    )
    print(f"[resume] leído turn={turns} pending={','.join(p['name'] for p in pending) or 'null'}")
    if pending:
        content = cp.get("pendingAssistantContent") or [{"type": "tool_use", **p} for p in pending]
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": reconcile(cp, idempotent)})
        write_json(CHECKPOINT_PATH, checkpoint(task, turns, tokens_used, messages, []))
        print(f"[turn {turns}][save B] rellenado el resultado de herramienta de este turno tras reanudar")
        crash_point("after-save-b")
    return turns, tokens_used, messages


def run_agent(client, task, resume=False, idempotent=False):
    turns, tokens_used, messages = resume_scene(task, idempotent) if resume else fresh_scene(task)
    response = ask_model(client, TOOLS, messages)
    tokens_used += usage_tokens(response)
    while response.stop_reason == "tool_use":
        if turns >= MAX_TURNS:
            return f"Se alcanzó el máximo de {MAX_TURNS} turnos, deteniéndonos por nuestra cuenta"
        turns += 1
        content = [block_to_dict(b) for b in response.content]
        pending = [{"id": c["id"], "name": c["name"], "input": c["input"]} for c in tool_uses(content)]
        # —— Punto A: todas las llamadas colgantes del turno, juntas ——
        write_json(CHECKPOINT_PATH, checkpoint(task, turns, tokens_used, messages, pending, content))
        print(f"[turn {turns}][save A] pending={','.join(p['name'] for p in pending)}")
        crash_point("after-save-a")
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": run_tool_uses(content, idempotent)})
        # —— Punto B: un tool_result por llamada en messages; la lista colgante, vacía ——
        write_json(CHECKPOINT_PATH, checkpoint(task, turns, tokens_used, messages, []))
        print(f"[turn {turns}][save B]")
        crash_point("after-save-b")
        response = ask_model(client, TOOLS, messages)
        tokens_used += usage_tokens(response)
    return final_text(response)


def main(argv=None):
    def run(resume, live, variant):
        client = make_client(True) if live else ParallelScriptedModel()
        return run_agent(client, TASK, resume, variant == "idempotente")

    return agent_main(argv, variants=VARIANTS, usage=USAGE, run=run)


if __name__ == "__main__":
    sys.exit(main())

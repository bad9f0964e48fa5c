# GENERADO desde notebooks/leccion_6_puntos_de_control.ipynb: no lo edites a mano.
# Cada bloque viene de la celda «#| export» que nombra su línea «# %%». Para cambiarlo, edita esa
# celda, guarda el notebook y vuelve a exportar (harness.notebook.export.export_agent).


# %% leccion_6_puntos_de_control.ipynb · celda code-03
"""El agente de la Lección 6: el ``agent.js`` de la lección, en Python y a su tamaño.

    python agent.py             # corrida nueva (borra el estado de la anterior)
    python agent.py --resume    # reanuda desde checkpoint.json
    CRASH_AFTER=after-effect-write:3 python agent.py   # muere ahí, con código 137

El directorio de trabajo es ``AGENT_WORKDIR`` (por omisión, el actual): todos los archivos viven ahí.
"""

import json
import os
import sys
import time

from harness.base_loop import MAX_TURNS, ask_model
from harness.contract import WORKDIR_VAR
from harness.crash import SimulatedCrash, crash_point
from harness.scripted_model import ScriptedModel
from harness.tools import READ_ONLY, prepare_task_files, run_tool

CHECKPOINT_PATH = "checkpoint.json"
EFFECTS_PATH = "effects.json"
TASK = "Convierte sales-notes.txt en un reporte breve y escríbelo en report.txt."


# %% leccion_6_puntos_de_control.ipynb · celda code-18
def checkpoint(task, turns, tokens_used, messages, pending_tool_use):
    """El estado que se guarda, con las claves de la lección."""
    return {
        "version": 1,
        "task": task,
        "turns": turns,
        "tokensUsed": tokens_used,
        "messages": messages,
        "pendingToolUse": pending_tool_use,
    }


# %% leccion_6_puntos_de_control.ipynb · celda code-20
def write_json_atomic(path, data):  # tu turno
    """Primero un archivo temporal, después ``os.replace``: el cambio de nombre es atómico dentro del mismo
    sistema de archivos, así que en ``path`` nunca queda un archivo escrito a medias."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=2)
    os.replace(tmp, path)


def save_checkpoint(cp):
    write_json_atomic(CHECKPOINT_PATH, cp)


# %% leccion_6_puntos_de_control.ipynb · celda code-22
class CheckpointError(Exception):
    """Un punto de control (o un registro) que no se puede usar: main lo dice en una línea, sin traza."""


def load_checkpoint():  # tu turno
    try:
        with open(CHECKPOINT_PATH, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise CheckpointError(
            f"No se encuentra {CHECKPOINT_PATH}; no hay nada desde donde hacer --resume"
        ) from None
    try:
        cp = json.loads(raw)  # bytes: un carácter UTF-8 cortado también es un archivo a medias
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
    return cp


# %% leccion_6_puntos_de_control.ipynb · celda code-28a
def fresh_scene(task):  # tu turno
    """La apertura limpia de una corrida sin --resume: sin el punto de control ni el registro de antes."""
    for path in (CHECKPOINT_PATH, EFFECTS_PATH):
        if os.path.exists(path):
            os.remove(path)
    prepare_task_files()  # el reporte viejo, fuera; sales-notes.txt, si falta
    return 0, 0, [{"role": "user", "content": task}]


# %% leccion_6_puntos_de_control.ipynb · celda code-28
def run_agent(client, task, tools, scene=None):
    turns, tokens_used, messages = scene or fresh_scene(task)
    response = ask_model(client, tools, messages)
    tokens_used += response.usage.input_tokens + response.usage.output_tokens
    while response.stop_reason == "tool_use":
        if turns >= MAX_TURNS:
            return f"Se alcanzó el máximo de {MAX_TURNS} turnos, deteniéndonos por nuestra cuenta"
        turns += 1
        content = [block.model_dump(exclude_none=True) for block in response.content]
        call = next(block for block in content if block["type"] == "tool_use")
        # —— Punto A: apenas llega la respuesta, anota la llamada colgante de este turno ——
        pending = {"id": call["id"], "name": call["name"], "input": call["input"]}
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending))  # tu turno: punto_A
        print(f"[turn {turns}][save A] pending={pending['name']}")
        crash_point("after-save-a")
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": run_tool_uses(content)})
        # —— Punto B: el resultado está en messages (y el registro en disco): colgante limpiada ——
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))  # tu turno: punto_B
        print(f"[turn {turns}][save B]")
        crash_point("after-save-b")
        response = ask_model(client, tools, messages)
        tokens_used += response.usage.input_tokens + response.usage.output_tokens
    return "".join(block.text for block in response.content if block.type == "text")


# %% leccion_6_puntos_de_control.ipynb · celda code-34
def load_effects():
    try:
        with open(EFFECTS_PATH, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return {}  # nunca se ejecutó nada todavía
    try:
        return json.loads(raw)
    except ValueError:
        # Tratarlo como vacío volvería a ejecutar efectos secundarios que ya ocurrieron.
        raise CheckpointError(
            f"No se pudo parsear {EFFECTS_PATH}; el registro de efectos está dañado y no se puede tratar "
            "como vacío sin arriesgar efectos secundarios duplicados. Revísalo a mano, o bórralo junto con "
            f"{CHECKPOINT_PATH} y empieza de nuevo sin --resume."
        ) from None


def save_effect(tool_use_id, entry):
    effects = load_effects()
    effects[tool_use_id] = entry
    write_json_atomic(EFFECTS_PATH, effects)


def now_ms():
    return int(time.time() * 1000)  # «at»: la hora de la anotación, en milisegundos


# %% leccion_6_puntos_de_control.ipynb · celda code-38
def run_tool_uses(content):  # tu turno
    """El ``run_tool_uses`` del Curso 7, con el registro: ejecutar primero, anotar después."""
    results = []
    for block in (b for b in content if b["type"] == "tool_use"):
        try:
            output = run_tool(block["name"], block["input"])
        except Exception as err:  # el modelo recibe el error y decide, como en el Curso 7
            error = f"Error de ejecución de la herramienta: {err}"
            results.append(
                {"type": "tool_result", "tool_use_id": block["id"], "content": error, "is_error": True}
            )
            continue
        crash_point("after-tool")
        # El efecto ya ocurrió: si el registro falla, no mentir con is_error (el modelo reintentaría y
        # duplicaría el efecto); solo avisar a una persona, en el acto.
        try:
            save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})
        except (OSError, CheckpointError):
            print(
                f"[falló la escritura del registro] tool_use_id={block['id']}: el efecto secundario ya "
                "ocurrió, riesgo de ejecución duplicada al reanudar, por favor revisa a mano",
                file=sys.stderr,
            )
        else:
            crash_point("after-effect-write")
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


# %% leccion_6_puntos_de_control.ipynb · celda code-46
def reconcile(cp):  # tu turno
    pending = cp["pendingToolUse"]
    if not pending:
        return None  # no hay llamada colgante, simplemente seguir

    hit = load_effects().get(pending["id"])
    where = f"[resume][reconcile] tool_use_id={pending['id']} name={pending['name']}"

    if hit:
        print(f"{where} acierto en el registro, reutilizando resultado, sin volver a ejecutar")
        return {"type": "tool_result", "tool_use_id": pending["id"], "content": hit["result"]}

    if pending["name"] in READ_ONLY:
        print(f"{where} fallo en el registro, herramienta de solo lectura, volviendo a ejecutar")
        output = run_tool(pending["name"], pending["input"])
        save_effect(pending["id"], {"name": pending["name"], "result": output, "at": now_ms()})
        return {"type": "tool_result", "tool_use_id": pending["id"], "content": output}

    print(f"{where} fallo en el registro con efectos secundarios, no resoluble, agregando is_error")
    unknown = (
        f"Se desconoce el estado de ejecución previo a la reanudación de esta llamada a {pending['name']}: "
        "no hay anotación en el registro y, para evitar un efecto secundario duplicado, no se volvió a "
        "ejecutar. Por favor verifica por tu cuenta si se completó."
    )
    return {"type": "tool_result", "tool_use_id": pending["id"], "content": unknown, "is_error": True}


# %% leccion_6_puntos_de_control.ipynb · celda code-61
def resume_scene(task):
    """Carga el punto de control, concilia la llamada colgante y rellena el punto B si hacía falta."""
    cp = load_checkpoint()
    turns, tokens_used, messages = cp["turns"], cp["tokensUsed"], cp["messages"]
    pending = cp["pendingToolUse"]
    print(f"[resume] leído turn={turns} pending={pending['name'] if pending else 'null'}")
    result = reconcile(cp)
    if result:
        # El punto A se guardó antes de agregar el turno del asistente: se rehace con la llamada colgante.
        messages.append({"role": "assistant", "content": [{"type": "tool_use", **pending}]})
        messages.append({"role": "user", "content": [result]})
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))
        print(f"[turn {turns}][save B] rellenado el resultado de herramienta de este turno tras reanudar")
        crash_point("after-save-b")
    return turns, tokens_used, messages


# %% leccion_6_puntos_de_control.ipynb · celda code-63
def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    unknown = [arg for arg in args if arg != "--resume"]
    if unknown:  # un --reanudar mal escrito no puede empezar de cero y borrar la corrida anterior
        print(f"Argumento desconocido: {unknown[0]}. uso: python agent.py [--resume]", file=sys.stderr)
        return 2
    os.chdir(os.environ.get(WORKDIR_VAR) or ".")
    try:
        scene = resume_scene(TASK) if "--resume" in args else None
        result = run_agent(ScriptedModel(), TASK, [], scene)
    except SimulatedCrash as err:
        print(f"[kill] {err}")
        return 137
    except CheckpointError as err:  # sin punto de control, o uno dañado: una línea, no una traza
        print(err, file=sys.stderr)
        return 1
    print(f"[done] {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

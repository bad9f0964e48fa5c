# GENERADO desde notebooks/leccion_6_puntos_de_control.ipynb y notebooks/de_la_leccion_a_produccion.ipynb: no lo edites a mano.
# Cada bloque viene de la celda «#| export» que nombra su línea «# %%». Para cambiarlo, edita esa
# celda, guarda el notebook y vuelve a exportar (harness.notebook.export.export_agent).


# %% de_la_leccion_a_produccion.ipynb · celda prod-03
"""El agente de la Lección 6: el ``agent.js`` de la lección, en Python.

    python solutions/agent.py             # corrida nueva (borra el estado de la anterior)
    python solutions/agent.py --resume    # reanuda desde checkpoint.json
    CRASH_AFTER=after-effect-write:3 python solutions/agent.py   # muere ahí, con código 137
    python solutions/agent.py --live      # con el modelo real (SDK de anthropic)

El directorio de trabajo es ``AGENT_WORKDIR`` (por omisión, el actual); todos los archivos viven ahí.
``AGENT_VARIANT=solo-b`` corre la variante que la lección discute y descarta: sin el punto A. Cada
defensa que no es la idea de la lección llega de ``harness`` en una línea que nombra lo que cuida
(«De la lección a producción» cuenta la falla que la motiva).
"""

from harness.defenses.early_signals import hold_signals

# Como programa, desde la primera línea: una señal durante los imports espera a la sesión, con su
# línea. Importado por otro agente (el de lotes), no: sus señales ya las atiende la sesión de ese agente.
if __name__ == "__main__":
    hold_signals()

import json
import os
import sys
import time  # noqa: F401 (lo usa now_ms, de la lección)

from harness.base_loop import MAX_TURNS, ask_model, final_text, tool_result, tool_uses, usage_tokens
from harness.contract import VARIANT_VAR
from harness.crash import SimulatedCrash, crash_point
from harness.defenses.clients import make_client
from harness.tools import TOOLS, run_tool

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


# %% de_la_leccion_a_produccion.ipynb · celda prod-20
from harness.defenses.durable import write_durable  # temporal + rename, con los fsync de un corte de luz


def write_json_atomic(path, data):  # tu turno
    """Temporal + rename atómico, como en la lección (``write_durable`` agrega los fsync de un corte
    de luz: ver «De la lección a producción»)."""
    write_durable(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))


# %% leccion_6_puntos_de_control.ipynb · celda code-20
def save_checkpoint(cp):
    write_json_atomic(CHECKPOINT_PATH, cp)


# %% de_la_leccion_a_produccion.ipynb · celda prod-22
from harness.defenses.bounded import Unbounded, loads  # json.loads acotado: nunca un RecursionError
from harness.defenses.guards import CheckpointError, checkpoint_refusal, require_checkpoint_shape


def load_checkpoint():  # tu turno
    try:
        raw = read_bytes(CHECKPOINT_PATH)
    except FileNotFoundError:
        raise CheckpointError(
            f"No se encuentra {CHECKPOINT_PATH}; no hay nada desde donde hacer --resume"
        ) from None
    except OSError as err:  # un directorio con ese nombre, sin permiso de lectura…
        raise CheckpointError(unreadable(CHECKPOINT_PATH, err)) from None
    try:
        cp = loads(raw)
    except Unbounded as err:  # JSON, pero anidado sin fin o con un texto que no se puede volver a escribir
        raise checkpoint_refusal(err) from None
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
    require_checkpoint_shape(cp)  # JSON válido con otra forma: reanudar fallaría a mitad de camino
    return cp


# %% de_la_leccion_a_produccion.ipynb · celda prod-28a
from harness.defenses.durable import remove_durably  # los borrados quedan en disco antes de seguir
from harness.defenses.workdir import check_agent_files
from harness.tools import prepare_task_files


def fresh_scene(task):  # tu turno
    """Una apertura limpia: sin punto de control ni registro de una corrida anterior."""
    check_agent_files(CHECKPOINT_PATH, EFFECTS_PATH)  # un directorio en su lugar: rechazado antes de borrar
    # El punto de control primero: si esto muere a mitad (o se corta la luz), un --resume no encuentra
    # una tarea vieja «terminada» cuyo reporte ya se borró. Los .tmp nunca se leen.
    remove_durably(CHECKPOINT_PATH, EFFECTS_PATH, CHECKPOINT_PATH + ".tmp", EFFECTS_PATH + ".tmp")
    prepare_task_files()  # borra el reporte viejo (también en disco) y crea sales-notes.txt si falta
    return 0, 0, [{"role": "user", "content": task}]


# %% de_la_leccion_a_produccion.ipynb · celda prod-28
from harness.defenses.replies import TurnLimitReached, checked_turn, finished


def run_agent(client, task, tools, scene=None, point_a=True):
    turns, tokens_used, messages = start = scene or fresh_scene(task)
    response = ask_model(client, tools, messages)
    tokens_used += usage_tokens(response)
    while response.stop_reason == "tool_use":
        if turns >= start[0] + MAX_TURNS:  # un tope por corrida; no es un final: salida 1, y --resume sigue
            raise TurnLimitReached(MAX_TURNS)  # «Se alcanzó el máximo de N turnos…», con qué hacer
        turns += 1
        content, pending = checked_turn(response, messages)  # una respuesta inválida no toca el disco
        # —— Punto A: apenas llega la respuesta, anota la llamada colgante de este turno ——
        if point_a and pending:  # «solo el punto B» se lo salta: la llamada colgante queda invisible
            cp = checkpoint(task, turns, tokens_used, messages, pending)  # tu turno: punto_A
            save_checkpoint(keep_assistant_turn(cp, content))  # tu turno: punto_A
            print(f"[turn {turns}][save A] pending={pending['name']}")
            crash_point("after-save-a")
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": run_tool_uses(content)})
        # —— Punto B: el resultado está en messages (y el registro en disco): colgante limpiada ——
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))  # tu turno: punto_B
        print(f"[turn {turns}][save B]")
        crash_point("after-save-b")
        response = ask_model(client, tools, messages)
        tokens_used += usage_tokens(response)
    text = final_text(response)  # un final vacío es un error, nunca un [done]; y terminada, --resume lo sabe
    save_checkpoint(finished(checkpoint(task, turns, tokens_used, messages, None), text))
    return text


# %% de_la_leccion_a_produccion.ipynb · celda prod-34
from harness.defenses.durable import read_bytes  # bytes: un carácter UTF-8 cortado también es «a medias»
from harness.defenses.guards import LedgerError, ledger_refusal, require_ledger_shape, unreadable


def load_effects():
    try:
        raw = read_bytes(EFFECTS_PATH)
    except FileNotFoundError:
        return {}  # nunca se ejecutó nada todavía
    except OSError as err:
        raise LedgerError(unreadable(EFFECTS_PATH, err)) from None
    try:
        effects = loads(raw)
    except Unbounded as err:  # JSON, pero anidado sin fin o con un texto que no se puede volver a escribir
        raise ledger_refusal(err) from None
    except ValueError:
        # Tratarlo como vacío volvería a ejecutar efectos secundarios que ya ocurrieron.
        raise LedgerError(
            f"No se pudo parsear {EFFECTS_PATH}; el registro de efectos está dañado y no se puede tratar "
            "como vacío sin arriesgar efectos secundarios duplicados. Revísalo a mano, o bórralo junto con "
            f"{CHECKPOINT_PATH} y empieza de nuevo sin --resume."
        ) from None
    require_ledger_shape(effects)  # una lista, un «result» que no es texto: dice qué le falta, sin usarlo
    return effects


# %% leccion_6_puntos_de_control.ipynb · celda code-34
def save_effect(tool_use_id, entry):
    effects = load_effects()
    effects[tool_use_id] = entry
    write_json_atomic(EFFECTS_PATH, effects)


def now_ms():
    return int(time.time() * 1000)  # «at»: la hora de la anotación, en milisegundos


# %% de_la_leccion_a_produccion.ipynb · celda prod-38
from harness.defenses.guards import stop_if_lasting, warn
from harness.tools import rerun_reason, rerunnable  # solo lectura (o con clave): se puede repetir

# «idempotente» (ver «De la lección a producción»): write_report con el tool_use_id como clave.
KEYED_WRITES = os.environ.get(VARIANT_VAR) == "idempotente"


def try_tool(name, tool_input, tool_use_id):
    """(salida, None) si la herramienta terminó; (None, su tool_result con is_error) si falló: el
    modelo recibe el error y decide, como en el Curso 7, también al volver a ejecutarla al reanudar."""
    try:
        return run_tool(name, tool_input, key=tool_use_id if KEYED_WRITES else None), None
    except Exception as err:
        stop_if_lasting(err)  # salvo una falla del entorno que dura: salida 1, reanudable
        return None, tool_result(tool_use_id, f"Error de ejecución de la herramienta: {err}", True)


def run_tool_uses(content):  # tu turno
    """El run_tool_uses del Curso 7, con el registro: ejecutar primero, anotar después."""
    results = []
    for block in tool_uses(content):
        output, failed = try_tool(block["name"], block["input"], block["id"])
        if failed:
            results.append(failed)
            continue
        crash_point("after-tool")
        # El efecto secundario ya ocurrió: aunque la escritura del registro falle, no hay que mentir
        # con is_error (el modelo reintentaría y duplicaría el efecto); solo avisar a una persona.
        try:
            save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})
        except (OSError, LedgerError):
            warn(  # en el acto, por stderr: una caída después no se lo lleva
                f"[falló la escritura del registro] tool_use_id={block['id']}: el efecto secundario ya "
                "ocurrió, riesgo de ejecución duplicada al reanudar, por favor revisa a mano"
            )
        else:
            crash_point("after-effect-write")
        results.append(tool_result(block["id"], output))
    return results


def reconcile(cp):  # tu turno
    pending = cp["pendingToolUse"]
    if not pending:
        return None  # no hay llamada colgante, simplemente seguir

    hit = load_effects().get(pending["id"])
    where = f"[resume][reconcile] tool_use_id={pending['id']} name={pending['name']}"

    if hit:
        print(f"{where} acierto en el registro, reutilizando resultado, sin volver a ejecutar")
        return tool_result(pending["id"], hit["result"])

    if rerunnable(pending["name"], KEYED_WRITES):
        print(f"{where} fallo en el registro, {rerun_reason(pending['name'])}, volviendo a ejecutar")
        output, failed = try_tool(pending["name"], pending["input"], pending["id"])
        if failed:
            return failed
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


# %% de_la_leccion_a_produccion.ipynb · celda prod-61
from harness.defenses.guards import require_matching_ledger
from harness.defenses.replies import check_resumable
from harness.tools import REPORT_PATH


def resume_scene(task):
    """Carga el punto de control, concilia la llamada colgante y rellena el punto B si hacía falta."""
    cp = load_checkpoint()
    check_resumable(cp)  # ni una tarea ya terminada ni una conversación que la API rechazaría
    require_matching_ledger(cp["pendingToolUse"], load_effects())  # antes de escribir nada
    # Un directorio donde irá un archivo, o un reporte que es otro nombre de otro archivo: rechazados.
    check_agent_files(CHECKPOINT_PATH, EFFECTS_PATH, appended=(REPORT_PATH,))
    turns, tokens_used, messages = cp["turns"], cp["tokensUsed"], cp["messages"]
    pending = cp["pendingToolUse"]
    print(f"[resume] leído turn={turns} pending={pending['name'] if pending else 'null'}")
    result = reconcile(cp)
    if result:
        # El punto A se guardó antes de agregar el turno del asistente: se recupera del punto de control.
        messages.append({"role": "assistant", "content": assistant_turn(cp)})
        messages.append({"role": "user", "content": [result]})
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))
        print(f"[turn {turns}][save B] rellenado el resultado de herramienta de este turno tras reanudar")
        crash_point("after-save-b")
    return turns, tokens_used, messages


# %% de_la_leccion_a_produccion.ipynb · celda prod-63
from harness.contract import command_line_problem
from harness.defenses.session import AgentFailure, agent_session
from harness.errors import one_line, print_final

USAGE = "uso: python agent.py [--resume] [--live]"
VARIANTS = ("dos-puntos", "solo-b", "idempotente")


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    variant = os.environ.get(VARIANT_VAR) or VARIANTS[0]
    problem = command_line_problem(args, variant, VARIANTS)  # --reanudar, una variante mal escrita
    if problem:
        print(one_line(f"{problem}. {USAGE}"), file=sys.stderr)  # un salto de línea ajeno, escapado
        return 2
    try:
        with agent_session():  # AGENT_WORKDIR y CRASH_AFTER válidos; un solo agente por directorio
            client = make_client("--live" in args)  # --live sin clave falla aquí, sin tocar el disco
            scene = resume_scene(TASK) if "--resume" in args else None
            result = run_agent(client, TASK, TOOLS, scene, point_a=variant != "solo-b")
    except SimulatedCrash as err:
        print(f"[kill] {err}")
        return 137
    except AgentFailure as err:  # Ctrl-C (130); un archivo dañado, el disco lleno (1): una línea
        print(err, file=sys.stderr)
        return err.code
    return print_final(f"[done] {result}")  # con la salida cerrada: una línea en stderr, sin traza


# %% de_la_leccion_a_produccion.ipynb · celda prod-28c
# Clave opcional del punto A: el turno del asistente tal cual llegó, si trae más que su tool_use.
PENDING_CONTENT = "pendingAssistantContent"


def keep_assistant_turn(cp, content):
    """Si el turno trae más que su tool_use (un modelo real suele escribir un texto antes), se guarda
    tal cual llegó en ``pendingAssistantContent``: rehacerlo desde pendingToolUse perdería el resto.
    Solo entonces: el turno del guion se rehace idéntico y el punto A guarda las claves de la lección."""
    if content != [{"type": "tool_use", **cp["pendingToolUse"]}]:
        cp[PENDING_CONTENT] = content
    return cp


def assistant_turn(cp):
    """El turno del asistente de la llamada colgante, como se le mandará de nuevo a la API (la forma
    de ``pendingAssistantContent`` ya se validó al cargar el punto de control)."""
    return cp.get(PENDING_CONTENT) or [{"type": "tool_use", **cp["pendingToolUse"]}]


if __name__ == "__main__":
    sys.exit(main())

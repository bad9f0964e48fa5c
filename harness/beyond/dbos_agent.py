"""La tarea de la lección como flujo de DBOS: cada llamada al modelo y cada herramienta, un paso.

    python -m harness.beyond.dbos_agent             # corrida nueva (borra el estado de la anterior)
    python -m harness.beyond.dbos_agent --resume    # un proceso nuevo retoma el flujo desde la base
    CRASH_AFTER=after-tool:3 python -m harness.beyond.dbos_agent   # muere ahí, con código 137

El mismo contrato que el agente de la lección: directorio de trabajo en ``AGENT_WORKDIR``, etiquetas de
``CRASH_AFTER``, salida 137 al morir, ``--live`` para el modelo real. ``AGENT_VARIANT=idempotente``
escribe el reporte con ``write_report_once`` y el id del paso como clave. La base del motor es SQLite
(``dbos.sqlite`` en el directorio de trabajo) salvo que ``DBOS_SYSTEM_DATABASE_URL`` nombre otra
(``postgresql://…``).

Dónde cae cada etiqueta (el motor no tiene punto A ni punto B: su registro son las salidas de paso):

- ``after-save-a``: la salida del paso del modelo ya está en la base (nombra la herramienta);
- ``after-tool``: dentro del paso de la herramienta, ya ejecutada, antes de que su salida se anote:
  la ventana ② de la lección;
- ``after-effect-write``: la salida del paso de la herramienta ya está en la base;
- ``after-save-b``: todas las herramientas del turno tienen su salida en la base (el mismo estado:
  en el motor, la anotación del paso es a la vez el registro y el punto B).
"""

if (
    __name__ == "__main__"
):  # lo primero: una señal durante los imports espera a la sesión, no mata en silencio
    from harness.defenses.early_signals import hold_signals

    hold_signals()


import logging
import os
import threading

from harness.base_loop import MAX_TURNS, ask_model, tool_uses, usage_tokens
from harness.beyond.command_line import agent_main
from harness.beyond.engine_view import BRANCH_MARKERS, DATABASE, DATABASE_URL_ENV, ID_PATH, RESUME_PREFIX
from harness.beyond.preload import copy_empty_database
from harness.beyond.process_death import die_at, leave, stop_here
from harness.contract import HIT, RERUN, turn_limit_text
from harness.defenses.clients import make_client
from harness.defenses.durable import read_bytes, write_durable
from harness.defenses.idempotent import receipts_path, write_report_once
from harness.defenses.replies import TaskNotDone, check_done, resume_hint
from harness.errors import HarnessError
from harness.protocol import block_to_dict
from harness.scenario import TASK
from harness.text import plural
from harness.tools import REPORT_PATH, TOOLS, prepare_task_files, run_tool

WORKFLOW_ID = "tarea-leccion-6"
VARIANTS = ("al-menos-una-vez", "idempotente")
USAGE = "uso: python -m harness.beyond.dbos_agent [--resume] [--live]"
# La versión de aplicación, fija: DBOS solo retoma un flujo de la misma versión, y sin fijarla la calcula
# de un hash del código de los flujos y de la versión de DBOS, así que cualquier cambio (un comentario, una
# actualización de dbos) dejaría huérfano al flujo que quedó a medias. Súbela solo si cambias el flujo de
# una forma que un flujo viejo no puede seguir (otro orden de pasos): entonces --resume lo dice y no espera.
APP_VERSION = "leccion-6-dbos-1"
# Cada cuánto mira el motor la base mientras espera (el aviso de un cambio, el resultado del flujo):
# con el segundo de omisión, cada reanudación esperaría dos segundos de más sin hacer nada.
POLL_SECONDS = 0.05
# El flujo corre en una cola propia, guardada en la base: al reanudar, el motor lo devuelve a esa cola
# (la de DBOS, sin cola propia, se mira una vez por segundo) y este proceso lo toma a la primera vuelta.
QUEUE_NAME = "tarea-leccion-6"

if __name__ == "__main__":  # con un servidor que ya importó DBOS, la corrida nace de él (preload)
    from harness.beyond.preload import relay_if_preloaded

    relay_if_preloaded("harness.beyond.dbos_agent")

from dbos import DBOS, SetWorkflowID  # noqa: E402 (después de las constantes: tarda más de un segundo)

# Lo que solo vive en este proceso: el cliente del modelo, si esto es una reanudación, y qué pasos
# se ejecutaron de verdad aquí (un paso que el motor devuelve desde la base no corre su cuerpo).
_process = {"client": None, "resume": False, "variant": VARIANTS[0]}
_steps = threading.local()


def _ran():
    """Cuántos pasos ejecutó de verdad este hilo (el de su flujo) hasta ahora."""
    return getattr(_steps, "ran", 0)


def _mark_ran():
    _steps.ran = _ran() + 1


@DBOS.step()
def model_step(messages):
    """Una llamada al modelo; su salida (la respuesta) queda anotada en la base."""
    _mark_ran()
    try:
        response = ask_model(_process["client"], TOOLS, messages)
    except HarnessError as err:  # la API falló, o su respuesta no se puede usar ni guardar
        _stop_unanswered(err)
    content = [block_to_dict(b) for b in response.content]
    if response.stop_reason != "tool_use":
        _require_report(messages, content)  # un final sin reporte no se anota: el flujo sigue pendiente
    return {"stop_reason": response.stop_reason, "content": content, "tokens": usage_tokens(response)}


def _stop_unanswered(err):
    """Un error al pedirle al modelo no se anota como salida del paso: anotado, el motor lo repetiría
    en cada --resume y el flujo terminaría en ERROR. Se sale aquí con su línea, el flujo queda
    pendiente y --resume le vuelve a pedir ese turno. Cómo seguir lo dice el motor, no el punto de
    control de la lección (``resume_hint``), que este agente no tiene."""
    stop_here(f"{str(err).replace(resume_hint(), '').rstrip()} {_then_resume('esta respuesta')}")


def _require_report(messages, content):
    text = "".join(b.get("text") or "" for b in content if b["type"] == "text")
    try:
        check_done(messages, text, then=_then_resume("este final"))
    except TaskNotDone as err:
        stop_here(str(err))


def _then_resume(unsaved):
    return (
        f"El flujo {DBOS.workflow_id} quedó pendiente en la base, con sus pasos anotados y {unsaved} sin "
        "anotar: corrige la causa y retoma con --resume (el modelo vuelve a decidir), o empieza de nuevo "
        "sin --resume."
    )


@DBOS.step()
def tool_step(call):
    """Una herramienta. Su salida se anota al volver: morir antes deja el paso sin salida."""
    _mark_ran()
    if call["name"] == "write_report" and _process["variant"] == "idempotente":
        output = write_report_once(call["input"], key=f"{DBOS.workflow_id}:paso-{DBOS.step_id}")
    else:
        output = run_tool(call["name"], call["input"])
    die_at("after-tool")  # ② la herramienta ya corrió; el motor todavía no anotó su salida
    return output


class _Replay:
    """Lleva la cuenta de los pasos que el motor devolvió desde la base al reanudar, y dice, en el
    primer paso que se ejecuta de verdad, qué encontró donde la caída cortó."""

    def __init__(self):
        self.steps = 0
        self.last_tool = None  # (turno, llamada) del último paso de herramienta devuelto desde la base
        self.told = not _process["resume"]

    def call(self, step, arg, turn, tool=None):
        before = _ran()
        out = step(arg)
        live = _ran() > before
        if not live:
            self.steps += 1
            self.last_tool = (turn, tool) if tool else None
        elif not self.told:
            self.told = True
            self._tell(turn, tool)
        return out, live

    def _tell(self, turn, tool):
        print(
            f"[resume] flujo {DBOS.workflow_id}: {plural(self.steps, 'paso devuelto', 'pasos devueltos')} "
            "desde la base, sin ejecutarlos"
        )
        if tool is not None:
            where = f"{RESUME_PREFIX} turn={turn} paso={self.steps + 1} tool_use_id={tool['id']} name={tool['name']}"
            print(f"{where} sin salida registrada: {BRANCH_MARKERS[RERUN]}")
        elif self.last_tool is not None:
            turn, tool = self.last_tool
            where = (
                f"{RESUME_PREFIX} turn={turn} paso={self.steps} tool_use_id={tool['id']} name={tool['name']}"
            )
            print(f"{where} {BRANCH_MARKERS[HIT]}, sin volver a ejecutar")


@DBOS.workflow()
def run_task(task):
    """El bucle de la lección como flujo: el motor anota la entrada (``task``) y cada salida de paso."""
    replay = _Replay()
    messages = [{"role": "user", "content": task}]
    response = _ask(replay, messages, turns=0)
    turns = live_turns = 0  # el tope es por corrida, como en la lección: cuenta los turnos de este proceso
    while response["stop_reason"] == "tool_use":
        if live_turns >= MAX_TURNS:
            stop_here(
                f"{turn_limit_text(MAX_TURNS)}: no es un final del modelo. El flujo {DBOS.workflow_id} quedó "
                "pendiente en la base, con cada paso anotado; revisa por qué el modelo no termina, y retoma "
                "con --resume (cada corrida tiene su propio tope)."
            )
        turns += 1
        results, live_turn = [], False
        for call in tool_uses(response["content"]):
            output, live = replay.call(tool_step, call, turns, tool=call)
            results.append({"type": "tool_result", "tool_use_id": call["id"], "content": output})
            if live:
                live_turn = True
                print(f"[turn {turns}][paso {call['name']}] salida anotada en la base")
                die_at("after-effect-write")
        if live_turn:
            live_turns += 1
            die_at("after-save-b")
        messages.append({"role": "assistant", "content": response["content"]})
        messages.append({"role": "user", "content": results})
        response = _ask(replay, messages, turns)
    return "".join(b.get("text", "") for b in response["content"] if b["type"] == "text")


def _ask(replay, messages, turns):
    """El paso del modelo; si corrió de verdad y nombra herramientas, su salida anotada es el punto A."""
    response, live = replay.call(model_step, messages, turns)
    if live and response["stop_reason"] == "tool_use":
        names = ",".join(c["name"] for c in tool_uses(response["content"]))
        print(f"[turn {turns + 1}][paso modelo] pending={names}")
        die_at("after-save-a")
    return response


def database_url():
    """La base del motor: ``DBOS_SYSTEM_DATABASE_URL``, o un SQLite en el directorio de trabajo."""
    return os.environ.get(DATABASE_URL_ENV) or f"sqlite:///{os.path.abspath(DATABASE)}"


def _workflow_id(resume):
    """El id del flujo de este directorio (``dbos-flujo.txt``); una corrida nueva usa el siguiente,
    para no chocar con el de una corrida anterior en una base compartida (Postgres)."""
    try:  # sin seguir enlaces, como todo archivo del agente
        current = read_bytes(ID_PATH).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        current = None
    if resume:
        if not current:
            raise HarnessError(f"No se encuentra {ID_PATH}; no hay ningún flujo desde donde hacer --resume")
        return current, None
    number = int(current.rsplit("-", 1)[1]) + 1 if current else 1
    new = f"{WORKFLOW_ID}-{number}"
    write_durable(ID_PATH, new.encode("utf-8"))
    return new, current


def fresh_files():
    """Una apertura limpia: sin la base SQLite, el reporte ni los recibos de una corrida anterior. La base
    SQLite nueva ya trae la cola cuando arranca el motor que corre el flujo: nacida del servidor con DBOS
    importado, es una copia de la vacía ya migrada; sin él, se hace aquí, igual que la del servidor."""
    for path in (DATABASE, f"{DATABASE}-journal", f"{DATABASE}-wal", receipts_path(REPORT_PATH)):
        if os.path.isfile(path):
            os.remove(path)
    if not os.environ.get(DATABASE_URL_ENV) and not copy_empty_database(DATABASE):
        write_empty_database(os.path.abspath(DATABASE))
    prepare_task_files()


def write_empty_database(target):
    """La base del motor recién creada, con su cola y sin flujos, en ``target`` (la plantilla del servidor
    precargado, o la de una corrida nueva sin él): se lanza y se cierra el motor sobre un SQLite en la
    carpeta de ``target``."""
    os.environ.pop(DATABASE_URL_ENV, None)
    os.chdir(os.path.dirname(target))
    launch(executor_id="plantilla")
    DBOS.destroy(destroy_registry=False)
    os.replace(DATABASE, target)


def launch(executor_id):
    """Arranca el motor; ``executor_id`` dice qué flujos pendientes recupera al arrancar (los suyos)."""
    DBOS(
        config={
            "name": "leccion-6-mas-alla",
            "system_database_url": database_url(),
            "executor_id": executor_id,
            "application_version": APP_VERSION,
            # Sus avisos y trazas (en inglés) no llegan a quien usa el agente: cada problema lo dice el
            # agente, en una línea (una base que no responde, otra versión de aplicación…).
            "log_level": "CRITICAL",
            "notification_listener_polling_interval_sec": POLL_SECONDS,
        }
    )
    # Tampoco el de SQLAlchemy, debajo de DBOS: una señal mientras cierra una conexión no deja su traza.
    logging.getLogger("sqlalchemy").setLevel(logging.CRITICAL)
    try:
        DBOS.launch()
        DBOS.register_queue(QUEUE_NAME, polling_interval_sec=POLL_SECONDS)
    except Exception as err:  # la base no responde, no existe o no se deja usar
        DBOS.destroy(destroy_registry=False)
        raise HarnessError(
            f"El motor no pudo abrir su base ({_database_name()}): {_short(err)}. Revisa {DATABASE_URL_ENV} "
            "(¿el servidor está andando, existe esa base, la clave es la correcta?) y vuelve a intentarlo."
        ) from None


def _database_name():
    """La base sin usuario ni contraseña: se puede mostrar."""
    url = database_url()
    if "@" in url:
        scheme, rest = url.split("://", 1)
        url = f"{scheme}://{rest.rsplit('@', 1)[1]}"
    return url


def _short(err):
    """La primera línea de un error de la base (psycopg, sqlalchemy), sin la clave de la URL."""
    text = " ".join(str(getattr(err, "orig", None) or err).split())
    text = text.split(" (Background on this error")[0]
    return text if len(text) <= 160 else text[:157] + "…"


def run(resume):
    workflow_id, previous = _workflow_id(resume)
    if not resume:
        fresh_files()
    launch(executor_id=workflow_id)  # al arrancar, el motor retoma los flujos pendientes de este id
    try:
        if resume:
            status = DBOS.get_workflow_status(workflow_id)
            check_recoverable(workflow_id, status)  # si no se puede retomar, una línea y no esperar
            if status.status == "SUCCESS":
                print(f"[resume] flujo {workflow_id}: ya había terminado; su resultado está en la base")
        else:
            if previous:
                DBOS.delete_workflow(previous)  # en una base compartida, la corrida anterior no se retoma
            with SetWorkflowID(workflow_id):
                DBOS.retrieve_queue(QUEUE_NAME).enqueue(run_task, TASK)
        return _printable(DBOS.retrieve_workflow(workflow_id).get_result(polling_interval_sec=POLL_SECONDS))
    finally:
        DBOS.destroy(destroy_registry=False)


def _printable(result):
    """El texto final que guardó la base, con cada carácter que UTF-8 no puede escribir (un sustituto
    suelto, de una respuesta anotada antes de que el paso del modelo los rechazara) como su escape: la
    tarea terminó, y su línea [done] no puede ser una traza en cada --resume."""
    return result.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(result, str) else result


def check_recoverable(workflow_id, status):
    """Antes de esperar el resultado de un flujo: si el motor no lo va a retomar (no está en esta base,
    es de otra versión de aplicación o de otro ejecutor, terminó en error o lo cancelaron), una línea
    que dice por qué y qué hacer, en vez de esperar para siempre a un flujo que nadie ejecuta."""
    restart = "o empieza de nuevo sin --resume"
    if status is None:
        where = os.environ.get(DATABASE_URL_ENV) and f"la base de {DATABASE_URL_ENV}" or DATABASE
        raise HarnessError(
            f"{where} no tiene el flujo {workflow_id} de {ID_PATH}: no hay nada que reanudar. Si la corrida "
            f"que murió usó otra base, apúntala con {DATABASE_URL_ENV}, {restart}."
        )
    if status.status in ("SUCCESS",):
        return
    if status.status in ("ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
        raise HarnessError(
            f"El flujo {workflow_id} terminó en la base con estado {status.status}: {restart}."
        )
    if status.app_version != APP_VERSION:
        raise HarnessError(
            f"El flujo {workflow_id} quedó en la base con la versión de aplicación «{status.app_version}» y este "
            f"agente es «{APP_VERSION}»: DBOS no retoma un flujo de otra versión (su código puede seguir otro "
            f"camino). Vuelve al código de esa versión para terminarlo, {restart}."
        )
    if status.executor_id not in (None, workflow_id):
        raise HarnessError(
            f"El flujo {workflow_id} es del ejecutor «{status.executor_id}», no de este agente: no lo retoma "
            f"este proceso. Recupéralo desde ese ejecutor, {restart}."
        )


def main(argv=None):
    def run_engine(resume, live, variant):
        _process.update(resume=resume, variant=variant, client=make_client(live))
        try:
            return run(resume)
        except (HarnessError, OSError):
            raise
        except Exception as err:  # el motor (la base no responde) o el flujo terminó en error
            raise HarnessError(f"El motor no pudo terminar el flujo: {_short(err)}") from None

    return agent_main(argv, variants=VARIANTS, usage=USAGE, run=run_engine)


if __name__ == "__main__":  # el flujo corre en un hilo del motor: una señal no espera a que termine
    leave(main())

"""Un trabajador de DBOS: toma tareas de la cola «tareas» y escribe un reporte por tarea.

    DBOS_SYSTEM_DATABASE_URL=postgresql://… WORKER_NAME=trabajador-a python -m harness.beyond.queue_worker

Varios procesos (en una o varias máquinas) con la misma base se reparten la cola: el motor entrega
cada tarea a uno solo. Cada tarea es un flujo con un paso, escribir ``reportes/tarea-NN.txt``; con
``WORKER_IDEMPOTENT=1`` (por omisión) lo escribe ``write_report_once`` con el id del paso como clave.

Por la entrada estándar recibe órdenes, una por línea: ``recuperar <trabajador>`` vuelve a encolar los
flujos pendientes de un trabajador muerto (``DBOS.list_workflows`` + ``DBOS.resume_workflows``, la
interfaz documentada de DBOS); ``salir`` termina. ``WORKER_HANG=1`` hace que, después de escribir
el reporte de su primera tarea (y antes de que el motor anote la salida del paso), deje una marca en
``marcas/`` y se quede esperando: ahí lo mata con SIGKILL quien coordina (``harness.beyond.two_workers``).
"""

import os
import sys
import threading

if __name__ == "__main__":  # con un servidor que ya importó DBOS, el trabajador nace de él (preload)
    from harness.beyond.preload import relay_if_preloaded

    relay_if_preloaded("harness.beyond.queue_worker")

from dbos import DBOS, DBOSClient  # noqa: E402 (después del preload: tarda más de un segundo)

from harness.beyond.engine_view import DATABASE_URL_ENV
from harness.contract import EXIT_USAGE, WORKDIR_VAR
from harness.defenses.durable import write_durable
from harness.defenses.idempotent import write_report_once
from harness.text import plural
from harness.tools import REPORT_TITLE, write_report

QUEUE_NAME = "tareas"
# Lo que lee del entorno un trabajador: su nombre, si escribe con clave y si se cuelga en la ventana ②.
WORKER_VAR, IDEMPOTENT_VAR, HANG_VAR = "WORKER_NAME", "WORKER_IDEMPOTENT", "WORKER_HANG"
REPORTS_DIR = "reportes"
MARKS_DIR = "marcas"
RECOVERED = "recuperó"  # la respuesta a «recuperar»: «[nombre] recuperó N flujos de X: id,id»
READY = "listo"  # la primera línea: «[nombre] listo (pid N)», el pid del proceso que corre los pasos
POLL_SECONDS = 0.02
APP_NAME, APP_VERSION = "mas-alla-cola", "mas-alla-1"
# Una tarea a la vez por trabajador; la cola se mira cada 20 ms: cada tarea espera una vuelta.
QUEUE_OPTIONS = {"worker_concurrency": 1, "polling_interval_sec": POLL_SECONDS}
_hang = {}  # lo decide main() con WORKER_HANG: el módulo puede importarse antes (preload)


def report_path(number):
    return f"{REPORTS_DIR}/tarea-{number:02d}.txt"


@DBOS.step()
def write_task_report(number):
    """El efecto secundario de la tarea: su reporte. La salida del paso se anota al volver."""
    tool_input = {"path": report_path(number), "content": f"{REPORT_TITLE} · tarea {number:02d}\n"}
    if os.environ.get(IDEMPOTENT_VAR, "1") == "1":
        output = write_report_once(tool_input, key=f"{DBOS.workflow_id}:paso-{DBOS.step_id}")
    else:
        output = write_report(tool_input)
    worker = os.environ[WORKER_VAR]
    write_durable(f"{MARKS_DIR}/{worker}-tarea-{number:02d}", b"reporte escrito, paso sin anotar\n")
    if _hang.pop("pending", False):
        threading.Event().wait()  # la ventana ②, abierta hasta que llegue el SIGKILL
    return output


@DBOS.workflow()
def report_task(number):
    return write_task_report(number)


def recover_from(dead):
    """Los flujos pendientes (PENDING) del trabajador ``dead`` vuelven a la cola con la interfaz pública
    de DBOS: ``DBOS.list_workflows`` los encuentra por su ``executor_id`` y ``DBOS.resume_workflows`` los
    encola otra vez (cada uno sigue desde su último paso anotado); un trabajador vivo los toma de ahí."""
    pending = DBOS.list_workflows(status="PENDING", executor_id=dead, load_input=False, load_output=False)
    ids = sorted(w.workflow_id for w in pending)
    if ids:
        DBOS.resume_workflows(ids, queue_name=QUEUE_NAME)
    return ids


def register_queue(url):
    """La cola, guardada en la base ``url`` sin lanzar el motor (la plantilla de PostgreSQL): un motor
    que arranca con la cola ya en su base la atiende enseguida; una que se registra después de
    arrancar espera a la siguiente revisión de colas del motor, un segundo."""
    client = DBOSClient(system_database_url=url, application_name=APP_NAME)
    try:
        client.register_queue(QUEUE_NAME, **QUEUE_OPTIONS)
    finally:
        client.destroy()


def serve(name):
    """Atiende las órdenes de la entrada estándar hasta ``salir`` (o hasta que se cierre)."""
    print(f"[{name}] {READY} (pid {os.getpid()})", flush=True)
    for line in sys.stdin:
        command, _, arg = line.strip().partition(" ")
        if command == "recuperar":
            ids = recover_from(arg)
            flows = plural(len(ids), "flujo", "flujos")
            print(f"[{name}] {RECOVERED} {flows} de {arg}: {','.join(ids)}", flush=True)
        elif command == "salir":
            break


def main(argv=None):
    """Sin argumentos (``argv`` existe para el preload): todo lo dice el entorno."""
    name = os.environ.get(WORKER_VAR)
    url = os.environ.get(DATABASE_URL_ENV)
    if not name or not url:
        print(f"Faltan {WORKER_VAR} y {DATABASE_URL_ENV} para arrancar un trabajador.", file=sys.stderr)
        return EXIT_USAGE
    os.chdir(os.environ.get(WORKDIR_VAR) or ".")
    os.makedirs(REPORTS_DIR, exist_ok=True)
    os.makedirs(MARKS_DIR, exist_ok=True)
    _hang["pending"] = os.environ.get(HANG_VAR) == "1"
    config = {"name": APP_NAME, "system_database_url": url, "executor_id": name}
    DBOS(config={**config, "application_version": APP_VERSION, "log_level": "WARNING"})
    DBOS.launch()
    DBOS.register_queue(QUEUE_NAME, **QUEUE_OPTIONS)
    try:
        serve(name)
    finally:
        DBOS.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Lo que el motor tiene anotado en su SQLite: el «checkpoint.json» de DBOS, como filas legibles.

Solo lee, con la interfaz pública de DBOS (``DBOSClient.list_workflows`` y
``DBOSClient.list_workflow_steps``, que no migran ni escriben la base): el estado del flujo y, por paso,
su id, su nombre y si tiene salida. No depende de cómo DBOS guarda sus tablas, que puede cambiar entre
versiones. También fija los nombres que comparten el agente de DBOS y quien lo mira desde afuera (el
laboratorio de caídas): sus archivos y cómo cuenta su log lo que hizo el motor al reanudar. Importa
``dbos`` solo al leer una base (tarda ~0,4 s).
"""

import os
from typing import NamedTuple

from harness.contract import HIT, RERUN
from harness.defenses.idempotent import receipts_path
from harness.notebook.disk_state import DiskState, describe_report
from harness.tools import REPORT_PATH, report_copies

DATABASE = "dbos.sqlite"
ID_PATH = "dbos-flujo.txt"
DATABASE_URL_ENV = "DBOS_SYSTEM_DATABASE_URL"  # si nombra una base (postgresql://…), no se usa el SQLite
# Todo lo que deja una corrida del agente de DBOS en su directorio (el diario de SQLite, si murió
# a mitad de una transacción, y los recibos de la escritura idempotente).
ENGINE_FILES = (DATABASE, f"{DATABASE}-journal", f"{DATABASE}-wal", f"{DATABASE}-shm", ID_PATH)
ENGINE_FILES += (receipts_path(REPORT_PATH),)
# Lo que el motor hizo con el paso que la caída dejó abierto: la línea empieza con RESUME_PREFIX,
# sigue con turn=N y dice uno de estos textos.
RESUME_PREFIX = "[resume][dbos]"
BRANCH_MARKERS = {HIT: "salida registrada, reutilizada", RERUN: "el motor vuelve a ejecutar el paso"}


class NoWorkflow(LookupError):  # noqa: N818 (se lee como una condición)
    """La base existe pero no tiene ningún flujo."""


def engine_record(workdir):
    """(estado del flujo, [(paso, nombre, «salida anotada» o «—»)]) de la base en ``workdir``."""
    from dbos import DBOSClient  # noqa: PLC0415 (tarda: solo quien lee una base lo paga)

    path = os.path.join(os.path.abspath(workdir), DATABASE)
    client = DBOSClient(system_database_url=f"sqlite:///{path}", retry_connection_errors=False)
    try:
        flows = client.list_workflows(load_input=False, load_output=False)
        if not flows:
            raise NoWorkflow(path)
        flow = flows[-1]  # el más reciente: una corrida nueva borra la base de la anterior
        steps = client.list_workflow_steps(flow.workflow_id)
    finally:
        client.destroy()
    return flow.status, [
        (s["function_id"], s["function_name"], "salida anotada" if s["output"] is not None else "—")
        for s in sorted(steps, key=lambda s: s["function_id"])
    ]


class EngineState(NamedTuple):
    """El disco de una corrida sobre DBOS, con la forma de ``harness.notebook.disk_state.DiskState`` para que el
    laboratorio lo muestre igual: ``record`` es lo que da ``engine_record`` o un texto si no se pudo."""

    workflow: object  # el id de dbos-flujo.txt, o None
    record: object
    report_copies: int

    checkpoint = None  # el motor no tiene checkpoint.json

    def rows(self):
        return [
            (ID_PATH, self.workflow or "no existe"),
            (DATABASE, describe_record(self.record)),
            (REPORT_PATH, describe_report(self.report_copies)),
        ]

    # El texto y la tabla se arman igual que los de DiskState, desde rows().
    __str__ = DiskState.__str__
    _repr_html_ = DiskState._repr_html_


def read_engine_state(workdir):
    """El ``EngineState`` de ``workdir``, sin modificar nada."""
    join = lambda name: os.path.join(workdir, name)  # noqa: E731
    try:
        with open(join(ID_PATH), encoding="utf-8") as f:
            workflow = f.read().strip()
    except FileNotFoundError:
        workflow = None
    if not os.path.exists(join(DATABASE)):
        record = "no existe"
    else:
        try:
            record = engine_record(workdir)
        except NoWorkflow:
            record = "sin ningún flujo"
        except Exception as err:  # una base a medias, o que no es de DBOS: se muestra, no se adivina
            record = f"ilegible ({type(err).__name__})"
    return EngineState(workflow, record, report_copies(join(REPORT_PATH)))


def describe_record(record):
    """«flujo PENDING · 5 pasos con salida anotada: 1 model_step, 2 tool_step…» en una línea."""
    if isinstance(record, str):
        return record
    status, steps = record
    noted = [f"{n} {name}" for n, name, output in steps if output != "—"]
    open_steps = [f"{n} {name}" for n, name, output in steps if output == "—"]
    count = "1 paso con salida anotada" if len(noted) == 1 else f"{len(noted)} pasos con salida anotada"
    text = f"flujo {status} · {count}" + (f": {', '.join(noted)}" if noted else "")
    return text + (f" · sin salida: {', '.join(open_steps)}" if open_steps else "")

"""Lo que el motor tiene anotado en su SQLite: el «checkpoint.json» de DBOS, como filas legibles.

Solo lee (``mode=ro``): el estado del flujo y, por paso, su id, su nombre y si tiene salida. También
fija los nombres que comparten el agente de DBOS y quien lo mira desde afuera (el laboratorio de
caídas): sus archivos y cómo cuenta su log lo que hizo el motor al reanudar. No importa ``dbos``.
"""

import os
import sqlite3
from typing import NamedTuple

from harness.disk_state import DiskState, describe_report
from harness.idempotent import receipts_path
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
BRANCH_MARKERS = {"hit": "salida registrada, reutilizada", "rerun": "el motor vuelve a ejecutar el paso"}


def engine_record(workdir):
    """(estado del flujo, [(paso, nombre, «salida anotada» o «—»)]) de la base en ``workdir``."""
    path = os.path.join(os.path.abspath(workdir), DATABASE)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        status = db.execute("SELECT status FROM workflow_status").fetchone()[0]
        steps = db.execute(
            "SELECT function_id, function_name, output IS NOT NULL FROM operation_outputs ORDER BY function_id"
        ).fetchall()
    return status, [(n, name, "salida anotada" if has else "—") for n, name, has in steps]


class EngineState(NamedTuple):
    """El disco de una corrida sobre DBOS, con la forma de ``harness.disk_state.DiskState`` para que el
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
        except (sqlite3.Error, TypeError) as err:  # TypeError: la base existe pero no tiene ningún flujo
            record = f"ilegible ({err})" if isinstance(err, sqlite3.Error) else "sin ningún flujo"
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

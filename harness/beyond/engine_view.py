"""Lo que el motor tiene anotado en su SQLite: el «checkpoint.json» de DBOS, como filas legibles.

Solo lee (``mode=ro``): el estado del flujo y, por paso, su id, su nombre y si tiene salida.
"""

import os
import sqlite3

from harness.beyond.dbos_agent import DATABASE


def engine_record(workdir):
    """(estado del flujo, [(paso, nombre, «salida anotada» o «—»)]) de la base en ``workdir``."""
    path = os.path.join(os.path.abspath(workdir), DATABASE)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        status = db.execute("SELECT status FROM workflow_status").fetchone()[0]
        steps = db.execute(
            "SELECT function_id, function_name, output IS NOT NULL FROM operation_outputs ORDER BY function_id"
        ).fetchall()
    return status, [(n, name, "salida anotada" if has else "—") for n, name, has in steps]

"""DBOS sobre un PostgreSQL real: dos trabajadores, 20 tareas, uno muere con SIGKILL a mitad de una.

Las corridas de verdad piden los programas de PostgreSQL (CI los instala); sin ellos se saltan con una
línea clara. El servidor es desechable (``harness.beyond.postgres``): loopback, carpeta temporal. La
sección 4 de «Más allá» guarda la misma corrida; su salida guardada se lee también sin PostgreSQL.
"""

import glob
import os
import signal
import socket
import tempfile
from collections import Counter
from urllib.parse import urlsplit

import nbformat
import pytest
from course_files import output_text

from harness.beyond import postgres, queue_worker
from harness.beyond.two_workers import DEAD, FACTS, RESCUER, facts, run_two_workers
from maintainer.paths import ROOT

MAS_ALLA = os.path.join(ROOT, "notebooks", "mas_alla_motor_durable.ipynb")
TASKS = 20


def expected(idempotent):
    """Lo que deja toda corrida: muere a en la tarea 1, b recupera ese flujo y hace las 20; el paso de
    la tarea 1 corre dos veces y, sin la clave, su reporte queda con dos copias."""
    return {
        "tareas": TASKS,
        "matado_en": "tarea-01",
        "salida_de_a": -signal.SIGKILL,
        "recuperados": ["cola-tarea-01"],
        "flujos": Counter({("SUCCESS", RESCUER): TASKS}),
        "pasos": Counter({DEAD: 1, RESCUER: TASKS}),
        "copias": {n: 1 if idempotent or n > 1 else 2 for n in range(1, TASKS + 1)},
        "reportes": [f"tarea-{n:02d}.txt" for n in range(1, TASKS + 1)],
    }


@pytest.fixture(scope="module")
def server():
    with postgres.disposable_server() as url:
        yield url


@pytest.mark.parametrize("idempotent", [True, False], ids=["con_clave", "sin_clave"])
@pytest.mark.needs_postgres
@pytest.mark.slow
def test_one_worker_dies_the_other_recovers_its_flow(server, tmp_path, idempotent):
    name = "con_clave" if idempotent else "sin_clave"
    figures = run_two_workers(f"{server}/dbos_{name}", str(tmp_path), idempotent=idempotent)
    assert figures == expected(idempotent)


def stored_table():
    """{fila: (con clave, sin clave)} de la tabla guardada en la celda de la sección 4."""
    notebook = nbformat.read(MAS_ALLA, as_version=4)
    [cell] = [c for c in notebook.cells if "needs_postgres" in c.metadata.get("tags", [])]
    header, *rows = [line.split(" | ") for line in output_text(cell).strip().splitlines()]
    assert header == ["lo que se lee después de la corrida", "con clave", "sin clave"]
    return {fact: tuple(values) for fact, *values in rows}


def test_the_notebook_stores_a_real_two_worker_run():
    """La salida guardada es la corrida (no el aviso de que falta PostgreSQL), fila por fila."""
    table = stored_table()
    assert list(table) == list(FACTS)
    for column, idempotent in enumerate([True, False]):
        assert [table[fact][column] for fact in FACTS] == facts(expected(idempotent))
    killed, recovered, flows, steps, reports = table.values()
    assert killed[0].startswith("tarea-01") and killed[0].endswith("(-9)")  # un SIGKILL de verdad
    assert recovered[0] == "1 flujo: cola-tarea-01"
    assert steps[0].startswith("21:")  # el paso de la tarea que murió corrió otra vez
    assert reports == (
        "20 · 1 copia en 20 reportes",
        "20 · 1 copia en 19 reportes; 2 copias en 1 reporte (tarea-01)",
    )


def server_folders():
    parent = "/tmp" if os.geteuid() == 0 else tempfile.gettempdir()
    return set(glob.glob(os.path.join(parent, "pg-mas-alla-*")))


def accepts_connections(url):
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=5).close()
    except OSError:
        return False
    return True


@pytest.mark.needs_postgres
def test_the_server_is_stopped_and_removed_even_when_interrupted():
    before = server_folders()
    with pytest.raises(KeyboardInterrupt):
        with postgres.disposable_server() as url:
            assert accepts_connections(url) and len(server_folders() - before) == 1
            raise KeyboardInterrupt  # el botón de interrumpir del notebook
    assert not accepts_connections(url) and server_folders() == before


def test_without_postgres_the_message_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(postgres.glob, "glob", lambda pattern: [])
    monkeypatch.setattr(postgres.shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(postgres.PostgresMissingError) as missing:
        postgres.binaries()
    for way in ("apt-get install postgresql", "brew install postgresql", "postgresql.org/download/windows"):
        assert way in str(missing.value)


@pytest.mark.needs_postgres
@pytest.mark.slow
def test_a_server_from_the_template_gives_new_databases_with_the_dbos_tables(monkeypatch):
    """Con la plantilla (la primera celda de «Más allá» la prepara), el servidor nace de una copia de su
    carpeta, y cada base nueva, copia de template1, ya trae las tablas de DBOS: no repite migraciones."""
    import psycopg  # noqa: PLC0415 (el controlador que usa DBOS; solo esta prueba lo usa directo)

    monkeypatch.setattr(postgres, "_template", {})  # una plantilla de esta prueba, no la de otra
    before = server_folders()
    postgres.prepare_template()
    with postgres.disposable_server() as url:
        assert postgres._template.get("data")  # nació de la plantilla, no de su propio initdb
        with psycopg.connect(f"{url}/postgres", autocommit=True) as admin:
            admin.execute("CREATE DATABASE nueva")
        with psycopg.connect(f"{url}/nueva") as new:
            [[table]] = new.execute("SELECT to_regclass('dbos.workflow_status')").fetchall()
            queues = new.execute("SELECT name, application_name FROM dbos.queues").fetchall()
        assert table is not None
        # y la cola de los trabajadores: su motor la atiende desde que arranca
        assert queues == [(queue_worker.QUEUE_NAME, queue_worker.APP_NAME)]
    assert not accepts_connections(url) and server_folders() == before

"""El servidor que ya importó DBOS (``harness.beyond.preload``): cada programa nace de él y se comporta
como sin él: lee su entorno en la corrida, muere de verdad y quien lo lanzó sale igual."""

import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from harness.beyond import dbos_agent
from harness.beyond.engine_view import DATABASE
from harness.beyond.preload import SOCKET_ENV
from harness.runs.launcher import run_agent_process

SAFETY_TIMEOUT = 60  # solo una red de seguridad


def start_worker(workdir, env):
    """Un trabajador de la cola sobre un SQLite, y el pid que dice en su primera línea."""
    full = {**os.environ, **env, "WORKER_NAME": "w", "PYTHONUNBUFFERED": "1"}
    full["DBOS_SYSTEM_DATABASE_URL"] = f"sqlite:///{workdir / 'cola.sqlite'}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "harness.beyond.queue_worker"],
        cwd=workdir,
        env=full,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ready = worker.stdout.readline()
    assert ready.startswith("[w] listo (pid "), ready + worker.stderr.read()
    return worker, int(ready.rpartition("pid ")[2].rstrip(")\n"))


@pytest.mark.slow
def test_a_sigkill_to_the_forked_worker_ends_its_launcher_with_the_same_signal(dbos_preload, tmp_path):
    worker, pid = start_worker(tmp_path, dbos_preload)
    assert pid != worker.pid  # los pasos corren en el fork del servidor, no en el proceso lanzado
    os.kill(pid, signal.SIGKILL)
    assert worker.wait(timeout=SAFETY_TIMEOUT) == -signal.SIGKILL  # como si hubiera muerto él mismo


@pytest.mark.slow
def test_without_the_server_the_worker_runs_in_its_own_process(tmp_path):
    worker, pid = start_worker(tmp_path, {SOCKET_ENV: str(tmp_path / "no-hay-servidor")})
    assert pid == worker.pid
    worker.stdin.write("salir\n")
    worker.stdin.close()
    assert worker.wait(timeout=SAFETY_TIMEOUT) == 0


def test_fresh_runs_from_the_server_start_from_its_empty_database(dbos_preload, tmp_path):
    """Cada corrida nueva que nace del servidor abre una copia de la base vacía que él preparó al
    arrancar (tablas y cola del agente ya creadas), no una que el motor crea y migra en la corrida: dos
    corridas tienen la misma fila de cola, con el mismo id al azar que le dio la plantilla."""
    queue_ids = []
    for name in ("una", "otra"):
        (tmp_path / name).mkdir()
        run = run_agent_process(tmp_path / name, agent=dbos_agent.__file__, env=dbos_preload)
        assert run.returncode == 0, run.stderr
        with sqlite3.connect(tmp_path / name / DATABASE) as database:
            rows = database.execute("SELECT queue_id FROM queues WHERE name = ?", (dbos_agent.QUEUE_NAME,))
            queue_ids.append(rows.fetchall())
    assert len(queue_ids[0]) == 1 and queue_ids[0] == queue_ids[1]


@pytest.mark.slow
@pytest.mark.parametrize("crash", [None, "after-tool:1"])
def test_the_dbos_agent_reads_its_environment_in_the_run(dbos_preload, tmp_path, crash):
    """AGENT_MAX_TURNS se lee al importar el agente: el servidor no lo importa, así que la corrida que
    nace de él lo lee con el entorno de quien la pidió, y dice y sale lo mismo que sin el servidor."""
    runs = []
    for name, extra in [("con", dbos_preload), ("sin", {})]:
        (tmp_path / name).mkdir()
        env = {"AGENT_MAX_TURNS": "1", **extra}
        runs.append(run_agent_process(tmp_path / name, agent=dbos_agent.__file__, crash_after=crash, env=env))
    with_server, without = runs
    assert with_server == without
    assert with_server.returncode == (137 if crash else 1)


@pytest.mark.slow  # el servidor importa DBOS antes de leer su stdin
def test_the_server_is_outside_the_group_that_ipykernel_stops_on_shutdown():
    """Al apagarse, ipykernel manda SIGTERM a cada hijo de su grupo de procesos y espera a que no quede
    ninguno; el servidor, muerto pero sin recoger hasta el atexit, lo hacía esperar hasta que
    jupyter_client mataba el kernel. En su propia sesión, ipykernel no lo ve; y sigue apagándose al
    cerrarse su stdin, cuando termina el proceso que lo arrancó."""
    script = (
        "import os, sys\n"
        "from harness.beyond.preload import preload_dbos_agent\n"
        "preload_dbos_agent()\n"
        "import gc, subprocess\n"
        "(server,) = [o for o in gc.get_objects() if isinstance(o, subprocess.Popen)]\n"
        "print(server.pid, os.getpgid(server.pid) == os.getpgrp(), flush=True)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != SOCKET_ENV}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    pid, same_group = done.stdout.split()
    assert same_group == "False"
    with pytest.raises(ProcessLookupError):  # el atexit lo apagó y lo recogió
        os.kill(int(pid), 0)

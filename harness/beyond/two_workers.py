"""Dos trabajadores, una cola de tareas y un SIGKILL a mitad de una tarea: el otro recupera sus flujos.

``run_two_workers(url, workdir)`` arranca ``trabajador-a`` (que se cuelga en la ventana ② de su primera
tarea), le encola la primera tarea, espera su marca en disco (el reporte ya escrito, el paso sin
anotar), encola las demás, arranca ``trabajador-b``, mata a ``a`` con SIGKILL y le pide a ``b`` que
recupere los flujos de ``a``. Cada paso lo dispara un evento (una línea impresa, una marca en disco),
nunca una espera fija. Después lee lo que quedó: la tabla de flujos de la base y los archivos.
"""

import os
import signal
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from dbos import DBOSClient

from harness.beyond.engine_view import DATABASE_URL_ENV
from harness.beyond.queue_worker import (
    APP_VERSION,
    HANG_VAR,
    IDEMPOTENT_VAR,
    MARKS_DIR,
    QUEUE_NAME,
    READY,
    RECOVERED,
    REPORTS_DIR,
    WORKER_VAR,
    report_path,
)
from harness.contract import WORKDIR_VAR
from harness.runs.launcher import PIPE, start
from harness.text import plural
from harness.tools import report_copies

# Lo que se lee después de una corrida, fila por fila (``facts`` da los valores, en este orden).
FACTS = (
    "trabajador-a, muerto con SIGKILL: dónde (código de salida)",
    "trabajador-b: flujos que recuperó con DBOS.list_workflows + DBOS.resume_workflows",
    "tabla de flujos de la base al final: estado · último ejecutor",
    "veces que corrió el paso que escribe el reporte (marcas/)",
    "reportes/: archivos · copias del reporte en cada uno",
)
SAFETY_TIMEOUT = 120  # solo una red de seguridad: nada espera un tiempo fijo
DEAD, RESCUER = "trabajador-a", "trabajador-b"


def _start(name, url, workdir, **env):
    full = {**os.environ, WORKER_VAR: name, DATABASE_URL_ENV: url, WORKDIR_VAR: workdir}
    full.update(env, PYTHONUNBUFFERED="1")
    # Los avisos de DBOS van a un archivo: en el notebook saldrían mezclados con la salida de la celda.
    with open(os.path.join(workdir, f"{name}.log"), "w", encoding="utf-8") as log:
        worker = start(  # con el preload, nace de un proceso que ya importó DBOS
            [sys.executable, "-m", "harness.beyond.queue_worker"],
            env=full,
            new_session=False,
            stdin=PIPE,
            stderr=log,
        )
    ready = _expect(worker, f"[{name}] {READY}")
    # El pid del proceso que corre los pasos: con el preload no es el que se lanzó aquí (ese solo lo
    # espera y sale como él), así que el SIGKILL va a ese pid.
    worker.steps_pid = int(ready.rpartition("pid ")[2].rstrip(")"))
    return worker


def _kill(worker):
    """SIGKILL al proceso que corre los pasos (en Windows, TerminateProcess): no corre ni un finally.
    El que se lanzó aquí, si es otro, muere de la misma señal (preload)."""
    pid = getattr(worker, "steps_pid", worker.pid)
    if os.name != "posix" or pid == worker.pid:
        worker.kill()
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _expect(worker, start):
    line = worker.stdout.readline().strip()
    if not line.startswith(start):
        said = f"dijo «{line}»" if line else f"terminó sin decir nada (código {worker.wait(SAFETY_TIMEOUT)})"
        raise RuntimeError(f"se esperaba «{start}» y el trabajador {said} (su log: ver *.log)")
    return line


def _tell(worker, command, answer=None):
    worker.stdin.write(f"{command}\n")
    worker.stdin.flush()
    return _expect(worker, answer) if answer else None


def _marks(workdir):
    """Las marcas terminadas (sin las temporales de la escritura durable), en orden."""
    return sorted(m for m in os.listdir(os.path.join(workdir, MARKS_DIR)) if not m.endswith(".tmp"))


def _wait_for_mark(prefix, workdir):
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while time.monotonic() < deadline:
        marks = [m for m in _marks(workdir) if m.startswith(prefix)]
        if marks:
            return marks[0]
        time.sleep(0.02)  # mira el disco otra vez: la marca es el evento que se espera
    raise TimeoutError(f"{prefix} nunca dejó su marca")


def _wait_for_results(client, tasks):
    """Espera que termine cada flujo de la cola. ``get_result`` de DBOS espera sin tope: aquí lo hay,
    como red de seguridad, para que una recuperación que no llega falle con una línea y no cuelgue."""
    deadline = time.monotonic() + SAFETY_TIMEOUT
    for number in range(1, tasks + 1):
        handle = client.retrieve_workflow(f"cola-tarea-{number:02d}")
        while handle.get_status().status in ("PENDING", "ENQUEUED"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"cola-tarea-{number:02d} no terminó: nadie recuperó su flujo")
            time.sleep(0.05)  # vuelve a mirar la base: el fin del flujo es el evento que se espera
        handle.get_result()


def _enqueue(client, number):
    options = {"queue_name": QUEUE_NAME, "workflow_name": "report_task", "app_version": APP_VERSION}
    client.enqueue({**options, "workflow_id": f"cola-tarea-{number:02d}"}, number)


def run_two_workers(url, workdir, tasks=20, idempotent=True):
    """Lo que dejó una corrida: la muerte, los flujos recuperados y quién, la tabla y los archivos."""
    os.makedirs(os.path.join(workdir, MARKS_DIR), exist_ok=True)
    env = {IDEMPOTENT_VAR: "1" if idempotent else "0"}
    workers, client = [], None
    try:
        workers.append(_start(DEAD, url, workdir, **env, **{HANG_VAR: "1"}))
        client = DBOSClient(system_database_url=url)
        # La primera tarea sola: así es siempre la 1 la que trabajador-a toma y en la que muere.
        _enqueue(client, 1)
        killed_in = _wait_for_mark(f"{DEAD}-", workdir).removeprefix(f"{DEAD}-")
        for number in range(2, tasks + 1):
            _enqueue(client, number)
        workers.append(_start(RESCUER, url, workdir, **env))
        _kill(workers[0])
        exit_code = workers[0].wait()
        recovered = _tell(workers[1], f"recuperar {DEAD}", f"[{RESCUER}] {RECOVERED}")
        _wait_for_results(client, tasks)
        flows = client.list_workflows(queue_name=QUEUE_NAME, load_input=False, load_output=False)
        _tell(workers[1], "salir")
        workers[1].wait(timeout=SAFETY_TIMEOUT)
    finally:
        for worker in workers:
            if worker.poll() is None:  # un error o una interrupción a mitad: ningún proceso queda vivo
                _kill(worker)
                worker.kill()
                worker.wait()
        if client is not None:
            client.destroy()
    return {
        "tareas": tasks,
        "matado_en": killed_in,
        "salida_de_a": exit_code,
        "recuperados": [i for i in recovered.rpartition(": ")[2].split(",") if i],
        "flujos": Counter((f.status, f.executor_id) for f in flows),
        "pasos": Counter(mark.split("-tarea-")[0] for mark in _marks(workdir)),
        "copias": {n: report_copies(os.path.join(workdir, report_path(n))) for n in range(1, tasks + 1)},
        "reportes": sorted(f for f in os.listdir(os.path.join(workdir, REPORTS_DIR)) if f.endswith(".txt")),
    }


def run_both(server, folder, tasks=20):
    """{"con clave": corrida, "sin clave": corrida}: las dos variantes a la vez, cada una en su base
    (``server``/dbos_con_clave…) y en su carpeta (``folder``/dos-trabajadores-con_clave…); no comparten
    nada más que el servidor, y mientras una espera a la base o a un proceso, la otra usa la CPU."""
    variants = {"con_clave": True, "sin_clave": False}
    with ThreadPoolExecutor(max_workers=len(variants)) as pool:
        futures = {
            name: pool.submit(
                run_two_workers,
                f"{server}/dbos_{name}",
                os.path.join(folder, f"dos-trabajadores-{name}"),
                tasks,
                idempotent,
            )
            for name, idempotent in variants.items()
        }
        return {name.replace("_", " "): future.result() for name, future in futures.items()}


def facts(figures):
    """Los valores de ``FACTS`` para una corrida: sin puertos, rutas, ids al azar ni tiempos."""
    by_copies = Counter(figures["copias"].values())
    twice = [f"tarea-{n:02d}" for n, c in figures["copias"].items() if c > 1]
    copies = "; ".join(
        f"{plural(c, 'copia', 'copias')} en {plural(k, 'reporte', 'reportes')}"
        for c, k in sorted(by_copies.items())
    )
    return [
        f"{figures['matado_en']}, con el reporte escrito y el paso sin anotar ({figures['salida_de_a']})",
        f"{plural(len(figures['recuperados']), 'flujo', 'flujos')}: {', '.join(figures['recuperados'])}",
        "; ".join(f"{n} {status} · {who}" for (status, who), n in sorted(figures["flujos"].items())),
        f"{sum(figures['pasos'].values())}: "
        + ", ".join(f"{who} {n}" for who, n in sorted(figures["pasos"].items())),
        f"{len(figures['reportes'])} · {copies}" + (f" ({', '.join(twice)})" if twice else ""),
    ]

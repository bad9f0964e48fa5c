"""Dos trabajadores, una cola de tareas y un SIGKILL a mitad de una tarea: el otro recupera sus flujos.

``run_two_workers(url, workdir)`` arranca ``trabajador-a`` (que se cuelga en la ventana ② de su primera
tarea), encola las tareas, espera la marca de ``trabajador-a`` (el reporte ya escrito, el paso sin
anotar), arranca ``trabajador-b``, mata a ``a`` con SIGKILL y le pide a ``b`` que recupere sus flujos.
Cada paso lo dispara un evento (una línea impresa, una marca en disco), nunca una espera fija.
"""

import os
import signal
import subprocess
import sys
import time

from dbos import DBOSClient

from harness.beyond.queue_worker import MARKS_DIR, QUEUE_NAME, REPORTS_DIR, report_path
from harness.tools import report_copies

SAFETY_TIMEOUT = 120  # solo una red de seguridad: nada espera un tiempo fijo


def _start(name, url, workdir, **env):
    full = {**os.environ, "WORKER_NAME": name, "DBOS_SYSTEM_DATABASE_URL": url, "AGENT_WORKDIR": workdir}
    full.update(env, PYTHONUNBUFFERED="1")
    worker = subprocess.Popen(
        [sys.executable, "-m", "harness.beyond.queue_worker"],
        env=full,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    _expect(worker, f"[{name}] listo")
    return worker


def _expect(worker, start):
    line = worker.stdout.readline().strip()
    if not line.startswith(start):
        raise RuntimeError(f"se esperaba «{start}» y el trabajador dijo «{line}»")
    return line


def _wait_for_mark(prefix, workdir):
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while time.monotonic() < deadline:
        marks = [
            m
            for m in os.listdir(os.path.join(workdir, MARKS_DIR))
            if m.startswith(prefix) and not m.endswith(".tmp")
        ]
        if marks:
            return marks[0]
        time.sleep(0.02)
    raise TimeoutError(f"{prefix} nunca dejó su marca")


def run_two_workers(url, workdir, tasks=20, idempotent=True):
    """Las cifras de una corrida: tareas, muertes, flujos recuperados, copias por reporte, segundos."""
    start = time.perf_counter()
    os.makedirs(os.path.join(workdir, MARKS_DIR), exist_ok=True)
    env = {"WORKER_IDEMPOTENT": "1" if idempotent else "0"}
    worker_a = _start("trabajador-a", url, workdir, WORKER_HANG="1", **env)
    client = DBOSClient(system_database_url=url)
    ids = [f"cola-tarea-{n:02d}" for n in range(1, tasks + 1)]
    options = {"queue_name": QUEUE_NAME, "workflow_name": "report_task", "app_version": "mas-alla-1"}
    for n, workflow_id in enumerate(ids, 1):
        client.enqueue({**options, "workflow_id": workflow_id}, n)
    killed_in = _wait_for_mark("trabajador-a-", workdir)
    worker_b = _start("trabajador-b", url, workdir, **env)
    worker_a.send_signal(signal.SIGKILL)
    worker_a.wait()
    worker_b.stdin.write("recuperar trabajador-a\n")
    worker_b.stdin.flush()
    recovered = _expect(worker_b, "[trabajador-b] recuperados")
    results = [client.retrieve_workflow(i).get_result() for i in ids]
    worker_b.stdin.write("salir\n")
    worker_b.stdin.flush()
    worker_b.wait(timeout=SAFETY_TIMEOUT)
    client.destroy()
    copies = {n: report_copies(os.path.join(workdir, report_path(n))) for n in range(1, tasks + 1)}
    return {
        "tareas": tasks,
        "terminadas": len(results),
        "muertes": 1 if worker_a.returncode == -signal.SIGKILL else 0,
        "matado_en": killed_in.removeprefix("trabajador-a-"),
        "recuperados": int(recovered.split()[2]),
        "copias": copies,
        "reportes": len([f for f in os.listdir(os.path.join(workdir, REPORTS_DIR)) if f.endswith(".txt")]),
        "segundos": time.perf_counter() - start,
    }

"""Dos procesos en un mismo directorio: el segundo se rechaza; un SIGKILL no deja el candado tomado.

El primer agente queda detenido de verdad, sin ganchos de prueba: el modelo guionado anota cada pedido
en SCRIPTED_MODEL_LOG, que aquí es una FIFO, y abrirla para escribir espera a que alguien la lea. La
prueba deja pasar el primer pedido y no el segundo: el agente queda con el candado, después del punto B
del turno 1.
"""

import os
import signal

import pytest
from course_files import digest

from harness.defenses.lock import WorkdirBusy, workdir_lock
from harness.tools import report_copies


@pytest.fixture
def held(start, workdir, tmp_path_factory):
    """Un agente vivo, con el candado, detenido en su segunda llamada al modelo."""
    if not hasattr(os, "mkfifo"):
        pytest.skip(
            "Windows no tiene FIFO (os.mkfifo) para detener al agente; tests/test_portability.py prueba el candado"
        )
    requests = tmp_path_factory.mktemp("fifo") / "pedidos.jsonl"
    os.mkfifo(requests)
    first = start(workdir, env={"SCRIPTED_MODEL_LOG": os.fspath(requests)})
    with open(requests, encoding="utf-8") as fifo:  # el primer pedido pasa: hasta que el agente la cierra
        fifo.read()
    assert first.stdout.readline() == "[turn 1][save A] pending=read_notes\n"  # ya tiene el candado
    # Después de esta línea el agente solo pide al modelo: espera en la FIFO sin tocar el disco.
    assert first.stdout.readline() == "[turn 1][save B]\n"
    yield first
    if first.poll() is None:
        first.kill()
    first.communicate()


@pytest.mark.parametrize("resume", [True, False], ids=["--resume", "nueva"])
def test_a_second_agent_is_refused_and_changes_nothing(run, workdir, held, resume):
    before = digest(workdir)
    second = run(workdir, resume=resume)
    assert (second.returncode, second.stdout) == (1, "")
    # Una sola línea, sin traza, que nombra el directorio ocupado y dice qué hacer.
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert os.path.realpath(workdir) in second.stderr and "Espera" in second.stderr
    assert digest(workdir) == before  # una corrida nueva no borró el punto de control del primero
    assert held.poll() is None


def test_sigkill_frees_the_lock_and_the_task_resumes(run, workdir, held):
    held.send_signal(signal.SIGKILL)
    assert held.wait() == -signal.SIGKILL
    resumed = run(workdir, resume=True)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.branch == "none" and resumed.stdout.endswith(
        "[done] Reporte escrito en report.txt, tarea completa.\n"
    )
    assert report_copies(workdir / "report.txt") == 1
    # El candado es del directorio: no queda ningún archivo de candado.
    assert sorted(os.listdir(workdir)) == ["checkpoint.json", "effects.json", "report.txt", "sales-notes.txt"]


def test_the_lock_is_per_open_directory_even_in_one_process(tmp_path):
    with workdir_lock(tmp_path):
        with pytest.raises(WorkdirBusy):
            with workdir_lock(tmp_path):
                pass
    with workdir_lock(tmp_path):  # soltado al salir del bloque
        pass

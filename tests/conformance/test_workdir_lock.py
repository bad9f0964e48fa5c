"""Dos procesos en un mismo directorio: el segundo se rechaza; un SIGKILL no deja el candado tomado.

El primer agente queda detenido de verdad, sin ganchos de prueba: sales-notes.txt es una FIFO, así que
read_notes se bloquea al abrirla hasta que alguien escriba del otro lado (nadie lo hace).
"""

import os
import shutil
import signal

import pytest
from course_files import digest

from harness.lock import WorkdirBusy, workdir_lock
from harness.tools import report_copies
from maintainer.paths import ROOT as REPO_ROOT

NOTES = os.path.join(REPO_ROOT, "harness", "data", "sales-notes.txt")


@pytest.fixture
def held(start, workdir):
    """Un agente vivo, con el candado, detenido en read_notes del turno 1."""
    if not hasattr(os, "mkfifo"):
        pytest.skip(
            "Windows no tiene FIFO (os.mkfifo) para detener al agente; tests/test_portability.py prueba el candado"
        )
    os.mkfifo(workdir / "sales-notes.txt")
    first = start(workdir)
    assert first.stdout.readline() == "[turn 1][save A] pending=read_notes\n"  # ya tiene el candado
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
    os.remove(workdir / "sales-notes.txt")
    shutil.copy(NOTES, workdir / "sales-notes.txt")
    resumed = run(workdir, resume=True)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.branch == "rerun" and resumed.stdout.endswith(
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

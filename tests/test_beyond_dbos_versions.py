"""DBOS como lo documenta DBOS (issue 26): una reanudación que el motor no puede retomar termina en
segundos con una línea en español, y un cambio inofensivo del código del flujo entre la caída y el
--resume no deja huérfano al flujo (la versión de aplicación está fijada en el agente).

El agente corre desde una copia de su módulo, que la prueba edita entre la caída y la reanudación como
lo haría una persona (un comentario; otra versión de aplicación)."""

import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from harness.beyond import dbos_agent, engine_view
from harness.runs.launcher import run_agent_process
from harness.tools import report_copies
from maintainer.paths import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RESUME_LIMIT = 30  # segundos: una reanudación que no puede seguir no espera para siempre


@pytest.fixture
def copy(tmp_path):
    path = tmp_path / "agente_dbos.py"
    shutil.copyfile(dbos_agent.__file__, path)
    work = tmp_path / "trabajo"
    work.mkdir()
    crashed = run_agent_process(work, agent=path, crash_after="after-tool:2")
    assert crashed.returncode == 137, crashed.stderr
    return path, work


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def one_spanish_line(stderr):
    return stderr.count("\n") == 1 and "Traceback" not in stderr and "Error:" not in stderr


def test_a_harmless_edit_of_the_workflow_still_resumes(copy):
    path, work = copy
    edit(
        path,
        "    replay = _Replay()\n",
        "    replay = _Replay()  # un cambio inofensivo entre caída y --resume\n",
    )
    resumed = run_agent_process(work, agent=path, resume=True, timeout=RESUME_LIMIT)
    assert resumed.returncode == 0, resumed.stderr
    assert "[done] Reporte escrito en report.txt, tarea completa." in resumed.stdout
    assert report_copies(work / "report.txt") == 1


def test_another_application_version_is_one_line_within_seconds(copy):
    path, work = copy
    edit(path, f'APP_VERSION = "{dbos_agent.APP_VERSION}"', 'APP_VERSION = "leccion-6-dbos-2"')
    resumed = run_agent_process(work, agent=path, resume=True, timeout=RESUME_LIMIT)
    assert resumed.returncode == 1 and one_spanish_line(resumed.stderr), resumed.stderr
    assert f"versión de aplicación «{dbos_agent.APP_VERSION}»" in resumed.stderr
    assert "sin --resume" in resumed.stderr


def test_a_database_without_the_workflow_is_one_line(copy):
    path, work = copy
    (work / "dbos.sqlite").unlink()
    resumed = run_agent_process(work, agent=path, resume=True, timeout=RESUME_LIMIT)
    assert resumed.returncode == 1 and one_spanish_line(resumed.stderr), resumed.stderr
    assert "no tiene el flujo" in resumed.stderr and "sin --resume" in resumed.stderr


def test_the_engine_view_reads_the_workflow_through_the_public_api(copy):
    """``engine_record`` lee con ``DBOSClient`` (sin migrar ni escribir): el flujo a medias y sus pasos."""
    path, work = copy
    status, steps = engine_view.engine_record(work)
    assert status == "PENDING" and [name.rsplit(".", 1)[-1] for _, name, _ in steps][:3] == [
        "model_step",
        "tool_step",
        "model_step",
    ]
    assert steps[0][2] == "salida anotada"
    assert run_agent_process(work, agent=path, resume=True, timeout=RESUME_LIMIT).returncode == 0
    assert engine_view.engine_record(work)[0] == "SUCCESS"


def test_no_private_dbos_name_in_harness():
    """Solo la interfaz documentada de DBOS: ningún ``DBOS._…`` ni ``._recover…`` en el paquete."""
    found = subprocess.run(
        ["grep", "-rn", "--include=*.py", r"\._recover\|DBOS\._", os.path.join(ROOT, "harness")],
        capture_output=True,
        text=True,
    )
    assert found.stdout == ""


def test_dbos_is_bounded_below_the_next_major_in_both_set_ups():
    """pyproject.toml y environment.yml piden el mismo rango de dbos, con tope en la próxima mayor (la
    prueba de empaquetado ya exige que las dos listas coincidan; esta, que el tope esté)."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        declared = [r for r in tomllib.load(f)["project"]["dependencies"] if r.startswith("dbos")]
    with open(os.path.join(ROOT, "environment.yml"), encoding="utf-8") as f:
        conda = re.findall(r"^\s*- (dbos\S*)", f.read(), re.MULTILINE)
    assert declared == conda and len(declared) == 1
    lower, upper = re.fullmatch(r"dbos>=(\d+)[\d.]*,<(\d+)", declared[0]).groups()
    assert int(upper) == int(lower) + 1


def test_an_unreachable_database_is_one_line_without_its_password(copy):
    path, work = copy
    with socket.socket() as closed:  # un puerto que nadie escucha
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"postgresql://alguien:secreto@127.0.0.1:{port}/otra"
    resumed = run_agent_process(
        work, agent=path, resume=True, env={"DBOS_SYSTEM_DATABASE_URL": url}, timeout=RESUME_LIMIT
    )
    assert resumed.returncode == 1 and one_spanish_line(resumed.stderr), resumed.stderr
    assert "El motor no pudo abrir su base" in resumed.stderr and "secreto" not in resumed.stderr


def test_a_file_that_is_not_a_dbos_database_is_one_line(copy):
    path, work = copy
    (work / "dbos.sqlite").write_bytes(b"esto no es una base de datos de DBOS\n" * 100)
    resumed = run_agent_process(work, agent=path, resume=True, timeout=RESUME_LIMIT)
    assert resumed.returncode == 1 and one_spanish_line(resumed.stderr), resumed.stderr
    assert "El motor no pudo abrir su base" in resumed.stderr

"""Muertes reales: SIGKILL en instantes al azar, y la promesa del curso se sostiene.

La cuenta completa (300+ tareas) está en ``python -m benchmarks.kill_torture``; aquí corren pocas tareas,
más los casos sutiles fijados con CRASH_AFTER y la prueba de que los revisores sí detectan fallas.
"""

import json
import os
import sys

import pytest

from harness.scripted_model import FINAL_TEXT, VERIFIED_TEXT
from harness.tools import report_copies
from maintainer.torture import load_files, log_problems, pairing_problems, summary, torture, window_of

TASKS = int(os.environ.get("KILL_TORTURE_TASKS", "12"))
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sys.platform == "win32", reason="Windows no tiene SIGKILL: la tortura mata con señales"
    ),
]


@pytest.fixture(scope="module")
def tortured(agent):
    results, _ = torture(TASKS, workers=2, first_seed=1000, agent=agent)
    return results


def test_every_task_finishes_with_the_report_exactly_once(tortured):
    assert len(tortured) == TASKS
    for r in tortured:
        assert r.problems == [], (r.seed, r.problems)
        assert r.final in (FINAL_TEXT, VERIFIED_TEXT), r.seed
        assert r.copies == 1 and r.report_ok, (r.seed, r.copies)


def test_every_death_left_loadable_files(tortured):
    figures = summary(tortured)
    assert figures["muertes (SIGKILL)"] > 0
    assert figures["archivos ilegibles tras una muerte"] == 0
    for r in tortured:
        assert all(d.problem is None for d in r.deaths), r.seed


# —— La ventana se deduce bien del disco: comprobado con caídas en puntos conocidos ——


@pytest.mark.parametrize(
    ("label", "window"),
    [
        ("after-save-a:1", "① o ② solo lectura, sin anotación"),
        ("after-tool:2", "① o ② solo lectura, sin anotación"),
        ("after-save-a:3", "① write_report sin ejecutar"),
        ("after-tool:3", "② write_report ejecutada, sin anotación"),
        ("after-effect-write:3", "registro escrito, punto B sin guardar"),
        ("after-save-b:2", "③ punto B guardado (modelo o arranque)"),
    ],
)
def test_window_inference_matches_known_crash_points(run, agent, workdir, label, window):
    assert run(workdir, crash_after=label).killed
    cp, effects, problem = load_files(workdir, agent)
    assert problem is None and window_of(cp, effects, workdir) == window


# —— Los casos sutiles de una muerte real ——


def test_death_after_the_append_before_the_ledger_is_verified_not_repeated(run, workdir):
    """SIGKILL entre el append de write_report y el registro: is_error, el modelo verifica, una sola copia."""
    assert run(workdir, crash_after="after-tool:3").killed
    assert report_copies(workdir / "report.txt") == 1
    resumed = run(workdir, resume=True)
    assert resumed.branch == "is_error" and resumed.stdout.endswith(f"[done] {VERIFIED_TEXT}\n")
    assert report_copies(workdir / "report.txt") == 1


def test_death_between_creating_and_writing_the_report_is_written_once(run, workdir):
    """Una muerte justo tras abrir report.txt deja el archivo vacío: verificar no basta con «existe»."""
    assert run(workdir, crash_after="after-save-a:3").killed
    (workdir / "report.txt").write_bytes(b"")
    resumed = run(workdir, resume=True)
    assert resumed.branch == "is_error" and resumed.stdout.endswith(f"[done] {FINAL_TEXT}\n")
    assert report_copies(workdir / "report.txt") == 1


# —— Los revisores pueden fallar ——


def test_pairing_check_catches_what_the_api_would_reject():
    use = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "read_notes", "input": {}}],
    }
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    task = {"role": "user", "content": "tarea"}
    assert pairing_problems([task, use, answer]) == []
    assert pairing_problems([task, use]) != []  # sin su tool_result
    assert pairing_problems([task, use, answer, use, answer]) != []  # el mismo id dos veces
    assert pairing_problems([task, task]) != []  # roles que no alternan


def test_log_check_reads_every_line(tmp_path):
    log = tmp_path / "model.jsonl"
    log.write_text(json.dumps([{"role": "user", "content": "tarea"}]) + "\n[{", encoding="utf-8")
    problems, told = log_problems(log)
    assert problems == ["línea 2 del log ilegible"] and not told


def test_file_check_reports_an_unreadable_checkpoint(run, agent, workdir):
    assert run(workdir, crash_after="after-save-a:2").killed
    (workdir / "checkpoint.json").write_bytes(b"")
    assert load_files(workdir, agent)[2].startswith("No se pudo parsear checkpoint.json")


def test_a_mistyped_jitter_is_reported_not_ignored(run, workdir):
    done = run(workdir, env={"AGENT_JITTER_MS": "diez"})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    # Una sola línea que nombra la variable y el valor malo, y dice qué poner (milisegundos).
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("AGENT_JITTER_MS=diez")
    assert "milisegundos" in done.stderr

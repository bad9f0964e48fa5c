"""El laboratorio de caídas, manejado por su API de Python: se eligen valores y se pulsan botones.

Lo esperado sale de la lógica de la lección, no de una corrida guardada: dónde muere el proceso
dice qué queda en disco, y eso dice qué rama toma reconcile y cuántas veces corre write_report.
"""

import os
import shutil
import subprocess
import sys

import pytest

from harness.crash import KINDS
from harness.crash_lab import PLAIN_FALLBACK, CrashLab
from harness.crash_lab.view import BRANCHES, crash_labels
from maintainer.paths import REFERENCE_AGENT
from maintainer.paths import ROOT as REPO_ROOT
from harness.tools import READ_ONLY

TOOL_OF_TURN = {1: "read_notes", 2: "count_words", 3: "write_report"}
NO_CHECKPOINT = "No se encuentra checkpoint.json; no hay nada desde donde hacer --resume"
CUT_CHECKPOINT = "No se pudo parsear checkpoint.json; puede que el archivo haya quedado interrumpido"


def after_crash(label, variant):
    """(pendingToolUse, anotaciones en el registro, copias del reporte) justo después de la caída."""
    kind, turn = label.split(":")
    turn = int(turn)
    step = list(KINDS).index(kind)  # 0 save A, 1 herramienta, 2 registro, 3 save B
    ledger = turn if step >= 2 else turn - 1
    copies = 1 if turn == 3 and step >= 1 else 0
    pending = TOOL_OF_TURN[turn] if variant == "dos-puntos" and step < 3 else None
    return pending, ledger, copies


def after_resume(label, variant):
    """(rama de reconcile, copias del reporte) tras --resume; rama None si no había checkpoint."""
    if not label:
        return "none", 1  # terminó en su punto B: no hay nada colgando
    kind, turn = label.split(":")
    tool = TOOL_OF_TURN[int(turn)]
    if variant == "solo-b":
        if turn == "1" and kind != "after-save-b":
            return None, 0  # murió antes del primer (y único) punto de control
        # La llamada colgante no quedó en el punto de control: se vuelve a pedir y a ejecutar.
        ran = tool == "write_report" and kind in ("after-tool", "after-effect-write")
        return "none", 2 if ran else 1
    if kind == "after-save-b":
        return "none", 1
    if kind == "after-effect-write":
        return "hit", 1
    return ("rerun" if tool in READ_ONLY else "is_error"), 1


CASES = [
    pytest.param(label, variant, id=f"{variant}-{label or 'sin-caida'}")
    for variant in ("dos-puntos", "solo-b")
    for label in crash_labels()
    if not (variant == "solo-b" and label.startswith("after-save-a"))
]


@pytest.fixture
def lab(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # sin _trabajo/agent.py aquí: corre el agente de referencia
    return CrashLab(workdir="laboratorio")


def test_all_crash_points_are_offered(lab):
    assert len(lab.point.options) == 1 + 4 * 3
    texts = [text for text, _ in lab.point.options]
    assert "turno 3 · ② herramienta ejecutada, registro sin escribir" in texts
    assert texts[0].startswith("sin caída")


@pytest.mark.parametrize("label, variant", CASES)
def test_click_run_then_resume(tmp_path, agent, label, variant):
    # Con el agente de referencia y con el que arma la lección (fixture «agent» de conftest).
    lab = CrashLab(workdir=tmp_path / "laboratorio", agent=agent)
    lab.variant_picker.value = variant
    lab.point.value = label
    lab.run_button.click()

    run = lab.last
    assert run.run.returncode == (137 if label else 0)
    assert ("EXIT=137" in lab.log_view.value) == bool(label)
    if label:
        pending, ledger, copies = after_crash(label, variant)
        assert (run.disk.pending or {}).get("name") == pending
        assert len(run.disk.ledger or {}) == ledger
        assert run.disk.report_copies == copies

    lab.resume_button.click()
    branch, copies = after_resume(label, variant)
    assert lab.last.branch == branch
    assert lab.last.disk.report_copies == copies
    assert f"write_report se ejecutó de verdad: <b>{copies} ve" in lab.disk_view.value
    assert ("⚠" in lab.disk_view.value) == (copies == 2)
    if branch:
        assert BRANCHES[branch][0] in lab.disk_view.value
        assert BRANCHES[branch][1] in lab.disk_view.value  # el color de la rama
    else:
        assert NO_CHECKPOINT in lab.status.value
    assert "Traceback" not in lab.log_view.value


def test_lesson_demo_after_tool_3(lab):
    lab.choose(label="after-tool:3", variant="dos-puntos")
    lab.run()
    step = lab.resume()
    assert step.branch == "is_error" and step.disk.report_copies == 1
    assert "agregando is_error" in lab.summary()


def test_solo_b_writes_the_report_twice(lab):
    lab.choose(label="after-effect-write:3", variant="solo-b")
    lab.run()
    lab.resume()
    assert lab.last.disk.report_copies == 2
    assert "¡write_report se ejecutó 2 veces!" in lab.summary()
    assert "falla del debate" in lab.disk_view.value


@pytest.mark.parametrize("turn", [1, 2, 3])
def test_point_a_crash_does_not_exist_in_solo_b(lab, turn):
    lab.choose(label=f"after-save-a:{turn}", variant="solo-b")
    assert lab.run_button.disabled
    assert "no existe en solo-b" in lab.point.label
    assert "no se guarda el punto A" in lab.picture.value
    step = lab.run()  # por la API tampoco se lanza: no hay proceso que muera ahí
    assert step.run is None and not os.path.exists(os.path.join("laboratorio", "checkpoint.json"))
    lab.variant_picker.value = "dos-puntos"
    assert not lab.run_button.disabled and lab.point.value == f"after-save-a:{turn}"


def test_buttons_are_disabled_while_a_process_runs(lab):
    seen = []
    lab.resume_button.observe(lambda change: seen.append(change["new"]), names="disabled")
    lab.choose(label="after-save-b:2")
    lab.run_button.click()
    assert seen == [True, False]
    assert not any(b.disabled for b in lab.buttons)


def test_resume_without_checkpoint_shows_the_lesson_line(lab):
    lab.resume_button.click()
    assert lab.last.run.returncode == 1
    assert NO_CHECKPOINT in lab.status.value and NO_CHECKPOINT in lab.log_view.value
    assert "Traceback" not in lab.log_view.value


def test_cut_checkpoint_shows_the_lesson_error(lab):
    lab.choose(label="after-effect-write:3")
    lab.run()
    lab.cut_button.click()
    assert "ilegible" in lab.disk_view.value
    lab.resume_button.click()
    assert CUT_CHECKPOINT in lab.status.value and "Traceback" not in lab.log_view.value


def test_reset_clears_only_the_lab_files(lab):
    lab.choose(label="after-tool:2")
    lab.run()
    os.makedirs("laboratorio", exist_ok=True)
    with open(os.path.join("laboratorio", "mis-notas.txt"), "w") as f:
        f.write("no es del laboratorio")
    lab.reset_button.click()
    assert os.listdir("laboratorio") == ["mis-notas.txt"]
    assert "checkpoint.json  no existe" in lab.summary()


def test_uses_the_notebook_agent_when_there_is_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("_trabajo")
    shutil.copy(REFERENCE_AGENT, os.path.join("_trabajo", "agent.py"))
    lab = CrashLab(workdir=os.path.join("_trabajo", "laboratorio"))
    assert "agente armado en el notebook (_trabajo/agent.py)" in lab.header.value
    lab.choose(label="after-effect-write:3")
    lab.run()
    assert lab.resume().branch == "hit"
    assert lab.summary().startswith("Agente: agente armado en el notebook")


def test_reference_agent_otherwise(lab):
    assert "agente de referencia (solutions/agent.py)" in lab.header.value


def test_summary_is_deterministic_and_has_no_absolute_paths(lab, tmp_path):
    lab.choose(label="after-tool:1", variant="dos-puntos")
    lab.run()
    lab.resume()
    first = lab.summary()
    lab.run()
    lab.resume()
    assert lab.summary() == first
    assert str(tmp_path) not in first and REPO_ROOT not in first


def test_display_has_a_stable_plain_text(lab):
    bundle = lab._repr_mimebundle_()
    assert bundle["text/plain"] == PLAIN_FALLBACK
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.widget.model_id


def test_unknown_choices_are_refused(lab):
    with pytest.raises(ValueError, match="Etiqueta desconocida"):
        lab.choose(label="after-tool:4")
    with pytest.raises(ValueError, match="Variante desconocida"):
        lab.choose(label="after-tool:1", variant="solo-a")


def test_the_agent_never_imports_the_lab():
    code = (
        "import sys, harness.runner, harness.disk_state, solutions.agent; "
        "print(sorted(m for m in sys.modules if m in ('ipywidgets', 'harness.crash_lab')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_an_agent_that_never_crashes_is_pointed_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fake = tmp_path / "sin_caidas.py"
    fake.write_text("print('[done] sin puntos de caída')\n", encoding="utf-8")
    lab = CrashLab(workdir="laboratorio", agent=fake)
    lab.choose(label="after-tool:2")
    lab.run_button.click()
    assert "la caída after-tool:2 nunca ocurrió" in lab.status.value


def test_a_broken_agent_or_workdir_gives_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    broken = tmp_path / "roto.py"
    broken.write_text("raise SystemExit('el agente se rompió')\n", encoding="utf-8")
    lab = CrashLab(workdir="laboratorio", agent=broken)
    lab.resume_button.click()
    assert "el agente terminó con código 1: el agente se rompió" in lab.status.value
    (tmp_path / "un_archivo").write_text("no es una carpeta")
    lab = CrashLab(workdir="un_archivo")
    lab.run_button.click()
    assert "No se pudo lanzar el agente" in lab.status.value

"""El laboratorio de caídas, manejado por su API de Python: se eligen valores y se pulsan botones.

Lo esperado sale de la lógica de la lección, no de una corrida guardada: dónde muere el proceso
dice qué queda en disco, y eso dice qué rama toma reconcile y cuántas veces corre write_report.
"""

import ast
import html
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys

import pytest

from harness.beyond.lab_variants import DBOS, DBOS_IDEMPOTENT, ENGINE_BRANCH_SHORT, ENGINE_BRANCHES
from harness.crash import KINDS
from harness.crash_lab import PLAIN_FALLBACK, CrashLab, variants
from harness.crash_lab.shown import without_paths
from harness.crash_lab.variants import BRANCHES, describe_label
from harness.crash_lab.view import PREVIEW_LINE
from harness.crash_lab.words import crash_labels
from harness.notebook.export import export_agent
from harness.tools import READ_ONLY
from maintainer.paths import LESSON_AGENT, REFERENCE_AGENT
from maintainer.paths import ROOT as REPO_ROOT

TOOL_OF_TURN = {1: "read_notes", 2: "count_words", 3: "write_report"}
NO_CHECKPOINT = "No se encuentra checkpoint.json; no hay nada desde donde hacer --resume"
CUT_CHECKPOINT = "No se pudo parsear checkpoint.json; puede que el archivo haya quedado interrumpido"


def after_crash(label, variant):
    """(pendingToolUse, anotaciones en el registro, copias del reporte) justo después de la caída."""
    kind, turn = label.split(":")
    turn = int(turn)
    step = list(KINDS).index(kind)  # 0 punto A, 1 herramienta, 2 registro, 3 punto B
    ledger = turn if step >= 2 else turn - 1
    copies = 1 if turn == 3 and step >= 1 else 0
    pending = TOOL_OF_TURN[turn] if variant == "dos-puntos" and step < 3 else None
    return pending, ledger, copies


def after_resume(label, variant):
    """(rama de reconcile, copias del reporte) tras --resume; rama None si no había checkpoint."""
    if not label:
        return None, 1  # llegó a [done]: el agente se niega a retomar una tarea terminada
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


# Con dos puntos, una caída por cada cosa distinta que muestra el laboratorio (cada rama, write_report
# sin ejecutar y ya ejecutado): la rama en cada una de las 12 etiquetas la afirma la suite de conformidad
# (tests/conformance/test_conformidad.py). «Solo el punto B» no está en la suite: todas sus caídas.
TWO_POINTS_SAMPLE = (
    "",
    "after-save-a:1",
    "after-save-a:3",
    "after-tool:3",
    "after-effect-write:2",
    "after-save-b:3",
)
CASES = [
    pytest.param(label, variant, id=f"{variant}-{label or 'sin-caida'}")
    for variant in ("dos-puntos", "solo-b")
    for label in crash_labels()
    if (label in TWO_POINTS_SAMPLE if variant == "dos-puntos" else not label.startswith("after-save-a"))
]


@pytest.fixture
def lab(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CrashLab(workdir="laboratorio", agent=REFERENCE_AGENT)


def test_all_crash_points_are_offered(lab):
    assert len(lab.widget.view["options"]) == 1 + 4 * 3
    texts = [text for _, text, _ in lab.widget.view["options"]]
    assert "turno 3 · ② herramienta ejecutada, registro sin escribir" in texts
    assert texts[0].startswith("sin caída")


@pytest.mark.parametrize("label, variant", CASES)
def test_click_run_then_resume(tmp_path, agent, label, variant):
    lab = CrashLab(workdir=tmp_path / "laboratorio", agent=agent)
    lab.click("choose", label, variant)
    lab.click("run")

    run = lab.last
    assert run.run.returncode == (137 if label else 0)
    assert ("EXIT=137" in lab.widget.view["log"]) == bool(label)
    if label:
        pending, ledger, copies = after_crash(label, variant)
        assert (run.disk.pending or {}).get("name") == pending
        assert len(run.disk.ledger or {}) == ledger
        assert run.disk.report_copies == copies

    lab.resume()  # la API reanuda siempre (el botón, no: ver test_resume_button_needs_a_checkpoint)
    branch, copies = after_resume(label, variant)
    assert lab.last.branch == branch
    assert lab.last.disk.report_copies == copies
    assert f"write_report se ejecutó de verdad: <b>{copies} ve" in lab.widget.view["disk"]
    assert ("⚠" in lab.widget.view["disk"]) == (copies == 2)
    if branch:
        assert BRANCHES[branch] in lab.widget.view["disk"]
    elif label:
        assert NO_CHECKPOINT in lab.widget.view["status"]
    else:
        assert "no queda nada que retomar" in lab.widget.view["status"]
    assert "Traceback" not in lab.widget.view["log"]


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
    assert "a quien propone guardar solo el punto B" in lab.widget.view["disk"]


@pytest.mark.parametrize("turn", [1, 2, 3])
def test_point_a_crash_does_not_exist_in_solo_b(lab, turn):
    lab.choose(label=f"after-save-a:{turn}", variant="solo-b")
    view = lab.widget.view
    assert "no se guarda el punto A" in view["run_blocker"]
    assert [o for o in view["options"] if o[0] == f"after-save-a:{turn}"][0][2] is False
    assert f"data-label='after-save-a:{turn}'" not in view["picture"]  # ni un hueco para pulsar
    step = lab.run()  # por la API tampoco se lanza: no hay proceso que muera ahí
    assert step.run is None and not os.path.exists(os.path.join("laboratorio", "checkpoint.json"))
    lab.click("choose", f"after-save-a:{turn}", "dos-puntos")
    assert lab.widget.view["run_blocker"] == "" and lab.label == f"after-save-a:{turn}"


def test_a_click_on_an_old_screen_is_ignored(lab, tmp_path):
    lab.choose(label="after-save-b:2")
    ticket = lab.widget.view["ticket"]
    lab._on_message(lab.widget, {"action": "run", "ticket": ticket}, [])
    lab._on_message(lab.widget, {"action": "run", "ticket": ticket}, [])  # el segundo clic de un doble clic
    assert [s.action for s in lab.history] == ["run"]


def test_resume_button_needs_a_checkpoint(lab):
    assert "no hay nada que reanudar" in lab.widget.view["resume_blocker"]
    lab.click("resume")
    assert lab.history == []  # el botón apagado no lanza nada
    lab.choose(label="after-tool:2")
    lab.click("run")
    assert lab.widget.view["resume_blocker"] == ""
    lab.click("resume")
    assert "llegó a [done]" in lab.widget.view["resume_blocker"]


def test_resume_without_checkpoint_shows_the_lesson_line(lab):
    lab.resume()
    assert lab.last.run.returncode == 1
    assert NO_CHECKPOINT in lab.widget.view["status"] and NO_CHECKPOINT in lab.widget.view["log"]
    assert "Traceback" not in lab.widget.view["log"]


def test_cut_checkpoint_shows_the_lesson_error(lab):
    lab.choose(label="after-effect-write:3")
    lab.run()
    lab.click("cut")
    assert "ilegible" in lab.widget.view["disk"]
    assert "[kill]" in lab.widget.view["log"]  # el log del último proceso sigue a la vista
    lab.click("resume")
    assert CUT_CHECKPOINT in lab.widget.view["status"] and "Traceback" not in lab.widget.view["log"]


def test_reset_clears_only_the_lab_files_and_keeps_the_log(lab):
    lab.choose(label="after-tool:2")
    lab.run()
    os.makedirs("laboratorio", exist_ok=True)
    with open(os.path.join("laboratorio", "mis-notas.txt"), "w") as f:
        f.write("no es del laboratorio")
    lab.click("reset")
    assert os.listdir("laboratorio") == ["mis-notas.txt"]
    assert "checkpoint.json  no existe" in lab.summary()
    assert "caída simulada" in lab.widget.view["log"]


def test_resume_uses_the_variant_that_made_the_checkpoint(lab):
    lab.choose(label="after-effect-write:3", variant="solo-b")
    lab.run()
    lab.choose(label="after-effect-write:3", variant="dos-puntos")  # la trampa: cambiar entre los dos
    lab.resume()
    assert "AGENT_VARIANT=solo-b python agent.py --resume" in lab.summary()
    assert "a quien propone guardar solo el punto B" in lab.widget.view["disk"]
    assert "«solo el punto B»" in lab.widget.view["story"]
    assert lab.widget.view["picture"].count("data-state='absent'") == 3


def test_the_picture_is_drawn_from_what_happened(lab):
    assert "data-state='corrida'" not in lab.widget.view["picture"]  # antes de correr, nada ocurrió
    lab.choose(label="after-tool:3")
    lab.run()
    picture = lab.widget.view["picture"]
    assert picture.count("data-state='corrida'") == 2 * 4 + 2 and "cl-mark-kill" in picture
    lab.resume()
    picture = lab.widget.view["picture"]
    assert "turno 4" in picture and picture.count("data-state='reanudación'") == 1 + 4
    assert "reconcile: is_error" in picture


def test_another_notebook_on_the_same_folder_is_noticed(lab):
    lab.choose(label="after-tool:3")
    lab.run()
    other = CrashLab(workdir="laboratorio", agent=REFERENCE_AGENT)
    other.choose(label="after-save-b:1")
    other.run()
    lab.resume()
    assert any("otro notebook" in s.message for s in lab.history)


def test_words_are_plural_aware_and_say_not_in_the_ledger(lab):
    lab.choose(label="after-tool:2")
    lab.run()
    assert "1 anotación:" in lab.summary() and "anotación(es)" not in lab.summary()
    lab.resume()
    assert "no está en el registro" in lab.summary() and "fallo en el registro ·" not in lab.summary()
    assert "after-tool:2" not in lab.widget.view["status"]  # la etiqueta cruda no es el texto principal


def test_uses_the_notebook_agent_when_there_is_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("_trabajo")
    shutil.copy(REFERENCE_AGENT, os.path.join("_trabajo", "agent.py"))
    lab = CrashLab(workdir=os.path.join("_trabajo", "laboratorio"))
    assert lab.widget.view["header"].startswith("Corre el agente de referencia (_trabajo/agent.py) en un")
    lab.choose(label="after-effect-write:3")
    lab.run()
    assert lab.resume().branch == "hit"
    assert lab.summary().startswith("Agente: agente de referencia (_trabajo/agent.py)\n")


def test_the_workbook_lab_names_the_students_own_agent(tmp_path, monkeypatch):
    """El taller arma _trabajo/taller/agent.py con su encabezado: el laboratorio dice que es el tuyo."""
    monkeypatch.chdir(tmp_path)
    notebook = tmp_path / "taller_tu_agente.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    cells = [("c1", "import sys\n\ndef main():\n    return 0")]
    agent = export_agent(
        notebook, tmp_path / "_trabajo" / "taller" / "agent.py", "tu taller (taller_tu_agente.ipynb)", cells
    )
    lab = CrashLab(workdir="laboratorio", agent=agent)
    expected = "tu agente (_trabajo/taller/agent.py, armado en tu taller (taller_tu_agente.ipynb))"
    assert lab.widget.view["header"].startswith(f"Corre {expected} en un proceso aparte")
    assert lab.summary().startswith(f"Agente: {expected}\n")


def test_an_agent_from_elsewhere_is_named_by_its_file_without_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb").mkdir()
    monkeypatch.chdir(tmp_path / "nb")
    lab = CrashLab(workdir="laboratorio", agent=REFERENCE_AGENT)  # fuera de la carpeta del notebook
    assert lab.widget.view["header"].startswith("Corre el agente de referencia (solutions/agent.py) en")
    lesson = CrashLab(workdir="laboratorio", agent=LESSON_AGENT)  # solo las celdas de la lección
    assert lesson.widget.view["header"].startswith(
        "Corre el agente de la lección (solutions/agent_leccion.py) en"
    )
    other = tmp_path / "otro" / "contador.py"
    other.parent.mkdir()
    other.write_text("print('hola')\n")
    assert (
        CrashLab(workdir="laboratorio", agent=other).summary().startswith("Agente: agente otro/contador.py\n")
    )


def test_without_an_agent_it_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lab = CrashLab(workdir="laboratorio")
    lab.click("run")
    assert "export_agent" in lab.widget.view["status"]


def test_summary_is_deterministic_and_has_no_absolute_paths(lab, tmp_path):
    lab.choose(label="after-tool:1", variant="dos-puntos")
    lab.run()
    lab.resume()
    first = lab.summary()
    lab.run()
    lab.resume()
    assert lab.summary() == first
    assert str(tmp_path) not in first and REPO_ROOT not in first


def test_display_has_a_static_preview(lab):
    data, _ = lab._repr_mimebundle_()
    assert data["text/plain"] == PLAIN_FALLBACK
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.widget.model_id
    assert "data:image/svg+xml;base64," in data["text/html"] and PREVIEW_LINE in data["text/html"]


def test_unknown_choices_are_refused(lab):
    with pytest.raises(ValueError, match="Etiqueta desconocida"):
        lab.choose(label="after-tool:4")
    with pytest.raises(ValueError, match="Variante desconocida"):
        lab.choose(label="after-tool:1", variant="solo-a")


def test_the_agent_never_imports_the_lab():
    code = (
        "import sys, harness.runs.launcher, harness.notebook.disk_state, solutions.agent; "
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
    lab.click("run")
    assert (
        "la caída «turno 2 · ② herramienta ejecutada, registro sin escribir» nunca ocurrió"
        in lab.widget.view["status"]
    )


def test_a_broken_agent_or_workdir_gives_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    broken = tmp_path / "roto.py"
    broken.write_text("raise SystemExit('el agente se rompió')\n", encoding="utf-8")
    lab = CrashLab(workdir="laboratorio", agent=broken)
    lab.resume()
    assert (
        "terminó con un error (código de salida 1), no con una caída: el agente se rompió"
        in (lab.widget.view["status"])
    )
    (tmp_path / "un_archivo").write_text("no es una carpeta")
    lab = CrashLab(workdir="un_archivo", agent=broken)
    lab.click("run")
    assert "No se pudo lanzar el agente" in lab.widget.view["status"]


# —— Cómo terminó el proceso, dicho desde su código de salida ——

# Lo que dice el laboratorio de una caída simulada (y solo de ella).
CRASH_WORDS = ("murió en «", "137, caída simulada", "Elige una caída más adelante")


def lab_on(tmp_path, monkeypatch, code, label="after-tool:3"):
    """El laboratorio sobre un agente que hace ``code`` (en un archivo de ``tmp_path``), ya ejecutado con
    la caída ``label`` elegida."""
    monkeypatch.chdir(tmp_path)
    agent = tmp_path / "agente" / "agent.py"
    agent.parent.mkdir()
    agent.write_text(code, encoding="utf-8")
    lab = CrashLab(workdir="laboratorio", agent=agent)
    lab.choose(label=label)
    lab.click("run")
    return lab


def shown_text(lab):
    """Todo lo que la página y el resumen muestran del último paso."""
    view = lab.widget.view
    return "\n".join([lab.summary(), view["status"], view["log"], view["resume_blocker"], view["history"]])


@pytest.mark.parametrize("label", ["after-save-a:1", "after-tool:3"])
def test_an_error_is_named_with_the_agents_line_and_never_as_a_crash(tmp_path, monkeypatch, label):
    # Un agente que falla con una traza: la ruta de su archivo y la de la carpeta en el mensaje.
    code = "import os\n\ndef main():\n    raise RuntimeError('no pude abrir ' + os.path.abspath('notas'))\n\nmain()\n"
    lab = lab_on(tmp_path, monkeypatch, code, label)
    status, blocker = lab.widget.view["status"], lab.widget.view["resume_blocker"]
    assert lab.last.run.returncode == 1
    assert "terminó con un error (código de salida 1)" in status
    assert "RuntimeError: no pude abrir laboratorio/notas" in status  # su línea, con la ruta relativa
    assert "terminó con un error (código 1) antes de escribir checkpoint.json" in blocker
    shown = shown_text(lab)
    assert not [word for word in CRASH_WORDS if word in shown]
    assert "Traceback" in lab.widget.view["log"] and 'File "agente/agent.py", line 4, in main' in shown
    assert str(tmp_path) not in shown and REPO_ROOT not in shown and sys.prefix not in shown


@pytest.mark.parametrize(
    "template",
    [
        '  File "{path}", line 4, in main',  # la línea de una traza
        "FileNotFoundError: [Errno 2] No such file or directory: '{path}'",  # un error de disco
        "no pude abrir {path}",  # suelta, en un mensaje del agente
    ],
)
def test_no_absolute_path_is_shown_and_the_file_still_is(tmp_path, monkeypatch, template):
    # Dentro de la carpeta del notebook, relativa (con sus espacios); fuera, su carpeta y su nombre.
    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "curso con espacios" / "_trabajo" / "agent.py"
    for path, shown in [
        (inside, "curso con espacios/_trabajo/agent.py"),
        ("/otra/maquina/x.py", "maquina/x.py"),
    ]:
        assert without_paths(template.format(path=path)) == template.format(path=shown)
    assert (
        without_paths("turno 1/3 · a / b · https://ejemplo.org/a/b")
        == "turno 1/3 · a / b · https://ejemplo.org/a/b"
    )


def test_the_workbooks_blank_agent_is_an_error_not_a_crash(tmp_path, monkeypatch):
    from maintainer.taller import WORKBOOK

    monkeypatch.chdir(tmp_path)
    shutil.copy(WORKBOOK, tmp_path / "taller_tu_agente.ipynb")
    agent = export_agent(["taller_tu_agente.ipynb"], tmp_path / "_trabajo" / "agent.py")
    lab = CrashLab(workdir="laboratorio", agent=agent)
    lab.choose(label="after-tool:3")
    lab.click("run")
    shown = shown_text(lab)
    assert "terminó con un error (código de salida 1)" in lab.widget.view["status"]
    assert "Todavía no escribiste" in lab.widget.view["status"]
    assert not [word for word in CRASH_WORDS if word in shown]
    assert str(tmp_path) not in shown and REPO_ROOT not in shown


@pytest.mark.skipif(os.name != "posix", reason="señales de POSIX")
@pytest.mark.parametrize("name", ["SIGKILL", "SIGTERM"])
def test_a_real_signal_is_named_and_is_not_the_simulated_crash(tmp_path, monkeypatch, name):
    code = f"import os, signal\nprint('[save] algo', flush=True)\nos.kill(os.getpid(), signal.{name})\n"
    lab = lab_on(tmp_path, monkeypatch, code)
    number = int(getattr(signal, name))
    assert lab.last.run.returncode == -number
    assert f"murió por {name} (código de salida -{number})" in lab.widget.view["status"]
    assert (
        f"murió por {name} (código -{number}) antes de escribir checkpoint.json"
        in (lab.widget.view["resume_blocker"])
    )
    assert not [word for word in CRASH_WORDS if word in shown_text(lab)]
    lab.resume()  # la reanudación muere igual: su rama dice por qué no hay ninguna
    assert f"ninguna: la reanudación murió por {name}" in lab.summary()


def test_137_without_the_kill_line_is_sigkill_and_with_it_is_the_crash_at_its_label(tmp_path, monkeypatch):
    lab = lab_on(tmp_path, monkeypatch, "import sys\nsys.exit(137)\n")
    assert "murió por SIGKILL (código de salida 137)" in lab.widget.view["status"]
    assert not [word for word in CRASH_WORDS if word in shown_text(lab)]
    # La caída simulada se nombra por la etiqueta de su línea [kill], no por la elegida.
    said = "import sys\nprint('[kill] caída simulada en after-save-b:2')\nsys.exit(137)\n"
    (tmp_path / "otro").mkdir()
    lab = lab_on(tmp_path / "otro", monkeypatch, said)
    where = describe_label("after-save-b:2", "dos-puntos")
    assert f"murió en «{where}» (código de salida 137, caída simulada)" in lab.widget.view["status"]


# —— La variante del motor (DBOS): las mismas caídas, lo que anota el motor en vez de los dos archivos ——

# Una muestra que pasa por cada cosa distinta que puede mostrar el motor: cada tipo de caída (② con la
# herramienta corrida dos veces), write_report ya escrito (turno 3) y las dos variantes, que solo difieren
# cuando el motor repite write_report (after-tool:3). Lo que hace el motor en cada una de las 12
# etiquetas lo afirma tests/test_beyond_dbos_agent.py; aquí, que el laboratorio muestre lo que hizo.
ENGINE_CASES = [
    pytest.param(label, variant, id=f"{variant}-{label}")
    for label, variant in [
        ("after-save-a:1", DBOS.name),
        ("after-tool:1", DBOS.name),
        ("after-effect-write:3", DBOS.name),
        ("after-save-b:2", DBOS.name),
        ("after-tool:3", DBOS.name),
        ("after-tool:3", DBOS_IDEMPOTENT.name),
    ]
]


def open_step_has_output(state, turn):
    """Si el paso de la herramienta del turno (el paso 2·turno: modelo, herramienta, modelo…) ya tiene
    su salida anotada en la base: lo que decide qué hará el motor al reanudar."""
    _, steps = state.record
    return any(n == 2 * turn and output != "—" for n, _, output in steps)


@pytest.mark.slow
@pytest.mark.parametrize("label, variant", ENGINE_CASES)
def test_engine_variant_shows_what_the_engine_did(lab, label, variant, dbos_preload, monkeypatch):
    for name, value in dbos_preload.items():  # como en el notebook: cada corrida nace con DBOS importado
        monkeypatch.setenv(name, value)
    kind, turn = label.split(":")
    turn = int(turn)
    lab.click("choose", label, variant)
    lab.click("run")
    assert lab.last.run.returncode == 137
    crashed = lab.last.disk
    assert crashed.record[0] == "PENDING" and "flujo PENDING" in lab.widget.view["disk"]
    wrote = turn == 3 and kind != "after-save-a"  # write_report ya corrió antes de morir
    assert crashed.report_copies == (1 if wrote else 0)
    expected = "hit" if open_step_has_output(crashed, turn) else "rerun"

    lab.click("resume")
    step = lab.last
    assert step.run.returncode == 0 and "[done]" in step.run.stdout
    assert step.branch == expected  # lo que muestra el laboratorio es lo que hizo el motor
    # Un paso re-ejecutado repite write_report salvo que la escritura sea idempotente.
    copies = 2 if wrote and expected == "rerun" and variant == "dbos" else 1
    assert step.disk.report_copies == copies
    assert step.disk.record[0] == "SUCCESS"
    disk = lab.widget.view["disk"]
    assert ENGINE_BRANCHES[expected] in disk and "Qué hizo el motor al reanudar" in disk
    assert f"Copias del reporte en report.txt: <b>{copies} cop" in disk
    assert ("⚠" in disk) == (copies == 2)
    picture = lab.widget.view["picture"]
    assert f"motor: {ENGINE_BRANCH_SHORT[expected]}" in picture
    # La herramienta corrió en los dos procesos solo si murió después de ejecutarla y el motor la repitió.
    assert ("data-state='twice'" in picture) == (kind == "after-tool")
    assert "checkpoint.json" not in lab.summary() and "Traceback" not in lab.widget.view["log"]


def test_engine_variant_words_and_files(lab):
    lab.choose(label="after-tool:3", variant="dbos-idempotente")
    view = lab.widget.view
    assert "agente de DBOS (harness.beyond.dbos_agent)" in view["header"]
    assert "No hay dbos-flujo.txt" in view["resume_blocker"]
    assert "salida de su paso sin anotar" in dict((o[0], o[1]) for o in view["options"])["after-tool:3"]
    assert view["cut_blocker"] and lab.cut_checkpoint().run is None
    assert not os.path.exists(os.path.join("laboratorio", "checkpoint.json"))
    lab.run()
    assert "$ CRASH_AFTER=after-tool:3 AGENT_VARIANT=idempotente python -m harness.beyond.dbos_agent" in (
        lab.summary()
    )
    lab.choose(label="after-tool:3", variant="dos-puntos")  # Reanudar sigue con el motor de la corrida
    lab.resume()
    assert "AGENT_VARIANT=idempotente python -m harness.beyond.dbos_agent --resume" in lab.summary()
    lab.click("reset")
    assert sorted(os.listdir("laboratorio")) == []


def test_engine_variant_uses_sqlite_even_with_a_database_url(lab, monkeypatch):
    monkeypatch.setenv("DBOS_SYSTEM_DATABASE_URL", "postgresql://nadie@127.0.0.1:1/no-existe")
    lab.choose(label="after-effect-write:1", variant="dbos")
    lab.run()
    assert lab.last.run.returncode == 137 and lab.last.disk.record[0] == "PENDING"


def test_the_lab_does_not_load_the_engine():
    # Ni el laboratorio ni el módulo que registra las variantes del motor cargan dbos (tarda en cargar).
    code = "import sys, harness.crash_lab, harness.beyond.lab_variants; print('dbos' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


# —— El registro de variantes: el laboratorio no sabe de «Más allá»; «Más allá» registra las suyas ——

LAB_DIR = pathlib.Path(REPO_ROOT, "harness", "crash_lab")
HARNESS_DIR = pathlib.Path(REPO_ROOT, "harness")
# (Que el grafo de imports de harness no tenga ciclos lo prueba tests/test_contract.py.)


def module_name(path):
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def harness_modules():
    return {module_name(path): path for path in HARNESS_DIR.rglob("*.py")}


def module_imports(path, modules):
    """Los módulos que importa ``path`` (también dentro de funciones, y los relativos ya resueltos):
    ``from paquete import x`` importa ``paquete.x`` si es uno de ``modules``, y si no, ``paquete``."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + [base] * bool(base))
            full = (f"{base}.{alias.name}" for alias in node.names)
            imported |= {name if name in modules else base for name in full}
    return imported


def test_the_lab_never_names_the_beyond_package():
    # Ni un import (tampoco uno perezoso dentro de una función, ni «from harness import beyond») ni una
    # mención en un texto o un comentario: find_spec("harness.beyond…") también sería depender de él.
    found, modules = [], harness_modules()
    for path in sorted(LAB_DIR.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        if "harness.beyond" in path.read_text(encoding="utf-8"):
            found.append(f"{path.name} lo nombra")
        if path.suffix == ".py":
            beyond = [name for name in module_imports(path, modules) if name.startswith("harness.beyond")]
            found += [f"{path.name} importa {name}" for name in sorted(beyond)]
    assert found == []


def test_the_menu_lists_the_registered_variants_in_order(lab):
    assert variants.names()[:2] == ["dos-puntos", "solo-b"]  # las de la lección las registra el laboratorio
    assert [name for name, _ in lab.widget.view["variants"]] == variants.names()
    assert ("dbos", "motor durable (DBOS)") in lab.widget.view["variants"]


@pytest.fixture
def toy_variant(monkeypatch):
    """El agente de referencia con otro nombre y otra etiqueta en el menú (al terminar, el registro
    vuelve a ser el de antes)."""
    monkeypatch.setattr(variants, "_registry", dict(variants._registry))
    toy = variants.get("dos-puntos")._replace(name="juguete", label="de juguete", agent=REFERENCE_AGENT)
    return variants.register(toy)


def test_a_registered_variant_shows_in_the_menu_and_runs(tmp_path, monkeypatch, toy_variant):
    monkeypatch.chdir(tmp_path)
    # El agente del laboratorio no existe: la variante corre el suyo.
    lab = CrashLab(workdir="laboratorio", agent=tmp_path / "no-existe.py")
    assert lab.widget.view["variants"][-1] == ("juguete", "de juguete")
    lab.click("choose", "after-tool:3", "juguete")
    lab.click("run")
    assert lab.last.run.returncode == 137 and lab.last.disk.report_copies == 1
    assert lab.resume().branch == "is_error" and lab.last.disk.report_copies == 1
    assert "Variante: de juguete ·" in lab.summary() and "agregando is_error" in lab.summary()
    assert "«de juguete»" in lab.widget.view["story"]


def test_an_engine_variant_without_its_module_is_not_in_the_menu():
    # Un proceso nuevo, que no importó el módulo que registra las variantes del motor.
    code = (
        "from harness.crash_lab import CrashLab\n"
        "lab = CrashLab(workdir='laboratorio')\n"
        "print([name for name, _ in lab.widget.view['variants']])\n"
        "try:\n    lab.choose(label='after-tool:3', variant='dbos')\n"
        "except ValueError as err:\n    print(err)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    menu, message = out.stdout.splitlines()
    assert menu == "['dos-puntos', 'solo-b']"
    assert message.startswith("Variante desconocida: dbos. Usa una de: dos-puntos, solo-b.")
    assert "«Más allá»" in message


# —— Lo que lee quien usa un lector de pantalla, y las palabras de cada valor (issue 27) ——


def test_the_picture_is_a_group_of_gap_buttons_with_the_chosen_one_pressed(lab):
    lab.choose(label="after-tool:2", variant="dos-puntos")
    picture = lab.widget.view["picture"]
    assert "role='group'" in picture and "role='img'" not in picture  # tiene botones: no es una imagen
    assert picture.count("role='button'") == 12
    assert picture.count("aria-pressed='true'") == 1
    assert "data-label='after-tool:2' role='button' tabindex='-1' aria-pressed='true'" in picture
    assert "aria-label='Caída en turno 2 · ② herramienta ejecutada" in picture  # sin espacios delante


def test_the_history_counts_past_99(lab):
    for _ in range(104):
        lab.reset()
    history = lab.widget.view["history"]
    assert "<span class='cl-n'>104.</span> Reiniciar" in history  # el número en el texto, entero
    assert "(y 96 pasos anteriores)" in history and "start=" not in history


# Una palabra inglesa usada como valor (la clave de una rama) o un plural perezoso, fuera de <code>.
ENGLISH_VALUE = re.compile(r"\b(hit|rerun|none)\b|\w\((s|es)\)")


def readable(shown):
    """Lo que se lee de un texto o HTML, sin estilos, sin lo que va en letra de código y sin etiquetas."""
    return re.sub(r"<style>.*?</style>|<code>.*?</code>|<[^>]*>", " ", shown, flags=re.S)


# Por rama: una caída que lleva a ella con dos puntos, lo que dice el resumen y las palabras del log.
BRANCH_CASES = [
    (
        "after-effect-write:3",
        "dos-puntos",
        "hit",
        "acierto · está en el registro",
        "acierto en el registro",
    ),
    (
        "after-tool:1",
        "dos-puntos",
        "rerun",
        "repetición · no está en el registro y es de solo lectura",
        "volviendo a ejecutar",
    ),
    (
        "after-tool:3",
        "dos-puntos",
        "is_error",
        "is_error · no está en el registro y tiene efectos secundarios",
        "agregando is_error",
    ),
    ("after-save-b:2", "dos-puntos", "none", "ninguna · sin llamada colgante", ""),
]


@pytest.mark.parametrize("label, variant, branch, words, log", BRANCH_CASES)
def test_branch_values_are_spanish_words_not_their_keys(lab, label, variant, branch, words, log):
    """La rama se dice en palabras llanas; las del log de la lección van aparte, en letra de código en el
    panel y entre comillas en el resumen; la clave inglesa («hit», «rerun», «none») nunca se lee."""
    lab.choose(label=label, variant=variant)
    lab.run()
    lab.resume()
    assert lab.last.branch == branch
    assert f"Rama de reconcile: {words}" in lab.summary()
    if log:
        assert f"(en el log: «{log}»)" in lab.summary()
        assert f"(en el log: <code>{log}</code>)" in lab.widget.view["disk"]
        assert log in lab.last.run.stdout  # son las palabras de la línea [resume][reconcile]
    else:
        assert "en el log" not in lab.summary()
    for panel in ("disk", "picture", "status", "history", "log", "story"):
        text = readable(lab.widget.view[panel])
        assert not ENGLISH_VALUE.search(text), (panel, text)
    assert not ENGLISH_VALUE.search(readable(lab.summary()))


@pytest.mark.parametrize("name", ["laboratorio_de_caidas", "leccion_6_puntos_de_control"])
def test_stored_outputs_show_no_english_branch_value(name):
    """Ninguna salida guardada del laboratorio ni de la lección (texto, HTML de la vista previa, el
    texto alternativo del dibujo) muestra «hit», «rerun» o «none» como valor fuera de la letra de código."""
    import nbformat

    nb = nbformat.read(os.path.join(REPO_ROOT, "notebooks", f"{name}.ipynb"), as_version=4)
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        for output in cell.outputs:
            shown = [v for v in output.get("data", {}).values() if isinstance(v, str)]
            alts = [a for v in shown for a in re.findall(r'alt="([^"]*)"', v)]  # el dibujo en palabras
            texts = [output.get("text", ""), *map(html.unescape, shown + alts)]
            for text in texts:
                found = ENGLISH_VALUE.search(readable(text))
                assert not found, f"celda de código {i}: «{found.group(0)}» en {readable(text)[:300]}"


def test_resume_reason_matches_a_crash_before_any_checkpoint(lab):
    assert "Pulsa Ejecutar primero" in lab.resume_blocker()  # nada corrió todavía
    lab.choose(label="after-tool:1", variant="solo-b")
    lab.run()  # solo B muere antes de guardar nada: no hay checkpoint.json
    reason = lab.widget.view["resume_blocker"]
    assert (
        "murió en «turno 1 · ② herramienta ejecutada" in reason
        and "antes de escribir checkpoint.json" in reason
    )
    assert "Pulsa Ejecutar primero" not in reason
    assert lab.widget.view["run_blocker"] == ""  # la razón de Ejecutar (y del menú) queda vacía
    lab.reset()
    assert "Pulsa Ejecutar primero" in lab.resume_blocker()


def test_hello_from_a_view_gets_an_answer_without_a_new_screen(lab, monkeypatch):
    sent = []
    monkeypatch.setattr(lab.widget, "send", lambda content, buffers=None: sent.append(content))
    ticket = lab.widget.view["ticket"]
    lab._on_message(lab.widget, {"action": "hello"}, [])
    assert sent == [{"action": "hello"}] and lab.widget.view["ticket"] == ticket


def preview_images(text):
    """Las imágenes de la vista guardada: [(texto alternativo, el SVG)]."""
    import base64

    return [
        (html.unescape(alt), base64.b64decode(src).decode("utf-8"))
        for alt, src in re.findall(r'<img alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)"', text)
    ]


def test_the_saved_preview_describes_the_last_state(lab):
    lab.choose(label="after-tool:3", variant="dos-puntos")
    lab.run()
    lab.resume()
    data, _ = lab._repr_mimebundle_()
    alts = [alt for alt, _ in preview_images(data["text/html"])]
    assert alts[0] == "Turno 1, read_notes, paso 1 de 4: punto A (pending=read_notes): ✓ en la corrida."
    (died,) = [alt for alt in alts if "murió" in alt]
    assert died.startswith("Turno 3, write_report, paso 2 de 4: herramienta")
    assert "<b>turno 3</b> · write_report" in data["text/html"]  # el nombre del turno, en texto
    assert "sin correr" not in data["text/html"] and "Pulsa un hueco" not in data["text/html"]


def test_the_saved_preview_is_one_small_image_per_step_at_the_letter_of_the_lab(lab):
    """Cada paso es su propia imagen, de menos de 250 px (cabe entera en una salida de 400 px y pasa de
    línea en vez de achicarse), con la letra del laboratorio; los de cada turno van de a dos."""
    lab.choose(label="after-save-a:2", variant="dos-puntos")
    lab.run()
    lab.choose(label="after-save-b:3", variant="dos-puntos")
    data, _ = lab._repr_mimebundle_()
    images = preview_images(data["text/html"])
    assert len(images) == 3 * 4
    for alt, svg in images:
        assert int(re.search(r"<svg[^>]* width='(\d+)'", svg)[1]) < 250, alt
        assert {int(px) for px in re.findall(r"font-size='(\d+)'", svg)} == {14}, alt
    assert [alt for alt, _ in images if "próxima caída elegida" in alt][0].startswith(
        "Turno 3, write_report, paso 4"
    )
    assert (
        sum("class='cl-mark-next'" in svg for _, svg in images) == 1
        and sum("class='cl-mark-kill'" in svg for _, svg in images) == 1
    )
    assert data["text/html"].count("<span style='display:inline-block'><img") == 3 * 2


STORED_PICTURES = ["leccion_6_puntos_de_control", "laboratorio_de_caidas", "mas_alla_motor_durable"]


@pytest.mark.parametrize("name", STORED_PICTURES)
def test_every_stored_picture_has_alt_text(name):
    """Cada dibujo guardado en los notebooks (SVG de la lección, vista previa del laboratorio) llega a
    nbconvert como una imagen con texto alternativo, nunca con su «No description has been provided»."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(os.path.join(REPO_ROOT, "notebooks", f"{name}.ipynb"), as_version=4)
    pictures = [
        o.data
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/svg+xml" in o.get("data", {}) or "cl-preview" in o.get("data", {}).get("text/html", "")
    ]
    assert pictures, "el notebook no guarda ningún dibujo"
    for data in pictures:
        assert re.search(r"<img alt=\"[^\"]{20,}\"", data["text/html"]), data["text/html"][:200]
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert "No description has been provided" not in body


# —— La página: un laboratorio por celda, y el dibujo en pasos que la página acomoda (issue 45) ——


def test_a_lab_used_only_from_python_makes_no_page(lab):
    lab.choose(label="after-save-b:1")
    lab.reset()
    assert lab._widget is None  # nada que la página guarde con el notebook
    assert lab.widget.view["label"] == "after-save-b:1"  # al mostrarse, con su último estado


def test_showing_a_lab_again_from_its_cell_closes_the_one_it_showed_before(tmp_path, monkeypatch):
    from harness.crash_lab import widget

    monkeypatch.chdir(tmp_path)
    runs = iter(
        [
            ("celda-1", "corrida-1"),
            ("celda-1", "corrida-1"),
            ("celda-1", "corrida-2"),
            ("celda-2", "corrida-3"),
        ]
    )
    monkeypatch.setattr(widget, "_running_cell", lambda: next(runs))
    monkeypatch.setattr(widget, "_SHOWN", {})
    first, second, again, other = (CrashLab(workdir=w, agent=REFERENCE_AGENT) for w in "abac")
    pages = [first.widget, second.widget]  # la misma ejecución de la celda los muestra a los dos
    assert all(page.comm is not None for page in pages)
    again._repr_mimebundle_()  # la celda, otra vez: los de antes dejan la página
    assert all(page.comm is None for page in pages) and first._widget is None
    other._repr_mimebundle_()  # otra celda no toca lo que muestra la primera
    assert again.widget.comm is not None
    first.run()  # el laboratorio cerrado sigue andando desde Python, sin página
    assert first._widget is None and first.last.action == "run"


def test_every_step_of_the_picture_is_a_group_the_page_can_move(lab):
    picture = lab.widget.view["picture"]
    assert picture.count("class='cl-cell'") == 12 and picture.count("class='cl-turn'") == 3
    # Cada grupo lleva su caja y su hueco: al moverlo, el hueco sigue a su paso.
    cells = re.findall(r"<g class='cl-cell'.*?(?=<g class='cl-cell'|<g class='cl-turn'|</svg>)", picture)
    assert all("data-state=" in c and "data-label=" in c for c in cells)
    sizes = re.search(r"data-cell='(\d+)' data-row='(\d+)' data-left='(\d+)' data-top='(\d+)'", picture)
    assert sizes and int(sizes[1]) * 4 + int(sizes[3]) == int(re.search(r"width='(\d+)'", picture)[1])

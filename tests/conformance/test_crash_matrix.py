"""Una caída en cada punto de la corrida de 3 turnos, y la reanudación en un proceso nuevo.

La tabla dice, para cada etiqueta, qué rama de reconcile debe tomar la reanudación y cuántas copias
de report.txt hay justo después de la caída; se deduce de la lección, momento por momento:
① after-save-a: la herramienta no corrió ni hay anotación → solo lectura: re-ejecutar; efectos: is_error
② after-tool: corrió, pero sin anotación → igual que ① (el disco no los distingue)
   after-effect-write: anotada, punto B sin guardar → acierto en el registro
③ after-save-b: punto B guardado, no hay llamada colgante → reconcile devuelve None
"""

import json

import pytest
from seed_text import fill, template

from harness.crash import KINDS
from harness.disk_state import read_disk_state

TOOL_OF_TURN = {1: "read_notes", 2: "count_words", 3: "write_report"}
BRANCH = {"after-save-a": "rerun", "after-tool": "rerun", "after-effect-write": "hit", "after-save-b": "none"}
# Las dos excepciones del turno 3: write_report tiene efectos, así que un fallo en el registro es is_error.
EXPECTED = {f"{kind}:{turn}": (BRANCH[kind], 0) for kind in KINDS for turn in (1, 2)} | {
    "after-save-a:3": ("is_error", 0),
    "after-tool:3": ("is_error", 1),
    "after-effect-write:3": ("hit", 1),
    "after-save-b:3": ("none", 1),
}
RECONCILE_LINES = {
    "hit": "[resume][reconcile] tool_use_id=${pending.id} name=${pending.name} acierto",
    "rerun": "[resume][reconcile] tool_use_id=${pending.id} name=${pending.name} fallo en el registro, herramienta",
    "is_error": "[resume][reconcile] tool_use_id=${pending.id} name=${pending.name} fallo en el registro con",
}
FINAL = "[done] Reporte escrito en report.txt, tarea completa."
VERIFIED = "[done] Verifiqué report.txt: el reporte ya estaba escrito, no lo repito. Tarea completa."


def pairing_violations(messages):
    """Cada tool_use tiene que responderse con un tool_result de su id en el mensaje siguiente."""
    bad = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or not isinstance(message["content"], list):
            continue
        uses = {b["id"] for b in message["content"] if b["type"] == "tool_use"}
        following = messages[i + 1]["content"] if i + 1 < len(messages) else []
        answered = {b["tool_use_id"] for b in following if isinstance(b, dict) and b["type"] == "tool_result"}
        bad += sorted(uses - answered)
    return bad


def sent_conversations(log):
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("label", sorted(EXPECTED))
def test_resume_after_every_crash_point(run, workdir, tmp_path_factory, label):
    log = tmp_path_factory.mktemp("log") / "requests.jsonl"
    env = {"SCRIPTED_MODEL_LOG": str(log)}
    branch, copies_at_crash = EXPECTED[label]
    turn = int(label.split(":")[1])

    crash = run(workdir, crash_after=label, env=env)
    assert crash.killed and crash.stdout.splitlines()[-1] == f"[kill] caída simulada en {label}"
    at_crash = read_disk_state(workdir)
    assert at_crash.report_copies == copies_at_crash
    expected_pending = None if branch == "none" else TOOL_OF_TURN[turn]
    assert (at_crash.pending or {}).get("name") == expected_pending

    resume = run(workdir, resume=True, env=env)
    assert resume.returncode == 0, resume.stderr
    assert resume.branch == branch
    lines = resume.stdout.splitlines()
    if branch != "none":
        pending = at_crash.pending
        line = fill(template(RECONCILE_LINES[branch]), id=pending["id"], name=pending["name"])
        assert lines[1] == line
    after = read_disk_state(workdir)
    assert after.report_copies == 1, "report.txt tiene que tener el reporte exactamente una vez"
    assert lines[-1] == (VERIFIED if label == "after-tool:3" else FINAL)
    if branch == "is_error":
        # El modelo recibió la verdad y verificó antes de decidir (DESIGN: «it verifies»).
        assert "[turn 4][save A] pending=check_report" in lines
        # Solo si el reporte no existía lo vuelve a escribir (turno 5).
        assert ("[turn 5][save A] pending=write_report" in lines) == (label == "after-save-a:3")
    if branch == "rerun":
        assert after.ledger[at_crash.pending["id"]]["name"] == TOOL_OF_TURN[turn]

    conversations = sent_conversations(log)
    assert conversations and all(pairing_violations(c) == [] for c in conversations)


def test_a_run_without_crash_completes_in_one_process(run, workdir):
    done = run(workdir)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == FINAL
    assert [line for line in done.stdout.splitlines() if "save A" in line] == [
        f"[turn {t}][save A] pending={TOOL_OF_TURN[t]}" for t in (1, 2, 3)
    ]
    state = read_disk_state(workdir)
    assert state.report_copies == 1 and state.pending is None
    assert sorted(state.ledger) == ["toolu_01", "toolu_02", "toolu_03"]


def test_a_fresh_run_clears_the_previous_runs_files(run, workdir):
    run(workdir, crash_after="after-effect-write:3")
    second = run(workdir, crash_after="after-save-a:1")
    state = read_disk_state(workdir)
    assert second.killed and state.report_copies == 0 and state.ledger is None
    assert state.checkpoint["turns"] == 1

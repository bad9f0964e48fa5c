"""La corrida sin caída y la corrida nueva sobre los archivos de otra. La matriz de las 12 etiquetas
(la rama de reconcile, el disco tras la caída y tras cada --resume, el registro exacto, el final y el
emparejamiento de tool_use y tool_result) la afirma una sola vez la suite de conformidad:
``tests/conformance/test_conformidad.py``, que también corre en la pasada de portabilidad."""

from harness.notebook.disk_state import read_disk_state

TOOL_OF_TURN = {1: "read_notes", 2: "count_words", 3: "write_report"}
FINAL = "[done] Reporte escrito en report.txt, tarea completa."


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

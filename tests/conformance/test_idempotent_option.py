"""La opción «idempotente» (``AGENT_VARIANT=idempotente``): write_report recibe el tool_use_id como
clave de idempotencia, así que reanudar la puede volver a ejecutar sin duplicar el reporte.

Es lo que «Más allá» muestra con un motor durable: con la clave, la ventana ② (la herramienta corrió,
el registro no) ya no necesita is_error. Sin la opción, el agente es el de la lección.
"""

import pytest

from harness.crash import KINDS
from harness.tools import report_copies

FINAL = "[done] Reporte escrito en report.txt, tarea completa."
LABELS = sorted(f"{kind}:{turn}" for kind in KINDS for turn in (1, 2, 3))


@pytest.mark.parametrize("label", LABELS)
def test_one_report_after_every_crash_point(run, workdir, label):
    crash = run(workdir, crash_after=label, variant="idempotente")
    assert crash.killed, crash.stderr
    resume = run(workdir, resume=True, variant="idempotente")
    assert resume.returncode == 0 and resume.stdout.endswith(FINAL + "\n"), resume.stderr
    # Con la clave, una llamada colgante sin anotación se vuelve a ejecutar: nunca is_error.
    assert resume.branch in ("hit", "rerun", "none")
    assert report_copies(workdir / "report.txt") == 1


@pytest.mark.parametrize("variant", ["idempotente", "dos-puntos"])
def test_the_window_two_reruns_only_with_the_key(run, workdir, variant):
    """② de write_report: con la clave, «escritura idempotente con clave, volviendo a ejecutar» y el
    mismo reporte; sin ella, el is_error de la lección."""
    assert run(workdir, crash_after="after-tool:3", variant=variant).killed
    before = (workdir / "report.txt").read_bytes()
    resume = run(workdir, resume=True, variant=variant)
    assert resume.returncode == 0, resume.stderr
    if variant == "idempotente":
        assert (
            resume.branch == "rerun"
            and "escritura idempotente con clave, volviendo a ejecutar" in resume.stdout
        )
        assert (workdir / "report.txt").read_bytes() == before  # el reporte ya estaba: no se tocó
    else:
        assert resume.branch == "is_error"
    assert report_copies(workdir / "report.txt") == 1


def test_a_fresh_run_removes_the_old_receipts(run, workdir):
    """Los recibos de las claves son de una tarea: una corrida nueva los borra con el reporte."""
    assert run(workdir, variant="idempotente").returncode == 0
    assert (workdir / "report.txt.claves.json").exists()
    assert run(workdir, crash_after="after-save-a:1", variant="idempotente").killed
    assert not (workdir / "report.txt.claves.json").exists() and not (workdir / "report.txt").exists()

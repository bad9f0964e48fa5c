"""Fallas que duran: un error del entorno no es la respuesta del modelo (issue 26).

Una herramienta que sigue fallando por el sistema (strace hace fallar cada apertura o cada rename), el
tope de turnos, un reporte con otro nombre (un enlace duro), un candado que es un enlace roto y un
aviso seguido de un error: cada caso termina con salida 1 y una línea en español por falla, sin tocar nada
a través de un enlace, y un --resume posterior (ya resuelta la causa) termina la tarea con un reporte.
"""

import json
import os

import pytest
from course_files import digest

from harness.runs.strace_log import strace_prefix
from harness.scripted_model import FINAL_TEXT
from harness.tools import report_copies
from maintainer import faults

VARIANTS = [None, "idempotente"]


def under_strace(agent, workdir, path, inject, variant=None):
    """Una corrida nueva del agente con ``inject`` en cada llamada que toca ``path`` (strace -P)."""
    env = {"AGENT_VARIANT": variant} if variant else {}
    args = ["-P", os.fspath(workdir / path), "-e", f"trace={inject.split(':')[0]}", "-e", f"inject={inject}"]
    return faults.run(workdir, agent, prefix=strace_prefix(os.devnull, args), env=env)


def one_line(done):
    return done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "Warning" not in done.stderr


@pytest.mark.needs_strace
@pytest.mark.parametrize("variant", VARIANTS, ids=["dos-puntos", "idempotente"])
@pytest.mark.parametrize(
    ("path", "inject", "start"),
    [
        ("sales-notes.txt", "openat:error=EIO", "read_notes no pudo leer sales-notes.txt (3 veces seguidas)"),
        (
            "report.txt.tmp",
            "rename:error=EIO",
            "write_report no pudo escribir en report.txt (3 veces seguidas)",
        ),
    ],
    ids=["lectura", "rename"],
)
def test_a_lasting_fault_stops_with_exit_1_and_resumes_to_one_report(
    run, agent, workdir, variant, path, inject, start
):
    assert run(workdir).returncode == 0  # sales-notes.txt ya existe: la falla es al leerlo, no al crearlo
    done = under_strace(agent, workdir, path, inject, variant)
    assert done.returncode == 1 and one_line(done), done.stderr
    assert done.stderr.startswith(f"{start}: error de entrada/salida del disco.")
    assert "--resume" in done.stderr and "[done]" not in done.stdout
    assert report_copies(workdir / "report.txt") == 0
    # Cuando se resuelve, --resume retoma donde quedó y termina con un solo reporte.
    resumed = run(workdir, resume=True, variant=variant)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.endswith(f"[done] {FINAL_TEXT}\n")
    assert report_copies(workdir / "report.txt") == 1


def test_the_turn_limit_is_exit_1_and_resume_goes_on(run, workdir):
    done = run(workdir, env={"AGENT_MAX_TURNS": "2"})
    assert done.returncode == 1 and one_line(done), done.stderr
    assert done.stderr.startswith("Se alcanzó el máximo de 2 turnos, deteniéndonos por nuestra cuenta")
    assert "[done]" not in done.stdout and "--resume" in done.stderr
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    assert cp["turns"] == 2 and "finalText" not in cp
    resumed = run(workdir, resume=True, env={"AGENT_MAX_TURNS": "2"})  # cada corrida tiene su tope
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.endswith(f"[done] {FINAL_TEXT}\n") and report_copies(workdir / "report.txt") == 1


@pytest.mark.parametrize("other", ["effects.json", "checkpoint.json"])
def test_a_hard_linked_report_is_refused_and_nothing_is_written_through(run, workdir, other):
    """La variante idempotente reanudaría write_report con su clave: con report.txt como otro nombre de
    un archivo del agente, la reanudación se niega antes de su primera escritura (la escritura por
    omisión reescribe con rename y no puede escribir a través del enlace: lo cubre la prueba de abajo)."""
    variant = "idempotente"
    assert run(workdir, crash_after="after-save-a:3", variant=variant).killed
    os.link(workdir / other, workdir / "report.txt")  # report.txt y otro archivo del agente: el mismo
    before = {name: (workdir / name).read_bytes() for name in ("effects.json", "checkpoint.json")}
    done = run(workdir, resume=True, variant=variant)
    assert done.returncode == 1 and one_line(done), done.stderr
    assert done.stderr.startswith("report.txt tiene 2 nombres") and "enlace duro" in done.stderr
    assert (workdir / other).read_bytes() == before[other]  # ni una letra a través del enlace
    assert json.loads((workdir / "effects.json").read_bytes()) is not None
    os.remove(workdir / "report.txt")
    resumed = run(workdir, resume=True, variant=variant)
    assert resumed.returncode == 0, resumed.stderr
    assert report_copies(workdir / "report.txt") == 1


@pytest.mark.parametrize("variant", VARIANTS, ids=["dos-puntos", "idempotente"])
def test_a_hard_linked_report_never_changes_the_other_file(run, workdir, variant):
    assert run(workdir, crash_after="after-tool:2", variant=variant).killed
    os.link(workdir / "sales-notes.txt", workdir / "report.txt")
    notes = (workdir / "sales-notes.txt").read_bytes()
    done = run(workdir, resume=True, variant=variant)
    assert (workdir / "sales-notes.txt").read_bytes() == notes
    assert done.returncode == 1 and one_line(done) and "enlace duro" in done.stderr, done.stderr
    os.remove(workdir / "report.txt")
    assert run(workdir, resume=True, variant=variant).returncode == 0
    assert report_copies(workdir / "report.txt") == 1


@pytest.mark.parametrize("target", ["fuera/no-existe.lock", "fuera/existe.lock"])
def test_a_symlinked_lock_file_without_fcntl_creates_nothing_outside(run, workdir, tmp_path_factory, target):
    outside = tmp_path_factory.mktemp("fuera")
    link_to = outside / os.path.basename(target)
    if "existe.lock" == link_to.name:
        link_to.write_text("", encoding="utf-8")
    before = digest(outside)
    (workdir / ".agente.lock").symlink_to(link_to)
    no_fcntl = {"PYTHONPATH": os.path.join(os.path.dirname(faults.__file__), "portability")}
    done = run(workdir, env=no_fcntl)
    assert done.returncode == 1 and one_line(done), done.stderr
    assert done.stderr.startswith(".agente.lock en ") and "enlace simbólico" in done.stderr
    assert digest(outside) == before and sorted(os.listdir(outside)) == sorted(
        [link_to.name] if link_to.exists() else []
    )
    os.remove(workdir / ".agente.lock")
    assert run(workdir, env=no_fcntl).returncode == 0


@pytest.mark.needs_strace
def test_a_ledger_warning_then_an_error_is_one_line_each(agent, workdir):
    """La escritura del registro falla (el aviso de la lección, enseguida, como su console.error) y
    después la del punto B (el error final): una falla, una línea; el aviso primero y sin repetirse."""
    paths = ["-P", "effects.json.tmp", "-P", "checkpoint.json.tmp"]  # como las abre el agente
    args = [*paths, "-e", "trace=openat", "-e", "inject=openat:error=ENOSPC:when=2+"]
    done = faults.run(workdir, agent, prefix=strace_prefix(os.devnull, args))
    warning, error = done.stderr.splitlines()
    assert done.returncode == 1 and done.stderr.count("\n") == 2 and "Traceback" not in done.stderr
    assert warning.startswith("[falló la escritura del registro] tool_use_id=toolu_01")
    assert error.startswith("No se pudo escribir en checkpoint.json.tmp: el disco está lleno.")
    assert "[falló la escritura del registro]" not in error


@pytest.mark.parametrize("variant", VARIANTS, ids=["dos-puntos", "idempotente"])
def test_a_symlinked_report_is_refused_and_its_target_untouched(run, workdir, variant):
    assert run(workdir, crash_after="after-tool:2", variant=variant).killed
    (workdir / "report.txt").symlink_to("sales-notes.txt")
    notes = (workdir / "sales-notes.txt").read_bytes()
    done = run(workdir, resume=True, variant=variant)
    assert (workdir / "sales-notes.txt").read_bytes() == notes
    assert done.returncode == 1 and one_line(done) and "enlace simbólico" in done.stderr, done.stderr
    os.remove(workdir / "report.txt")
    assert run(workdir, resume=True, variant=variant).returncode == 0
    assert report_copies(workdir / "report.txt") == 1

"""Fallas más allá de SIGKILL: errores de E/S, archivos hostiles en el directorio y mensajes claros.

Un caso por cada falla que encontró el estudio (V1–V5), con procesos reales, y una muestra corta del
barrido con strace (la cuenta completa: ``python -m benchmarks.fault_sweep``).
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

import harness
from harness.runs.strace_log import strace_prefix
from harness.scripted_model import FINAL_TEXT, READ_ATTEMPTS
from harness.tools import report_copies
from maintainer import faults

NOTES = (Path(harness.__file__).parent / "data" / "sales-notes.txt").read_bytes()


def strace_run(agent, workdir, inject, resume=False):
    """El agente bajo strace con una sola falla inyectada (``inject``: «openat:error=EIO:when=N»)."""
    syscall = inject.split(":")[0]
    with tempfile.TemporaryDirectory() as base:
        prefix = strace_prefix(f"{base}/falla.strace", ["-e", f"trace={syscall}", "-e", f"inject={inject}"])
        return faults.run(workdir, agent, resume=resume, prefix=prefix)


def nth_open_of(agent, workdir, name, nth=1):
    """El ``when=`` del ``nth``-ésimo openat de ``name`` en una corrida nueva grabada en una copia."""
    with tempfile.TemporaryDirectory() as base:
        copy = os.path.join(base, "grabada")
        os.mkdir(copy)
        _, calls = faults.record(faults.Scenario("nueva", None, False), agent, copy, f"{base}/g.strace")
        found = [n for op, n, target in faults.targets(calls, copy) if op == "openat" and target == name]
    return found[nth - 1]


# —— V1: un error de lectura pasajero no atasca la tarea ——


@pytest.mark.needs_strace
@pytest.mark.parametrize("errno_name", ["EACCES", "EIO"])
def test_v1_a_transient_read_error_is_retried_by_the_model(agent, workdir, errno_name):
    when = nth_open_of(agent, workdir, "sales-notes.txt")
    done = strace_run(agent, workdir, f"openat:error={errno_name}:when={when}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"[done] {FINAL_TEXT}"
    assert report_copies(workdir / "report.txt") == 1
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    results = [b for m in cp["messages"] if isinstance(m["content"], list) for b in m["content"]]
    failed = [b for b in results if b.get("is_error")]
    # El error llegó al modelo en español, sin el texto del sistema ni rutas absolutas.
    assert len(failed) == 1 and "no se pudo leer sales-notes.txt" in failed[0]["content"]
    assert "Errno" not in failed[0]["content"] and str(workdir) not in failed[0]["content"]


def test_v1_a_read_that_keeps_failing_stops_with_exit_1_not_a_done(run, workdir):
    """Una falla del entorno que dura no es la respuesta del modelo (issue 26): salida 1, una línea que
    dice qué archivo, qué operación, por qué y qué hacer; ni [done] ni una tarea marcada terminada."""
    (workdir / "notas").mkdir()
    (workdir / "sales-notes.txt").symlink_to("notas")  # leerlo falla siempre: es un directorio
    done = run(workdir)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"read_notes no pudo leer sales-notes.txt ({READ_ATTEMPTS} veces seguidas): es un directorio."
    )
    assert "[done]" not in done.stdout and "--resume" in done.stderr
    assert not (workdir / "report.txt").exists()
    os.remove(workdir / "sales-notes.txt")
    (workdir / "notas").rmdir()
    (workdir / "sales-notes.txt").write_bytes(NOTES)
    resumed = run(workdir, resume=True)
    assert resumed.returncode == 0 and resumed.stdout.endswith(f"[done] {FINAL_TEXT}\n"), resumed.stderr
    assert report_copies(workdir / "report.txt") == 1


# —— V2: una anotación del registro de otra herramienta no es un acierto ——


def test_v2_a_ledger_entry_naming_another_tool_is_refused(run, workdir):
    assert run(workdir, crash_after="after-save-a:3").killed
    effects = json.loads((workdir / "effects.json").read_text(encoding="utf-8"))
    effects["toolu_03"] = {"name": "read_notes", "result": "Reporte escrito", "at": 1}
    (workdir / "effects.json").write_text(json.dumps(effects), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in workdir.iterdir()}
    done = run(workdir, resume=True)
    assert done.returncode == 1 and "acierto" not in done.stdout
    assert done.stderr.strip() == (
        "effects.json no corresponde a checkpoint.json: la anotación de toolu_03 es de read_notes, pero la "
        "llamada colgante es de write_report. Revísalo a mano."
    )
    assert {p.name: p.read_bytes() for p in workdir.iterdir()} == before  # nada escrito


# —— V3: effects.json como enlace roto no es un registro vacío ——


@pytest.mark.parametrize("target", ["/no/existe/effects.json", "otro.json"])
def test_v3_a_symlinked_ledger_is_an_error_not_an_empty_ledger(run, workdir, target):
    assert run(workdir, crash_after="after-tool:3").killed
    os.remove(workdir / "effects.json")
    (workdir / "otro.json").write_text("{}", encoding="utf-8")
    (workdir / "effects.json").symlink_to(target)
    done = run(workdir, resume=True)
    assert done.returncode == 1
    assert done.stderr.startswith("No se puede leer effects.json (es un enlace simbólico")
    assert os.path.islink(workdir / "effects.json") and report_copies(workdir / "report.txt") == 1


# —— V4: un temporal sobrante que es un enlace nunca se escribe a través ——


@pytest.mark.parametrize(
    "tmp", ["checkpoint.json.tmp", "effects.json.tmp", "sales-notes.txt.tmp", "report.txt.tmp"]
)
@pytest.mark.parametrize("resume", [False, True])
def test_v4_a_leftover_temp_symlink_is_never_written_through(run, workdir, tmp_path_factory, tmp, resume):
    outside = tmp_path_factory.mktemp("fuera") / "victima.txt"
    outside.write_text("no me toques", encoding="utf-8")
    if resume:
        assert run(workdir, crash_after="after-save-a:1").killed
    (workdir / tmp).symlink_to(outside)
    done = run(workdir, resume=resume)
    assert done.returncode == 0, done.stderr
    assert outside.read_text(encoding="utf-8") == "no me toques"
    assert report_copies(workdir / "report.txt") == 1
    # El enlace se borró (el agente usó ese temporal) o quedó tal cual (no lo necesitó).
    assert not os.path.lexists(workdir / tmp) or os.readlink(workdir / tmp) == str(outside)


# —— V5: un temporal que es un directorio se rechaza antes de escribir nada ——


@pytest.mark.parametrize("label", ["after-save-a:1", "after-save-a:3", "after-tool:2"])
@pytest.mark.parametrize("tmp", ["checkpoint.json.tmp", "effects.json.tmp", "report.txt.tmp"])
def test_v5_a_directory_temp_is_refused_before_the_first_write(run, workdir, label, tmp):
    assert run(workdir, crash_after=label).killed
    (workdir / tmp).mkdir()
    before = {p.name: p.read_bytes() for p in workdir.iterdir() if p.is_file()}
    done = run(workdir, resume=True)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"No se pudo escribir en {tmp}: es un directorio.")
    assert "sigue intacto" not in done.stderr
    assert {p.name: p.read_bytes() for p in workdir.iterdir() if p.is_file()} == before
    (workdir / tmp).rmdir()
    assert run(workdir, resume=True).returncode == 0
    assert report_copies(workdir / "report.txt") == 1


# —— Mensajes: qué se intentaba, en español, y sin traza al mostrar [done] ——


@pytest.mark.needs_strace
@pytest.mark.parametrize(
    ("inject", "start"),
    [
        ("unlink:error=EIO:when=1", "No se pudo borrar checkpoint.json: error de entrada/salida del disco."),
        ("rename:error=ENOSPC:when=1", "No se pudo escribir en checkpoint.json.tmp: el disco está lleno."),
    ],
)
def test_disk_failures_name_the_action_in_spanish(agent, run, workdir, inject, start):
    assert run(workdir).returncode == 0  # una corrida terminada: la nueva empieza borrando
    done = strace_run(agent, workdir, inject)
    assert done.returncode == 1 and done.stderr.startswith(start), done.stderr
    assert "sigue intacto" not in done.stderr and done.stderr.count("\n") == 1
    assert not any(leak in done.stderr for leak in faults.LEAKS)


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_closed_stdout_is_one_spanish_line_not_a_traceback(run, command, workdir, unbuffered):
    """Con búfer (una tubería), todo sale al imprimir [done]; sin búfer, en el primer print: en los dos
    casos una sola línea en español, y lo guardado sirve para reanudar."""
    args, env = command(workdir, env={"PYTHONUNBUFFERED": unbuffered})
    proc = subprocess.Popen(args, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # nadie lee: la salida está cerrada cuando el agente imprime
    stderr = proc.stderr.read().decode("utf-8")
    assert proc.wait(timeout=60) == 1
    if unbuffered:
        assert stderr.startswith("No se pudo escribir en la salida estándar: la salida está cerrada.")
        assert stderr.count("\n") == 1
        assert run(workdir, resume=True).returncode == 0
    else:
        assert stderr == (
            "La tarea terminó, pero no se pudo mostrar su última línea: la salida está cerrada. El punto de "
            "control y el reporte ya están guardados.\n"
        )
    assert report_copies(workdir / "report.txt") == 1


# —— Una muestra del barrido: cada tipo de falla en llamadas elegidas de la corrida y de un --resume ——


@pytest.mark.slow
@pytest.mark.needs_strace
@pytest.mark.parametrize(
    "scenario",
    [
        s
        for s in faults.scenarios()
        if s.name in ("nueva sobre una terminada", "--resume tras after-effect-write:2")
    ],
    ids=lambda s: s.name,
)
def test_a_sample_of_the_fault_sweep_has_no_violation(agent, scenario, tmp_path):
    expected = faults.expected_report(agent)
    template = faults.templates(str(tmp_path), agent, [scenario])[scenario]
    trials = faults.plan(scenario, template, agent)
    assert {t.fault for t in trials} == set(faults.FAULTS) and {t.syscall for t in trials} == set(
        faults.INJECTED
    )
    sample = trials[:: max(1, len(trials) // 8)]
    for trial in sample:
        assert faults.run_trial(trial, template, agent, expected) == [], trial

"""``python -m harness.conformidad`` como lo corre una persona: un informe en español que dice qué
comprobó y qué no aplica (y por qué), código 0 solo si pasa todo, y nunca una traza; con los textos
esperados tomados de la lección."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from seed_text import SEED, fill, template

from harness import contract
from harness.beyond import batch_agent
from harness.conformidad import suite
from harness.conformidad.checks import CHECKS, production, reading
from harness.conformidad.checks.production import SECTIONS
from harness.conformidad.rows import FAILED, OK, ON_THIS_MACHINE, UNCHECKED, judged
from harness.contract import LESSON_AGENT_VAR
from maintainer.paths import NOTEBOOKS, REFERENCE_AGENT

CRASH_ROW = re.compile(r"^\s+(✓|✗)\s+caída en (after-[a-z-]+:\d+)", re.MULTILINE)


def conformidad(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "harness.conformidad", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        cwd=cwd,
        env=env,
    )


def test_a_passing_piece_exits_with_zero_and_says_what_it_checked():
    """La salida de una pieza que pasa. El nivel entero sobre cada agente, y su informe:
    tests/conformance/test_conformidad.py (una sola corrida de la matriz de las 12 etiquetas)."""
    done = conformidad(REFERENCE_AGENT, "--solo", "apertura")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert done.stdout.splitlines()[-1].endswith("✓") and "✗" not in done.stdout
    assert done.stdout.count("comprueba: ") == len(CHECKS["apertura"].checks)
    assert "(nivel producción)" not in done.stdout  # el nivel de producción, solo con --produccion


def test_signals_ignored_where_the_suite_starts_still_reach_the_agent():
    """Bajo ``nohup`` la suite hereda SIGHUP ignorado, y sus filas corren a la vez: el agente que una
    fila deja esperando al modelo recibe su señal, y la limpieza de huérfanos de otra fila no lo mata
    ni le roba su código de salida (así fallaba, solo en la corrida entera de CI)."""

    def ignore_hangup_and_interrupt():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    done = subprocess.run(
        [sys.executable, "-m", "harness.conformidad", REFERENCE_AGENT, "--produccion", "--solo", "senales"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        preexec_fn=ignore_hangup_and_interrupt,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert done.stdout.count("✓  «Ctrl-C o SIGTERM mientras espera al modelo»") == 3


def test_a_reconcile_that_does_nothing_fails_and_names_the_crash_points(tmp_path):
    broken = tmp_path / "agent.py"
    source = open(REFERENCE_AGENT, encoding="utf-8").read()
    broken.write_text(
        re.sub(r"def reconcile\(cp\):.*\n", "def reconcile(cp):\n    return None\n", source, count=1),
        encoding="utf-8",
    )
    done = conformidad(str(broken), "--solo", "caidas")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    failed = {label for status, label in CRASH_ROW.findall(done.stdout) if status == "✗"}
    # Sin reconcile, ninguna llamada colgante se rellena: fallan todas las etiquetas con colgante.
    assert {"after-tool:3", "after-effect-write:3", "after-save-a:1"} <= failed
    assert not failed & {"after-save-b:1", "after-save-b:2", "after-save-b:3"}
    assert "pista:" in done.stdout and re.match(r"\d+ comprobaciones", done.stdout.splitlines()[-1])


def test_a_failed_row_shows_the_agents_own_stderr(tmp_path):
    broken = tmp_path / "agent.py"
    source = open(REFERENCE_AGENT, encoding="utf-8").read()
    broken.write_text(source.replace("raw = read_bytes(CHECKPOINT_PATH)", "raw = 1 / 0"), encoding="utf-8")
    done = conformidad(str(broken), "--solo", "lectura")
    assert done.returncode == 1
    assert "stderr del agente │ ZeroDivisionError: division by zero" in done.stdout


@pytest.mark.slow
def test_the_batch_agent_runs_the_crash_points_it_has(tmp_path):
    done = conformidad(
        batch_agent.__file__,
        "--varias-llamadas",
        "--entorno",
        f"{LESSON_AGENT_VAR}={REFERENCE_AGENT}",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    labels = {label for _, label in CRASH_ROW.findall(done.stdout)}
    assert {"after-tool:4", "after-effect-write:4", "after-save-b:2"} <= labels
    assert "no aplica: supone el guion de la lección" in done.stdout


def test_an_agent_that_writes_nothing_fails_under_several_calls(tmp_path):
    idle = tmp_path / "agent.py"
    # Se importa bien (main con su «if __name__»), termina con [done] y no escribe nada.
    idle.write_text(
        'import sys\n\n\ndef main():\n    print("[done] listo")\n    return 0\n\n\n'
        'if __name__ == "__main__":\n    sys.exit(main())\n',
        encoding="utf-8",
    )
    done = conformidad(str(idle), "--varias-llamadas")
    assert done.returncode == 1, done.stdout
    assert re.search(r"✗\s+la corrida sin caída", done.stdout)


def test_the_production_tier_is_titled_by_the_sections_of_the_production_notebook():
    """Cada defensa lleva el título de su sección (que cada fila la nombre, sobre cada agente:
    tests/conformance/test_conformidad.py); una pieza sola, como la imprime la línea de comandos."""
    done = conformidad(REFERENCE_AGENT, "--solo", "herramienta-desconocida")
    named = set(re.findall(r"^\s+(?:✓|✗|no aplica)\s+«([^»]+)»", done.stdout, re.MULTILINE))
    assert named and named <= set(SECTIONS)
    assert {m.SECTION for m in production.MODULES} <= set(SECTIONS)
    notebook = Path(NOTEBOOKS) / "de_la_leccion_a_produccion.ipynb"
    if notebook.exists():  # las secciones, tal como las titula el notebook
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        titles = {
            line[3:].strip("«» ")
            for c in cells
            for line in "".join(c["source"]).splitlines()
            if line.startswith("## ")
        }
        assert {m.SECTION for m in production.MODULES} <= {t.strip("«»") for t in titles}


def test_without_strace_the_rows_that_need_it_are_unchecked_and_the_suite_does_not_pass(tmp_path):
    """Una máquina sin strace (macOS, Windows, un contenedor): las filas que lo necesitan no pudieron
    correr, lo dicen con su porqué, y el resumen dice cuántas se comprobaron; nunca «no aplica» (en el
    nivel de la lección todas aplican al agente de referencia) ni un código 0."""
    bin_dir = tmp_path / "bin"  # un PATH con Python y sin strace
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python")
    env = {**os.environ, "PATH": str(bin_dir)}
    assert shutil.which("strace", path=env["PATH"]) is None
    done = conformidad(REFERENCE_AGENT, env=env)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    statuses = re.findall(r"^\s*(✓|✗|todavía no|sin comprobar|no aplica)(?:  |: )", done.stdout, re.MULTILINE)
    assert UNCHECKED in statuses and "no aplica" not in statuses, done.stdout[-3000:]
    assert f"pasó: {ON_THIS_MACHINE}: hace falta strace" in done.stdout
    last = done.stdout.splitlines()[-1]
    checked, applying = map(int, re.search(r"se comprobaron (\d+) de (\d+) filas", last).groups())
    assert checked == statuses.count("✓") + statuses.count("✗") < applying == len(statuses), last
    assert "no es un pase" in last and done.returncode == 1


@pytest.mark.parametrize("timeouts, status", [(1, OK), (2, FAILED)])
def test_a_row_whose_run_did_not_end_is_retried_once_before_it_fails(timeouts, status):
    """Una corrida que no terminó bajo carga no es una falla del agente hasta que se repite: la fila corre
    otra vez (una sola), y solo si tampoco termina es ✗."""
    calls = []

    def row(ctx):
        calls.append(ctx)
        if len(calls) <= timeouts:
            stderr = f"[turno 1]\n{suite.TIMED_OUT} (¿un bucle, o espera algo?)"
            return judged("la corrida", "137", "código -1", False, "no terminó", stderr)
        return judged("la corrida", "137", "137", True, "")

    (done,) = suite._safe(row, SimpleNamespace(command=()), None, "una pieza")
    assert done.status == status and len(calls) == 2


@pytest.mark.parametrize("args", [["no-existe.py"], [REFERENCE_AGENT, "--entorno", "SIN_IGUAL"]])
def test_a_bad_command_line_is_one_spanish_line(args):
    done = conformidad(*args)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_expected_errors_are_the_lessons_own():
    path = "${CHECKPOINT_PATH}"
    assert reading.NO_CHECKPOINT == fill(template(f"No se encuentra {path}"), path="checkpoint.json")
    assert fill(template(f"No se pudo parsear {path}"), path="checkpoint.json").startswith(reading.UNPARSABLE)
    version = fill(template(f"{path} tiene version="), path="checkpoint.json", version=2)
    assert reading.WRONG_VERSION == version
    assert reading.TRUNCATED in SEED
    unknown = fill(template("Se desconoce el estado de ejecución previo"), name="write_report")
    assert contract.unknown_state_text("write_report") == unknown


def test_a_strace_probe_that_timed_out_is_tried_again_and_not_kept(monkeypatch):
    """Un plazo vencido bajo carga no deja sin comprobar, para siempre, las filas de strace del proceso."""
    from harness.conformidad.checks import faults

    answers = iter([(faults.CANNOT_RUN, False)] * faults.PROBES + [("", True)])
    monkeypatch.setattr(faults, "_known", {})
    monkeypatch.setattr(faults, "_probe", lambda: next(answers))
    assert faults.strace_missing() == faults.CANNOT_RUN  # tres plazos vencidos: por ahora, no
    assert faults.strace_missing() == ""  # la siguiente pregunta vuelve a probar
    assert faults.strace_missing() == ""  # y una respuesta definitiva queda guardada

"""El servidor de corridas del Nivel 2 (``harness.runs.fork_server`` con los ganchos de
``solutions/grading/witness.py``): cada corrida es un proceso real que muere con SIGKILL, y nada de una
corrida sobrevive a la siguiente."""

import json
import threading

import pytest

from solutions.grading.judge import runner

pytestmark = pytest.mark.needs_bwrap

# Deja un proceso separado (su propia sesión) y cuenta los procesos que ve el aislamiento.
LEAVES_A_PROCESS = """
def run_tool_uses_fixed(content):
    import os, subprocess
    subprocess.Popen(["sleep", "60"], start_new_session=True)
    print(json.dumps(sorted(int(p) for p in os.listdir("/proc") if p.isdigit())))
    return []
"""
COUNTS_PROCESSES = """
def run_tool_uses_fixed(content):
    import os
    print(json.dumps(sorted(int(p) for p in os.listdir("/proc") if p.isdigit())))
    return []
"""


def seen(done):
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_nothing_a_run_leaves_running_survives_into_the_next(tmp_path):
    with runner(str(tmp_path), 30) as run:
        first, _ = run(stop_at=None, source="import json\n" + LEAVES_A_PROCESS, content=[])
        second, _ = run(stop_at=None, source="import json\n" + COUNTS_PROCESSES, content=[])
    # En la primera: el servidor (el init del aislamiento), la corrida y su «sleep» separado.
    assert len(seen(first)) == 3, first.stderr
    # En la segunda, el «sleep» ya no está: solo el servidor y esta corrida.
    assert len(seen(second)) == 2, second.stderr


def test_a_run_dies_by_sigkill_at_the_moment(tmp_path):
    source = (
        "def run_tool_uses_fixed(content):\n    return [run_tool(content[0]['name'], content[0]['input'])]\n"
    )
    call = [
        {
            "type": "tool_use",
            "id": "toolu_03",
            "name": "write_report",
            "input": {"path": "report.txt", "content": "x"},
        }
    ]
    with runner(str(tmp_path), 30) as run:
        done, state = run(stop_at="herramienta:write_report", source=source, content=call)
    assert done.killed_at_moment and done.returncode == -9
    # La herramienta escribió de verdad y nadie anotó nada: murió justo cuando volvió.
    (folder,) = tmp_path.iterdir()
    assert (folder / "report.txt").read_text() == "x"
    assert not state.entries


def test_a_loop_costs_one_timeout(tmp_path):
    from solutions.grading.judge import AnswerError

    source = "def run_tool_uses_fixed(content):\n    while True:\n        pass\n"
    with runner(str(tmp_path), 2) as run, pytest.raises(AnswerError, match="no terminó en 2 s"):
        run(stop_at=None, source=source, content=[])


def test_without_the_server_each_run_has_its_own_interpreter(tmp_path, monkeypatch):
    """Donde no hay servidor de corridas (fuera de Linux), la misma comprobación corre como antes."""
    from sample_class import solution

    from solutions.grading.judge import check_function

    monkeypatch.setattr("harness.runs.fork_server.available", lambda: False)
    monkeypatch.setattr("harness.runs.fork_server.Server", None)  # si se usara, fallaría
    check_function(solution("ejercicio_nivel_2", "corregida"), str(tmp_path), 30)
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("corrida_")]) == 5


# Un código correcto que imprime mucho más de lo que cabe en una tubería (64 KiB), por las dos salidas.
PRINTS_A_LOT = """
def run_tool_uses_fixed(content):
    import sys
    for n in range(3000):
        print("línea", n, "x" * 1000)
        print("aviso", n, "y" * 1000, file=sys.stderr)
    print("fin", file=sys.stderr)
    return []
"""


@pytest.mark.parametrize("served", [True, False], ids=["servidor", "un-interprete-por-corrida"])
def test_a_run_that_prints_a_lot_is_not_a_loop(tmp_path, monkeypatch, served):
    """La salida se lee mientras corre; de cada una queda el final, no todo."""
    from harness.runs.kill_at_moment import OUTPUT_TAIL

    if not served:
        monkeypatch.setattr("harness.runs.fork_server.available", lambda: False)
    with runner(str(tmp_path), 30) as run:
        done, _ = run(stop_at=None, source=PRINTS_A_LOT, content=[])
    assert not done.timed_out and done.returncode == 0, done.stderr[-500:]
    assert done.events[-1] == ("devolvio", [])
    assert done.stderr.splitlines()[-1] == "fin"
    assert done.stdout.splitlines()[-1].startswith("línea 2999 ")
    assert len(done.stdout.encode()) <= OUTPUT_TAIL and len(done.stderr.encode()) <= OUTPUT_TAIL


# Deja FIFOs y un enlace donde quien juzga lee: abrir una FIFO esperaría para siempre; un enlace
# llevaría a leer otro archivo de la máquina.
LEAVES_TRAPS = """
def run_tool_uses_fixed(content):
    import os
    os.mkfifo("report.txt")
    os.mkfifo("effects.json")
    os.symlink("/etc/hostname", "checkpoint.json")
    return []
"""


def test_what_a_run_leaves_is_read_without_following_it(tmp_path):
    found = {}

    def judge():
        with runner(str(tmp_path), 30) as run:
            found["state"] = run(stop_at=None, source=LEAVES_TRAPS, content=[])[1]

    reader = threading.Thread(target=judge, daemon=True)
    reader.start()
    reader.join(120)  # red de seguridad: sin el arreglo, la lectura de la FIFO no vuelve nunca
    assert not reader.is_alive(), "quien juzga se quedó esperando en una FIFO"
    state = found["state"]
    assert state.checkpoint == state.ledger == "ilegible (no es un archivo común)"
    assert state.report_copies == 0


# Se adelanta a la corrida siguiente: crea las carpetas que tendría si se numeraran, con un enlace
# donde se escribiría el script.
GETS_AHEAD = """
def run_tool_uses_fixed(content):
    import os
    for n in range(2, 10):
        os.makedirs(f"../corrida_{n}", exist_ok=True)
        os.symlink("/etc/hostname", f"../corrida_{n}/reproducir_orden.py")
    return []
"""


def test_a_run_cannot_prepare_the_folder_of_the_next(tmp_path):
    with runner(str(tmp_path), 30) as run:
        run(stop_at=None, source=GETS_AHEAD, content=[])
        done, _ = run(stop_at=None, script_text="print('corrió')\n")
    assert done.returncode == 0 and done.stdout.strip() == "corrió", done.stderr


def test_a_run_gets_only_the_environment_the_sandbox_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secreto")
    source = (
        "def run_tool_uses_fixed(content):\n    import os\n"
        "    print(os.environ.get('ANTHROPIC_API_KEY'), os.environ.get('ORDER'))\n    return []\n"
    )
    with runner(str(tmp_path), 30) as run:
        done, _ = run(stop_at=None, source=source, content=[], env={"ORDER": "prod"})
    assert done.stdout.split() == ["None", "prod"], done.stderr

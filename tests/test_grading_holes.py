"""Lo que una entrega decidida intenta contra quien califica (issue 25), probado pieza por pieza.

La clase adversaria (``tests/sample_class.py``) lo prueba de punta a punta en
``tests/test_grading.py``; aquí, cada agujero por separado y rápido: qué ve un aislado, qué módulo
importa al arrancar, los topes con su nombre en el error y el juez del Nivel 2 desde adentro.
"""

import json
import os
import subprocess
import sys

import pytest
from sample_class import (
    FORGES_EVENTS,
    HANDED_IN_MODULES,
    NIVEL_2,
    SENSES_THE_MOMENT,
    SURVIVING_CHILD,
    solution,
)

from solutions.grading import judge, paths, sandbox
from solutions.grading.judge import AnswerError

pytestmark = pytest.mark.needs_bwrap


def inside(folder, code, *, shown_as=None, group=None):
    """Corre ``code`` con el Python de las pruebas dentro del aislamiento de ``folder``."""
    command = [*sandbox.prefix(folder, shown_as=shown_as), sys.executable, "-c", code]
    return subprocess.run(sandbox.in_group(group, command), capture_output=True, text=True, timeout=120)


@pytest.fixture
def course(tmp_path):
    """Una carpeta de curso con su base, otra entrega y la carpeta donde corre la de «ana»."""
    (tmp_path / "gradebook.db").write_text("notas")
    other = tmp_path / "submitted" / "beto" / "leccion_6"
    other.mkdir(parents=True)
    (other / "ejercicio_nivel_1.ipynb").write_text("{}")
    folder = tmp_path / "autograded" / "ana" / "leccion_6"
    folder.mkdir(parents=True)
    return tmp_path, folder


# —— 1. Ve solo lo suyo ——

LOOKS_AROUND = """
import json, os, sys
import harness, ipykernel
print(json.dumps({p: os.path.exists(p) for p in sys.argv[1:]}))
"""


def test_a_submission_sees_only_its_folder_the_interpreter_and_the_harness(course):
    course_dir, folder = course
    hidden = [
        os.path.join(paths.ROOT, "solutions"),
        paths.GRADING,
        paths.SOURCE,
        os.path.join(paths.ROOT, "tests"),
        os.path.join(paths.ROOT, ".git"),
        str(course_dir / "gradebook.db"),
        str(course_dir / "submitted" / "beto"),
        "/root/.ssh",
        "/etc/shadow",
    ]
    code = LOOKS_AROUND.replace("sys.argv[1:]", repr([*hidden, str(folder)]))
    done = inside(folder, code)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen.pop(str(folder)) is True
    assert seen == dict.fromkeys(hidden, False)


def test_what_the_kernel_writes_goes_to_a_private_copy(course, tmp_path_factory):
    """Visto con la ruta de su carpeta, el kernel escribe en una copia: la carpeta donde nbgrader
    escribe después no cambia (un enlace con el nombre del notebook calificado no llega a ella)."""
    _, folder = course
    (folder / "puerto.txt").write_text("9")
    copy = sandbox.private_copy(str(folder))
    try:
        code = "import os; print(open('puerto.txt').read()); os.symlink('/etc/passwd', 'nivel_1.ipynb')"
        done = inside(copy, code, shown_as=str(folder))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "9"
        assert sorted(os.listdir(folder)) == ["puerto.txt"]
        assert os.path.islink(os.path.join(copy, "nivel_1.ipynb"))
    finally:
        import shutil

        shutil.rmtree(copy)


# —— 4. Nada de lo entregado corre por accidente ——


def test_handed_in_modules_do_not_run_when_python_or_the_kernel_starts(course):
    _, folder = course
    for relative, text in HANDED_IN_MODULES.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    command = [*sandbox.prefix(folder), sys.executable, "-m", "ipykernel_launcher", "--version"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    done = inside(folder, "import json, harness, sys; print(json.dumps(['' in sys.path, harness.__file__]))")
    assert done.returncode == 0, done.stderr
    cwd_in_path, harness_file = json.loads(done.stdout)
    assert not cwd_in_path
    assert not harness_file.startswith(str(folder))


# —— 6. Cada recurso compartido, con tope y con su nombre en el error ——

FILLS = """
import sys
try:
    with open(sys.argv[1] if len(sys.argv) > 1 else "/dev/shm/relleno", "wb") as f:
        for _ in range({chunks}):
            f.write(bytes(1 << 20))
except OSError as err:
    print(f"{{type(err).__name__}}: {{err}}")
"""


def test_dev_shm_is_small_and_the_error_names_its_limit(course):
    _, folder = course
    done = inside(folder, FILLS.format(chunks=2 * (sandbox.SHM_BYTES >> 20)))
    assert "No space left on device" in done.stdout, done.stderr
    assert "/dev/shm de 64 MiB" in sandbox.limit_note(done.stdout)


def test_open_files_are_capped_and_the_error_names_the_limit(course):
    _, folder = course
    code = "import os\ntry:\n    [os.open('/dev/null', os.O_RDONLY) for _ in range(100000)]\nexcept OSError as e:\n    print(e)"
    done = inside(folder, code)
    assert "Too many open files" in done.stdout, done.stderr
    assert f"{sandbox.OPEN_FILES} archivos abiertos" in sandbox.limit_note(done.stdout)


def test_processes_are_capped_and_the_error_names_the_limit(course):
    group = sandbox.process_group()
    if group is None:
        pytest.skip("esta máquina no deja crear un grupo de control de procesos")
    _, folder = course
    code = (
        "import subprocess\nkids = []\ntry:\n"
        f"    for _ in range({sandbox.PROCESSES + 10}):\n"
        "        kids.append(subprocess.Popen(['sleep', '60']))\n"
        "except OSError as e:\n    print(e)\nfor k in kids:\n    k.kill()\n    k.wait()"
    )
    try:
        done = inside(folder, code, group=group)
    finally:
        sandbox.release_group(group)
    assert "Resource temporarily unavailable" in done.stdout, done.stderr
    assert f"{sandbox.PROCESSES} procesos" in sandbox.limit_note(done.stdout)


# —— 2 y 3. El juez del Nivel 2 no está en el proceso de la entrega; la corrida muere entera ——

# Un hilo que borra el null del registro apenas aparece report.txt: con el testigo, la corrida está
# congelada desde antes de que la herramienta escriba hasta que muere.
ERASER_THREAD = """import json
import os
import threading


def _erase():
    while not os.path.exists("report.txt"):
        pass
    with open("effects.json", encoding="utf-8") as f:
        ledger = json.load(f)
    done = {k: v for k, v in ledger.items() if v.get("result") is not None}
    with open("effects.json.nuevo", "w", encoding="utf-8") as f:
        json.dump(done, f)
    os.replace("effects.json.nuevo", "effects.json")


def run_tool_uses_fixed(content):
    threading.Thread(target=_erase, daemon=True).start()
    results = []
    for block in tool_uses(content):
        save_effect(block["id"], {"name": block["name"], "result": None, "at": now_ms()})
        output = run_tool(block["name"], block["input"])
        results.append(tool_result(block["id"], output))
    return results"""

# Busca en su propio proceso (gc, todas sus cadenas) lo que dice cuándo se la va a matar.
LOOKS_FOR_THE_MOMENT = """import gc


def run_tool_uses_fixed(content):
    moment = [":".join(["herramienta", "write_report"])]  # sin el texto entero en esta celda
    found = []
    for thing in gc.get_objects():
        try:
            if isinstance(thing, dict):
                found += [k for k in ("stop_at", "stops") if k in thing]
            elif hasattr(thing, "__dict__"):
                found += [k for k in ("stop_at", "stops") if k in vars(thing)]
            if thing == moment and thing is not moment:
                found.append(repr(thing))
        except Exception:
            pass
    print("MOMENTO" if found else "NADA", found)
    return []"""


# Un hilo que arranca procesos sin parar (``subprocess`` usa vfork: el padre espera dentro del núcleo a su
# hijo detenido) mientras la corrida llama a la herramienta: congelar no se cuelga.
SPAWNS_WHILE_FROZEN = """import subprocess
import threading


def _spawn():
    while True:
        subprocess.run(["true"])


def run_tool_uses_fixed(content):
    threading.Thread(target=_spawn, daemon=True).start()
    for _ in range(20):
        run_tool("check_report", {"path": "report.txt"})
    output = run_tool(content[0]["name"], content[0]["input"])
    save_effect(content[0]["id"], {"name": content[0]["name"], "result": output, "at": now_ms()})
    return [tool_result(content[0]["id"], output)]"""


def judged(check, answer, tmp_path):
    try:
        check(answer, str(tmp_path), 30)
    except AnswerError as wrong:
        return str(wrong)
    return None


def test_the_correct_answers_still_pass(tmp_path):
    assert judged(judge.check_function, solution(NIVEL_2, "corregida"), tmp_path) is None
    assert judged(judge.check_script, solution(NIVEL_2, "script"), tmp_path) is None


def test_notices_forged_from_inside_the_run_do_not_count(tmp_path):
    assert "crash_point nunca disparó" in judged(judge.check_script, FORGES_EVENTS, tmp_path)


def test_the_run_cannot_read_when_it_will_be_killed(tmp_path):
    assert judged(judge.check_function, SENSES_THE_MOMENT, tmp_path).startswith(
        "con SIGKILL justo cuando la herramienta vuelve"
    )
    with judge.runner(str(tmp_path), 30) as run:
        done, _ = run(stop_at="herramienta:write_report", source=LOOKS_FOR_THE_MOMENT, content=[])
    assert done.stdout.split()[0] == "NADA", done.stdout + done.stderr


@pytest.mark.parametrize("answer", [SURVIVING_CHILD, ERASER_THREAD], ids=["hijo", "hilo"])
def test_nothing_of_the_run_acts_between_the_moment_and_the_disk_being_read(tmp_path, answer):
    """Un proceso en otra sesión o un hilo que borra el null: diez veces, ninguna gana (sin carrera)."""
    for attempt in range(10):
        (tmp_path / str(attempt)).mkdir()
        with judge.runner(str(tmp_path / str(attempt)), 30) as run:
            done, state = run(stop_at="herramienta:write_report", source=answer, content=_write_report())
        assert done.killed_at_moment and done.returncode == -9, done.stderr
        assert state.entries.get("toolu_03") == {"name": "write_report", "result": None, "at": _at(state)}


def _write_report():
    from harness.notebook.exercise_feedback import WRITE_REPORT_CALL

    return WRITE_REPORT_CALL


def _at(state):
    return state.entries["toolu_03"]["at"]


def test_an_error_from_a_limit_names_it():
    assert "256 MiB por archivo" in sandbox.limit_note("OSError: [Errno 27] File too large")
    assert sandbox.limit_note("ValueError: otra cosa") is None


def test_freezing_a_run_that_keeps_spawning_processes_does_not_hang(tmp_path):
    with judge.runner(str(tmp_path), 30) as run:
        done, state = run(
            stop_at="herramienta:write_report", source=SPAWNS_WHILE_FROZEN, content=_write_report()
        )
    assert done.killed_at_moment and not done.timed_out, done.stderr
    assert state.report_copies == 1 and "toolu_03" not in state.entries


# Intenta matar, detener e interrumpir al servidor de corridas (y a todos) antes de hacer bien lo suyo.
ATTACKS_THE_SERVER = """import os
import signal


def run_tool_uses_fixed(content):
    for pid in [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
        for sig in (signal.SIGINT, signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    try:
        open("/proc/1/mem", "rb").read(1)
    except OSError:
        pass
""" + solution(NIVEL_2, "corregida").split("\n", 1)[1]


def test_a_run_cannot_kill_or_stop_the_server_that_judges_it(tmp_path):
    assert judged(judge.check_function, ATTACKS_THE_SERVER, tmp_path) is None

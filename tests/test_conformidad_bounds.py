"""La suite de conformidad acotada frente a un agente hostil o roto: cada cota, con un agente que la
rompería si no estuviera (hijos que se escapan, una salida sin fin, uno que se cuelga, un error de
sintaxis, uno que escribe fuera de su carpeta).

Cada agente hostil corre, antes o después de su truco, el ``main`` del agente de referencia: así las
filas pasan, y lo único que se juzga es la cota. Las esperas son por eventos (un proceso que termina,
un pid anotado antes de que el agente salga); los plazos son solo la red de seguridad.
"""

import contextlib
import ctypes
import inspect
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from harness.conformidad import processes
from harness.runs import containment
from maintainer.paths import REFERENCE_AGENT

# El texto que llevan en su línea de comandos los procesos que deja un agente hostil.
SLEEPER_MARK = "durmiente-de-la-prueba"
SLEEPER = f"import time; time.sleep(3600)  # {SLEEPER_MARK}"
RUN_REFERENCE = f"import runpy; runpy.run_path({REFERENCE_AGENT!r}, run_name='__main__')"


def hostile(tmp_path, main_code, top="", name="agent.py"):
    """Un agent.py en ``tmp_path/agente`` que, al correrse (no al importarse), hace ``main_code``."""
    folder = tmp_path / "agente"
    folder.mkdir(exist_ok=True)
    body = textwrap.indent(textwrap.dedent(main_code), "    ")
    source = f"import os, subprocess, sys\n{textwrap.dedent(top)}\nif __name__ == '__main__':\n{body}\n"
    path = folder / name
    path.write_text(source, encoding="utf-8")
    return str(path)


def conformidad(*args, env=None, cwd=None):
    """``python -m harness.conformidad …`` como lo corre una persona; devuelve también el pico de
    memoria (RSS, MiB) del proceso de la suite, medido por él mismo."""
    code = (
        "import resource, sys\n"
        "from harness.conformidad.__main__ import main\n"
        "try:\n    code = main(sys.argv[1:])\n"
        "finally:\n"
        # VmHWM es el pico de este proceso desde su exec; ru_maxrss arrastra el del padre que hizo fork
        # (pytest, que después de cientos de pruebas ocupa cientos de MiB).
        "    try:\n"
        "        hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1]\n"
        "        kib = int(hwm)\n"
        "    except OSError:\n"
        "        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    print(f'RSS_MIB={kib / 1024:.0f}', file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,  # red de seguridad: cada prueba termina mucho antes, por eventos
        # Las cotas se prueban con las corridas una tras otra: cada corrida mira los restos de la anterior.
        env={**os.environ, "CONFORMANCE_WORKERS": "1", **(env or {})},
        cwd=cwd,
    )
    lines = done.stderr.splitlines()
    rss = int(lines[-1].removeprefix("RSS_MIB=")) if lines and lines[-1].startswith("RSS_MIB=") else None
    stderr = "\n".join(lines[:-1]) if rss is not None else done.stderr
    return done.returncode, done.stdout, stderr, rss


def passed_rows(out):
    """Cuántas filas ✓ tiene el informe (el resumen final no cuenta)."""
    return sum(line.lstrip().startswith("✓  ") for line in out.splitlines())


def alive(pid):
    """¿Sigue vivo (y no es un zombi) el proceso ``pid`` que dejó el agente hostil?"""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"durmiente-de-la-prueba" not in f.read():  # SLEEPER_MARK
                return False  # ya no está (o el pid es de otro proceso)
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


ALIVE = inspect.getsource(alive)  # la misma función dentro del agente hostil


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="usa /proc (solo Linux)")


# —— Ningún proceso de una corrida la sobrevive ——

# Tres maneras de escaparse; cada hijo anota su pid (el agente lo escribe antes de salir).
ESCAPES = """
pids = os.environ["PIDS_DEL_HOSTIL"]
# Los hijos de una corrida anterior: si alguno sigue vivo, sobrevivió a su corrida.
for name in os.listdir(pids):
    if name.isdigit() and alive(int(name)):
        open(os.path.join(pids, "sobrevivió-" + name), "w").close()
sleeper = [sys.executable, "-c", {sleeper!r}]
kids = [
    subprocess.Popen(sleeper),  # en el grupo, con la salida abierta
    subprocess.Popen(sleeper, start_new_session=True),  # fuera del grupo, con la salida abierta
    # fuera del grupo, sin la marca de la corrida en su entorno y sin ningún pipe: solo queda adoptarlo
    subprocess.Popen(sleeper, start_new_session=True, env={{"PATH": os.environ["PATH"]}},
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
]
for kid in kids:
    open(os.path.join(pids, str(kid.pid)), "w").close()
{run}
"""


@linux_only
def test_children_that_escape_the_run_die_with_it_and_do_not_hold_the_row(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    agent = hostile(tmp_path, ESCAPES.format(sleeper=SLEEPER, run=RUN_REFERENCE), top=ALIVE)
    code, out, err, _ = conformidad(agent, "--solo", "terminal", env={"PIDS_DEL_HOSTIL": str(pids)})
    left = sorted(int(p.name) for p in pids.iterdir() if p.name.isdigit())
    assert len(left) == 3 * 2, err  # dos corridas, tres hijos cada una
    # Ninguno sobrevivió a su corrida (lo mira la segunda corrida) ni a la suite.
    assert sorted(p.name for p in pids.iterdir() if not p.name.isdigit()) == []
    assert [pid for pid in left if alive(pid)] == []
    # Los hijos con la salida abierta no hicieron esperar a las filas su plazo: las dos pasan.
    assert code == 0, out + err
    assert "no terminó" not in out + err and passed_rows(out) == 2


@linux_only
def test_a_contained_run_ends_when_the_agent_ends_and_takes_its_children_along():
    spawner = (
        "import subprocess, sys, os\n"
        f"kid = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}], start_new_session=True)\n"
        "print(kid.pid, flush=True)\n"
    )
    outcome = containment.run_contained(
        [sys.executable, "-c", spawner], cwd=os.getcwd(), env=dict(os.environ), timeout=120
    )
    assert outcome.ended == "exit" and outcome.returncode == 0, outcome.stderr
    assert not alive(int(outcome.stdout.split()[0]))


# Lo que hace un kernel con ``workbook.conformance()``: la suite dentro de un proceso que no es la suite
# como programa (nunca llama a own_children) y que ya tiene un hijo suyo, ajeno a las corridas.
IN_PROCESS = """
import subprocess, sys
from harness.conformidad.processes import Context
from harness.conformidad.suite import run_suite
own = subprocess.Popen([sys.executable, "-c", {sleeper!r}])
rows = [row for _, part in run_suite(Context(sys.argv[1], {{}}), ["terminal"]) for row in part]
print(int(own.poll() is None), sum(row.status == "✓" for row in rows), len(rows), flush=True)
own.kill()
own.wait()
"""


@linux_only
def test_in_process_the_suite_contains_a_run_like_the_command_line(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    agent = hostile(tmp_path, ESCAPES.format(sleeper=SLEEPER, run=RUN_REFERENCE), top=ALIVE)
    done = subprocess.run(
        [sys.executable, "-c", IN_PROCESS.format(sleeper=SLEEPER), agent],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,  # red de seguridad
        env={**os.environ, "CONFORMANCE_WORKERS": "1", "PIDS_DEL_HOSTIL": str(pids)},
    )
    assert done.returncode == 0, done.stderr
    own_alive, passed, total = map(int, done.stdout.split()[-3:])
    left = sorted(int(p.name) for p in pids.iterdir() if p.name.isdigit())
    assert len(left) == 3 * 2 and passed == total == 2, done.stdout + done.stderr
    # Ningún hijo sobrevivió a su corrida (lo mira la segunda) ni a la suite, y el hijo ajeno del
    # proceso que la corrió siguió vivo hasta el final (lo mató él mismo: no la suite).
    assert sorted(p.name for p in pids.iterdir() if not p.name.isdigit()) == []
    assert [pid for pid in left if alive(pid)] == []
    assert own_alive == 1


# Un proceso que deja un servidor corriendo (como ``pg_ctl start``): su nieto, en otra sesión, imprime su
# pid, cierra su salida y se queda; el proceso lanzado espera a su hijo y sale.
KEEPS_A_SERVER = f"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        for fd in (0, 1, 2):
            os.close(fd)
        time.sleep(3600)  # {SLEEPER_MARK}
    os._exit(0)
os.wait()
"""
# Una corrida que sigue en curso hasta que la prueba la suelta (anota que arrancó, espera un archivo).
HELD = (
    "import os, sys, time\nopen(sys.argv[1], 'w').close()\n"
    "while not os.path.exists(sys.argv[2]):\n    time.sleep(0.02)\n"
)


@linux_only
def test_in_process_what_a_keep_run_leaves_running_survives_an_adopting_row(tmp_path):
    started, release = tmp_path / "arrancó", tmp_path / "suelta"
    held = threading.Thread(
        target=containment.run_contained,
        args=([sys.executable, "-c", HELD, str(started), str(release)],),
        kwargs={"cwd": tmp_path, "env": dict(os.environ), "timeout": 120},
    )
    held.start()
    server = None
    try:
        while not started.exists() and held.is_alive():
            held.join(0.02)
        kept = containment.run_contained(
            [sys.executable, "-c", KEEPS_A_SERVER],
            cwd=tmp_path,
            env=dict(os.environ),
            timeout=120,
            kill_orphans=False,
        )
        server = int(kept.stdout.split()[0])
        # Quedó huérfano mientras la otra corrida seguía: lo adoptó este proceso (es la prueba de verdad).
        with open(f"/proc/{server}/stat", encoding="utf-8") as f:
            assert int(f.read().rpartition(")")[2].split()[1]) == os.getpid()
    finally:
        release.touch()
        held.join(120)
    try:
        assert alive(server)  # la corrida en curso terminó y mató a sus huérfanos, no al servidor
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(server, signal.SIGKILL)
            os.waitpid(server, 0)


def subreaper():
    """¿Este proceso adopta huérfanos ahora? (``PR_GET_CHILD_SUBREAPER``)"""
    value = ctypes.c_int()
    assert ctypes.CDLL(None).prctl(37, ctypes.byref(value), 0, 0, 0) == 0
    return bool(value.value)


@linux_only
def test_a_program_that_does_not_exist_is_127_and_leaves_nothing_half_done(tmp_path):
    # En un hilo, con plazo: quien lanza no queda trabado, ni adoptando huérfanos después.
    outcomes = []
    runs = [[str(tmp_path / "no-existe")], [sys.executable, "-c", "print('sigo')"]]
    launch_all = lambda: outcomes.extend(  # noqa: E731
        containment.run_contained(args, cwd=tmp_path, env=dict(os.environ), timeout=60) for args in runs
    )
    worker = threading.Thread(target=launch_all)
    worker.start()
    worker.join(120)
    assert not worker.is_alive()
    assert [(o.returncode, o.stdout) for o in outcomes] == [(127, ""), (0, "sigo\n")]
    assert "no se pudo lanzar" in outcomes[0].stderr
    assert not subreaper()


# —— La salida tiene tope ——

PRINTER = """
chunk = b"x" * 65536
while True:
    os.write(1, chunk)
    os.write(2, chunk)
"""


@linux_only
def test_an_endless_printer_is_cut_at_the_cap_and_stops_the_suite_in_one_line(tmp_path):
    code, out, err, rss = conformidad(hostile(tmp_path, PRINTER), "--solo", "puntos")
    assert code == 1
    assert err.splitlines() == [
        processes.stop_line("overflow", f"en {processes.HANG_LIMIT} corridas seguidas")
    ]
    assert rss is not None and rss < 200, f"la suite llegó a {rss} MiB"
    assert "comprobaciones:" not in out  # se detuvo: no hay resumen de filas que no corrieron


def test_a_run_past_the_cap_keeps_the_cap_and_says_so():
    printer = "import sys\nwhile True: sys.stdout.write('y' * 4096)"
    outcome = containment.run_contained(
        [sys.executable, "-c", printer], cwd=os.getcwd(), env=dict(os.environ), timeout=120, cap=1 << 20
    )
    assert outcome.ended == "overflow" and not outcome.finished
    kept, _, note = outcome.stdout.partition("\n[conformidad]")
    assert kept == "y" * (1 << 20) and "se descartó el resto" in note


# —— Un agente que se cuelga detiene la suite ——


def test_hanging_runs_stop_the_suite_within_three_minutes_by_arithmetic():
    # Con el plazo de siempre, lo más que espera la suite a un agente que se cuelga: una importación
    # previa que no termina (y la suite acaba ahí), o HANG_TOTAL corridas; con margen para las demás filas.
    assert processes.HANG_LIMIT <= processes.HANG_TOTAL
    assert processes.HANG_TOTAL * processes._timeout(None) <= 150


@pytest.mark.slow
def test_a_hanging_agent_stops_the_suite_with_one_line(tmp_path):
    agent = hostile(tmp_path, "import time\ntime.sleep(3600)")
    # Un plazo corto para la prueba (ninguna corrida de este agente termina: no hay carrera con la carga
    # de la máquina); el de siempre lo cubre la prueba de arriba.
    code, out, err, _ = conformidad(agent, env={"CONFORMANCE_TIMEOUT": "1"})
    assert code == 1 and len(err.splitlines()) == 1, err
    stop = "La suite se detiene: el agente no terminó en 1 s en 2 corridas seguidas, y cada fila"
    assert err.startswith(stop) and "comprobaciones:" not in out


RESUME_HANGS = f"""
if "--resume" in sys.argv:
    import time
    time.sleep(3600)
{RUN_REFERENCE}
"""


@pytest.mark.slow
def test_an_agent_that_hangs_only_on_resume_stops_the_suite_too(tmp_path):
    # Entre dos --resume colgados corre una caída que sí termina: no hay dos seguidas, pero sí tres.
    code, out, err, _ = conformidad(
        hostile(tmp_path, RESUME_HANGS), "--solo", "caidas", env={"CONFORMANCE_TIMEOUT": "4"}
    )
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith(
        f"La suite se detiene: el agente no terminó en 4 s en {processes.HANG_TOTAL} corridas,"
    )


@linux_only
def test_an_agent_that_reads_its_standard_input_gets_end_of_file_and_does_not_hang(tmp_path):
    agent = hostile(tmp_path, f"sys.stdin.read()\n{RUN_REFERENCE}")
    code, out, err, _ = conformidad(agent, "--solo", "terminal")
    assert code == 0, out + err
    assert "no terminó" not in out + err


# —— Un agente que no se puede importar: una línea con su número, y ninguna fila ——


@pytest.mark.parametrize(
    ("top", "line", "words"),
    [
        ("x = 1\ndef save_checkpoint(cp:\n    pass\n", 3, "error de sintaxis"),
        ("x = 1\nif x:\npass\n", 4, "error de sangría"),
        ("x = 1\nimport json\nvalor = no_existe + 1\n", 4, "lanza NameError"),
        ("sys.exit(3)\n", 2, "sale al importarlo"),
    ],
    ids=["sintaxis", "sangria", "nombre", "sale"],
)
def test_an_agent_that_cannot_be_imported_is_one_spanish_line_with_its_line_number(
    tmp_path, top, line, words
):
    # La primera línea del archivo es «import os, subprocess, sys»: ``top`` empieza en la 2.
    agent = hostile(tmp_path, RUN_REFERENCE, top=top)
    code, out, err, _ = conformidad(agent)
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"agent.py, línea {line}: ") and words in err
    assert "Traceback" not in err and "no se corrió ninguna fila" in err


# —— Lo escrito o borrado fuera de la carpeta de trabajo se informa ——

WRITER = f"""
here = os.path.dirname(os.path.abspath(__file__))
for name in ("../vecino.txt", "../../arriba.txt", os.path.expanduser("~/.huella"), os.path.join(here, "huella.txt")):
    with open(name, "w") as f:
        f.write("x")
borrame = os.path.join(here, "borrame.txt")
if os.path.exists(borrame):
    os.remove(borrame)
{RUN_REFERENCE}
"""


def test_writes_and_deletions_outside_the_work_folder_are_reported(tmp_path):
    agent = hostile(tmp_path, WRITER)
    (tmp_path / "agente" / "borrame.txt").write_text("mío", encoding="utf-8")
    code, out, err, _ = conformidad(agent, "--solo", "terminal")
    assert code == 1, out + err
    section = out.partition("── fuera de la carpeta de trabajo ──")[2]
    for finding in (
        "creó huella.txt en la carpeta del agente",
        "borró borrame.txt en la carpeta del agente",
        "escribió ../vecino.txt (fuera de la carpeta de trabajo)",
        "escribió ../../arriba.txt (fuera de la carpeta de trabajo)",
        "escribió ~/.huella (en su HOME)",
    ):
        assert (
            f"✗  cada corrida del agente · se espera: nada escrito ni borrado fuera de su carpeta de trabajo · pasó: {finding}"
            in section
        ), section
    # Las dos filas de la pieza pasaron: lo que falla es solo lo de afuera.
    assert passed_rows(out.partition("── fuera")[0]) == 2


def test_an_honest_agent_has_no_outside_section(tmp_path):
    code, out, err, _ = conformidad(REFERENCE_AGENT, "--solo", "terminal")
    assert code == 0, out + err
    assert "fuera de la carpeta de trabajo" not in out


def test_the_command_line_wants_an_agent_or_a_command_but_not_both():
    for args in (
        [],
        [REFERENCE_AGENT, "--comando", "node agent.js"],
        ["--comando", ""],
        ["--comando", '"node'],
        ["--comando", "no-existe-este-programa agent.js"],
    ):
        code, out, err, _ = conformidad(*args)
        assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, (args, err)

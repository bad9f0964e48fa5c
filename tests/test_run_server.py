"""El servidor de corridas (``harness.runs.fork_server``): una corrida nacida de un fork es la misma que
``python archivo.py`` (salida, traza, código, señales) y está contenida igual: un descendiente que deja
el grupo y cierra sus pipes muere con ella, y una corrida que mata a su servidor no se lleva la suite.
Con socket con nombre (``relay``), el proceso lanzado sale como su corrida y, si muere, ella también."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from harness.runs import containment, fork_server

pytestmark = pytest.mark.skipif(not fork_server.available(), reason="hace falta Linux (fork, pidfd)")

PROGRAMS = {
    "argumentos y entorno": """
        import os, sys
        print(sys.argv[1:], __name__, os.path.basename(__file__), os.getcwd() == os.environ["DONDE"])
        print("a stderr", file=sys.stderr)
        sys.exit(3)
    """,
    "una excepción sin atrapar": """
        def f():
            raise ValueError("se rompió")
        f()
    """,
    "un error de sintaxis": "x = (\n",
    "sys.exit con un texto": "import sys; sys.exit('adiós')",
    "Ctrl-C sin atrapar": "print('hola'); raise KeyboardInterrupt",
    "atexit y un hilo": """
        import atexit, threading, time
        atexit.register(lambda: print("atexit"))
        threading.Thread(target=lambda: (time.sleep(0.05), print("hilo"))).start()
    """,
}


@pytest.fixture
def servers():
    pool = containment.Servers()
    yield pool
    pool.close()


def _run(path, tmp_path, servers=None):
    env = {**os.environ, "DONDE": str(tmp_path)}
    args = [sys.executable, str(path), "--resume"]
    return containment.run_contained(args, cwd=str(tmp_path), env=env, timeout=60, servers=servers)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_served_run_is_the_same_as_python_running_the_file(tmp_path, servers, name):
    path = tmp_path / "programa.py"
    path.write_text(textwrap.dedent(PROGRAMS[name]), encoding="utf-8")
    plain, served = _run(path, tmp_path), _run(path, tmp_path, servers)
    assert len(servers) == 1  # la segunda nació de un servidor
    assert served == plain
    assert plain.returncode != 0 or name == "atexit y un hilo"


ESCAPER = """
import os, sys, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()  # fuera del grupo de la corrida
    if os.fork() == 0:
        for fd in (0, 1, 2):  # sin los pipes de la corrida
            os.close(fd)
        os.write(w, f"{os.getpid()}\\n".encode())
        time.sleep(3600)  # sin exec: en /proc tiene el entorno del servidor
    os._exit(0)
os.close(w)
print(os.read(r, 64).decode().strip(), flush=True)
"""


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rpartition(")")[2].split()[0] not in "ZX"
    except OSError:
        return False


def test_a_forked_descendant_that_left_the_group_and_closed_its_pipes_dies_with_its_run(tmp_path, servers):
    path = tmp_path / "escapa.py"
    path.write_text(ESCAPER, encoding="utf-8")
    done = _run(path, tmp_path, servers)
    assert done.returncode == 0, done.stderr
    assert not _alive(int(done.stdout.split()[0]))


def test_a_run_that_kills_its_server_ends_and_the_next_run_gets_a_new_one(tmp_path, servers):
    path = tmp_path / "mata.py"
    path.write_text("import os, signal; os.kill(os.getppid(), signal.SIGKILL)\n", encoding="utf-8")
    killed = _run(path, tmp_path, servers)
    assert killed.ended == "exit" and killed.returncode == -9
    ok = tmp_path / "bien.py"
    ok.write_text("print('sigo')\n", encoding="utf-8")
    assert _run(ok, tmp_path, servers).stdout == "sigo\n"
    assert len(servers) == 2


def test_a_server_dead_but_not_yet_reaped_is_replaced_not_reported_as_127(tmp_path, servers, monkeypatch):
    """La ventana de la carrera: el servidor ya murió (su socket cerró) pero su proceso todavía no se
    recogió, así que ``poll`` dice que vive. La corrida siguiente nace de uno nuevo."""
    ok = tmp_path / "bien.py"
    ok.write_text("print('sigo')\n", encoding="utf-8")
    assert _run(ok, tmp_path, servers).stdout == "sigo\n"
    dead = servers.get({**os.environ, "DONDE": str(tmp_path)})
    os.kill(dead.process.pid, signal.SIGKILL)
    os.waitid(os.P_PID, dead.process.pid, os.WEXITED | os.WNOWAIT)  # muerto, sin recoger
    monkeypatch.setattr(dead.process, "poll", lambda: None)
    again = _run(ok, tmp_path, servers)
    assert (again.returncode, again.stdout) == (0, "sigo\n"), again.stderr
    assert len(servers) == 2


def test_only_this_interpreter_running_a_file_or_a_module_is_served():
    assert fork_server.program([sys.executable, __file__, "-x"]) == [__file__, "-x"]
    assert fork_server.program([sys.executable, "-m", "json.tool"]) == ["-m", "json.tool"]
    assert fork_server.program(["strace", sys.executable, __file__]) is None
    assert fork_server.program([sys.executable, "-c", "pass"]) is None
    assert fork_server.program(["node", "agent.js"]) is None


def test_what_the_harness_reads_on_import_comes_from_the_run_not_from_the_server(tmp_path, servers):
    path = tmp_path / "tope.py"
    path.write_text("from harness.base_loop import MAX_TURNS\nprint(MAX_TURNS)\n", encoding="utf-8")
    args = [sys.executable, str(path)]
    for asked in ("", "2", "7"):
        env = {**os.environ, "AGENT_MAX_TURNS": asked}
        done = containment.run_contained(args, cwd=str(tmp_path), env=env, timeout=60, servers=servers)
        plain = containment.run_contained(args, cwd=str(tmp_path), env=env, timeout=60)
        assert done == plain and done.stdout.strip() == (asked or "20")
    assert len(servers) == 3  # uno por valor: el módulo ya importado no miente


def test_a_preloaded_module_run_as_main_is_the_same_as_python_dash_m(tmp_path, servers):
    """``-m`` de un módulo que el servidor ya importó corre como ``__main__`` igual que con python (sin
    el aviso de runpy de un módulo ya importado)."""
    module = fork_server.PRELOAD[-1]
    args = [sys.executable, "-m", module]
    env = dict(os.environ)
    served = containment.run_contained(args, cwd=str(tmp_path), env=env, timeout=60, servers=servers)
    assert len(servers) == 1
    assert served == containment.run_contained(args, cwd=str(tmp_path), env=env, timeout=60)
    assert served.returncode == 0 and served.stderr == ""


def _spawn(server, program, cwd):
    """Una corrida de ``program`` sin entrada ni salida (sus 0, 1 y 2, /dev/null)."""
    fds = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
    return server.spawn([str(program)], str(cwd), {}, fds)


def test_kill_from_whoever_asked_ends_the_run_with_sigkill(tmp_path):
    sleeps = tmp_path / "duerme.py"
    sleeps.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    server = fork_server.Server(dict(os.environ), preload=())
    try:
        run = _spawn(server, sleeps, tmp_path)
        run.kill()
        assert run.wait(timeout=30) == -signal.SIGKILL
    finally:
        server.close()


# Lo que hace el proceso que lanza una persona: pasa su corrida al servidor; sin él, corre aquí.
RELAYS = """
import sys
from harness.runs import fork_server
fork_server.relay(sys.argv[1], sys.argv[2:])
print("sin servidor")
"""
PROGRAM = """
import os, sys, time
print(os.getpid(), flush=True)
if sys.argv[1:] == ["espera"]:
    time.sleep(60)
sys.exit(int(sys.argv[1]) if sys.argv[1:] != ["espera"] else 0)
"""


@pytest.fixture
def listening(tmp_path):
    """(ruta del socket, lanzar): un servidor que escucha y un proceso que le pasa su corrida."""
    path = str(tmp_path / "s")
    server = fork_server.Server(dict(os.environ), preload=(), listen=path)
    deadline = time.monotonic() + 30
    while not os.path.exists(path):
        assert server.process.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    relays, program = tmp_path / "lanza.py", tmp_path / "programa.py"
    relays.write_text(RELAYS, encoding="utf-8")
    program.write_text(PROGRAM, encoding="utf-8")

    def start(*args, socket_path=path):
        command = [sys.executable, str(relays), socket_path, str(program), *args]
        return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)

    yield path, start
    server.close()


def test_a_relayed_run_is_a_fork_of_the_server_and_its_launcher_exits_like_it(listening):
    _, start = listening
    launched = start("3")
    pid = int(launched.stdout.readline())
    assert launched.wait(timeout=30) == 3 and launched.stdout.read() == ""
    assert pid != launched.pid


def test_a_signal_to_the_launcher_reaches_its_run_and_the_launcher_dies_of_it(listening):
    _, start = listening
    launched = start("espera")
    int(launched.stdout.readline())
    launched.send_signal(signal.SIGTERM)
    assert launched.wait(timeout=30) == -signal.SIGTERM


def test_when_the_launcher_dies_its_run_dies_too(listening):
    _, start = listening
    launched = start("espera")
    pid = int(launched.stdout.readline())
    launched.kill()
    launched.wait(timeout=30)
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(pid)


def test_without_a_server_the_launcher_runs_the_program_itself(listening, tmp_path):
    _, start = listening
    launched = start("0", socket_path=str(tmp_path / "no-hay"))
    assert launched.wait(timeout=30) == 0
    assert launched.stdout.read() == "sin servidor\n"


@pytest.mark.parametrize("works", [True, False], ids=["prepara", "falla"])
def test_warm_up_runs_before_serving_and_its_failure_does_not_stop_the_server(tmp_path, works):
    source, copy, ends = tmp_path / "origen", tmp_path / "copia", tmp_path / "termina.py"
    ends.write_text("pass\n", encoding="utf-8")
    if works:
        source.write_text("x", encoding="utf-8")
    server = fork_server.Server(
        dict(os.environ), preload=(), warm_up=("shutil", "copyfile", str(source), str(copy))
    )
    try:
        assert _spawn(server, ends, tmp_path).wait(timeout=30) == 0
        assert copy.exists() == works  # antes de atender la primera corrida
    finally:
        server.close()

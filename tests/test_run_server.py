"""El servidor de corridas de la suite de conformidad (``harness.runs.fork_server``): una corrida nacida de un
fork es la misma que ``python archivo.py`` (salida, traza, código, señales) y está contenida igual: un
descendiente que deja el grupo y cierra sus pipes muere con ella, y una corrida que mata a su servidor
no se lleva la suite."""

import os
import sys
import textwrap

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

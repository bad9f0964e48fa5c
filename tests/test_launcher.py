"""El lanzador (``harness.runs.launcher``) con procesos de verdad: lo que promete cada opción.

Cada prueba mira el sistema, no al lanzador: si el proceso que se escapó sigue en ``/proc``, cuántos
bytes llegaron, con qué código salió, qué quedó en disco. Las esperas son por eventos (un pid impreso,
un proceso que termina); los plazos son solo la red de seguridad.
"""

import os
import signal
import sys
import textwrap

import pytest

from harness.contract import CHECKPOINT_FILE, EXIT_KILLED, TMP_SUFFIX, crash_message, kill_line
from harness.runs.launcher import (
    AtSyscall,
    RunTimeoutError,
    agent_command,
    agent_run,
    launch,
    start,
)
from harness.runs.strace_log import STRACE
from maintainer.paths import LESSON_AGENT

linux_only = pytest.mark.skipif(not os.path.isdir("/proc"), reason="busca los procesos en /proc (Linux)")

# Un proceso que se separa del todo: fork, setsid, otro fork; el nieto imprime su pid, cierra su
# salida (ya no tiene ningún pipe de la corrida) y se queda durmiendo. El proceso lanzado sale enseguida.
DOUBLE_FORK = textwrap.dedent(
    """
    import os, time
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            for fd in (0, 1, 2, r, w):
                os.close(fd)
            time.sleep(3600)
        os._exit(0)
    os.close(w)
    print(os.read(r, 32).decode(), flush=True)
    """
)
PRINTER = "import os\nwhile True:\n    os.write(1, b'y' * 4096)\n    os.write(2, b'z' * 4096)"


def alive(pid):
    """¿Sigue vivo ``pid``? (Un zombi ya murió: solo falta que alguien lo recoja.)"""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def python(code):
    return [sys.executable, "-c", code]


@linux_only
def test_a_double_forked_run_in_its_own_session_leaves_nothing_behind(tmp_path):
    outcome = launch(python(DOUBLE_FORK), cwd=tmp_path, orphans="kill")
    assert outcome.ended == "exit" and outcome.returncode == 0, outcome.stderr
    assert not alive(int(outcome.stdout))


@linux_only
def test_keeping_orphans_leaves_the_double_forked_process_running(tmp_path):
    # La otra cara: sin «kill», el nieto sigue (es lo que necesita pg_ctl start). Así la prueba de
    # arriba ve de verdad la diferencia.
    outcome = launch(python(DOUBLE_FORK), cwd=tmp_path, orphans="keep")
    pid = int(outcome.stdout)
    try:
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("orphans", ["kill", "keep"])
def test_the_output_cap_holds_on_both_streams_and_stops_the_run(tmp_path, orphans):
    cap = 1 << 20
    outcome = launch(python(PRINTER), cwd=tmp_path, output_cap=cap, orphans=orphans, timeout=120)
    # El proceso no termina nunca: volver con «overflow» es que el tope lo detuvo.
    assert outcome.ended == "overflow"
    kept = [text.partition("\n")[0] for text in (outcome.stdout, outcome.stderr)]
    assert set(kept[0]) == {"y"} and set(kept[1]) == {"z"}
    assert max(len(k) for k in kept) == cap  # uno llegó al tope (y se cortó); ninguno lo pasó


@linux_only
def test_a_run_past_its_timeout_is_stopped_with_everything_it_started(tmp_path):
    sleeper = "import subprocess, sys, time\n"
    sleeper += "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'])\n"
    sleeper += "print(kid.pid, flush=True)\ntime.sleep(3600)"
    outcome = launch(python(sleeper), cwd=tmp_path, timeout=2)
    assert outcome.ended == "timeout" and outcome.returncode == -1
    assert not alive(int(outcome.stdout))


@pytest.mark.parametrize("label", [None, "after-tool:2"])
def test_a_kill_at_a_label_ends_with_137_at_that_label(tmp_path, label):
    args, env = agent_command(tmp_path, agent=LESSON_AGENT)
    outcome = launch(args, cwd=tmp_path, env=env, kill_at=label)
    if label is None:  # el mismo agente, sin caída pedida, termina la tarea
        assert outcome.returncode == 0, outcome.stderr
        return
    assert outcome.returncode == EXIT_KILLED, outcome.stderr
    assert outcome.stdout.splitlines()[-1] == kill_line(crash_message(label))


@pytest.mark.skipif(not STRACE, reason="necesita strace")
def test_a_kill_at_a_syscall_dies_before_that_call_happens(tmp_path):
    args, env = agent_command(tmp_path, agent=LESSON_AGENT)
    # El primer rename deja las notas de ventas; el segundo es el del punto A: muere con su temporal
    # escrito y sin checkpoint.json.
    outcome = launch(args, cwd=tmp_path, env=env, kill_at=AtSyscall("?rename,renameat,renameat2", when=2))
    assert outcome.returncode == -signal.SIGKILL, outcome.stderr
    assert (tmp_path / (CHECKPOINT_FILE + TMP_SUFFIX)).exists()
    assert not (tmp_path / CHECKPOINT_FILE).exists()


def test_an_agent_run_past_its_timeout_says_so(tmp_path):
    slow = python("print('empecé', flush=True)\nimport time\ntime.sleep(3600)")
    with pytest.raises(RunTimeoutError) as caught:
        agent_run(slow, cwd=tmp_path, env=None, timeout=1)
    assert caught.value.stdout == "empecé\n"


@pytest.mark.skipif(os.name != "posix", reason="señales POSIX")
@pytest.mark.parametrize("reset", [True, False])
def test_a_started_process_gets_default_signals_only_when_asked(tmp_path, reset):
    # Una shell que lanza en segundo plano deja SIGINT ignorado; un agente así no se detendría con Ctrl-C.
    show = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc = start(python(show), cwd=tmp_path, default_signals=reset)
    finally:
        signal.signal(signal.SIGINT, before)
    out, _ = proc.communicate(timeout=60)
    assert out.strip() == str(not reset)


# Escribe en stdout y stderr alternando, sin vaciar nada a mano: si el orden se leyera de los dos pipes,
# llegaría stdout entero primero (con búfer de bloque) o mezclado según cuál leyó antes el lanzador.
ALTERNATING = (
    "import sys\nfor i in range(40):\n    print(f'out {i}')\n    print(f'err {i}', file=sys.stderr)\n"
)


def test_an_ordered_run_shows_its_writes_in_the_order_they_happened(tmp_path):
    run = agent_run(
        python(ALTERNATING + "print('fin «ñ»')\nraise SystemExit('adiós')"),
        cwd=tmp_path,
        env=None,
        ordered=True,
    )
    out = [f"out {i}\n" for i in range(40)] + ["fin «ñ»\n"]
    err = [f"err {i}\n" for i in range(40)] + ["adiós\n"]
    assert run.stdout == "".join(out) and run.stderr == "".join(err)  # las dos salidas, aparte
    both = [line for pair in zip(out[:40], err[:40], strict=True) for line in pair]
    assert run.written == "".join([*both, out[40], err[40]])
    assert run.as_terminal() == run.written + "EXIT=1\n"


def test_an_unordered_run_shows_stdout_then_stderr(tmp_path):
    run = agent_run(python(ALTERNATING), cwd=tmp_path, env=None)
    assert run.written is None
    assert run.as_terminal() == run.stdout + run.stderr


def test_an_ordered_run_does_not_pass_the_recording_to_its_children(tmp_path):
    # Un hijo del agente tiene otros pipes: si heredara la anotación, mentiría sobre los de la corrida.
    show = "import os, sys; print(os.environ.get('HARNESS_WRITE_ORDER'), os.environ.get('PYTHONPATH'), sys.path[1:2])"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = agent_run(python(show), cwd=tmp_path, env=env, ordered=True)
    assert run.stdout == f"None {tmp_path} {[str(tmp_path)]}\n", run.stderr
    assert run.written == run.stdout


def test_a_crash_at_a_label_keeps_the_order_up_to_the_kill_line(tmp_path):
    label = "after-effect-write:1"
    args, env = agent_command(tmp_path, agent=LESSON_AGENT, crash_after=label)
    run = agent_run(args, cwd=tmp_path, env=env, ordered=True)
    assert run.returncode == EXIT_KILLED, run.stderr
    assert run.written.splitlines()[-1] == kill_line(crash_message(label))
    assert sorted(run.written.splitlines()) == sorted((run.stdout + run.stderr).splitlines())


def test_a_write_that_skips_sys_stdout_goes_after_what_was_recorded(tmp_path):
    # os.write no pasa por sys.stdout: no queda anotada, y se muestra al final en vez de perderse.
    code = "import os, sys\nos.write(1, b'directo\\n')\nprint('anotado', file=sys.stderr)"
    run = agent_run(python(code), cwd=tmp_path, env=None, ordered=True)
    assert run.stdout == "directo\n" and run.stderr == "anotado\n"
    assert run.written == "anotado\ndirecto\n"

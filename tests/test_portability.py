"""El curso en Linux, macOS y Windows: el candado sin ``fcntl``, nombres que Windows acepta y los dos
comandos del README en una máquina nueva.

En Linux no hay Windows a mano; se prueba lo que Windows le cambia al curso:
- sin ``fcntl`` (``maintainer/portability/sitecustomize.py`` lo bloquea en cada proceso), el candado
  del directorio de trabajo sigue rechazando a un segundo agente con el mismo mensaje y se suelta
  cuando su dueño muere;
- ningún archivo o carpeta que crean los notebooks (las fuentes del instructor incluidas) ni sus
  comprobaciones tiene un nombre que Windows rechaza;
- los comandos del README, copiados tal cual de README.md, funcionan con el Python del sistema.

Las dos pruebas largas (ejecutar cada notebook otra vez, instalar desde PyPI en un entorno nuevo) corren
con ``COURSE_PORTABILITY=1``, en la pasada de portabilidad de ``.ci/run``.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from course_files import digest

from harness.contract import LOCK_FILE
from harness.defenses import lock
from harness.defenses.lock import WorkdirBusy, workdir_lock
from maintainer.jupyter_browser import free_port
from maintainer.paths import ROOT
from solutions.grading.notebook_run import cleared, execute

REPO = Path(ROOT)
NO_FCNTL = {"PYTHONPATH": os.fspath(REPO / "maintainer" / "portability")}
LONG = pytest.mark.skipif(
    not os.environ.get("COURSE_PORTABILITY"),
    reason="larga (ejecuta notebooks o instala desde PyPI): corre con COURSE_PORTABILITY=1, como en .ci/run",
)
NO_SIGKILL = pytest.mark.skipif(
    sys.platform == "win32", reason="Windows no tiene SIGKILL (TerminateProcess no es una señal)"
)

# Un proceso que toma el candado del directorio, avisa y lo mantiene hasta que se le cierra stdin.
HOLDER = (
    "import sys\n"
    "from harness.defenses.lock import workdir_lock\n"
    "with workdir_lock(sys.argv[1]):\n"
    "    print('tomado', flush=True)\n"
    "    sys.stdin.read()\n"
)
# Un segundo proceso que intenta tomarlo: imprime el mensaje con que se lo rechazan.
TAKER = (
    "import sys\n"
    "from harness.defenses.lock import WorkdirBusy, workdir_lock\n"
    "try:\n"
    "    with workdir_lock(sys.argv[1]):\n"
    "        print('tomado')\n"
    "except WorkdirBusy as err:\n"
    "    print(err)\n"
)


def python(code, *args, env=None, **popen):
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [full_env.get("PYTHONPATH"), ROOT]))
    return [sys.executable, "-c", code, *map(os.fspath, args)], full_env


def start_holder(workdir, env=None):
    args, full_env = python(HOLDER, workdir, env=env)
    holder = subprocess.Popen(args, env=full_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "tomado\n"
    return holder


def try_to_take(workdir, env=None):
    args, full_env = python(TAKER, workdir, env=env)
    return subprocess.run(args, env=full_env, capture_output=True, text=True, check=True).stdout


@pytest.fixture(params=["con fcntl", "sin fcntl"])
def lock_env(request):
    if request.param == "con fcntl" and lock.fcntl is None:
        pytest.skip("este Python no tiene fcntl (Windows, o la pasada de portabilidad)")
    return {} if request.param == "con fcntl" else NO_FCNTL


def test_the_blocker_reaches_child_processes():
    args, env = python("import fcntl", env=NO_FCNTL)
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "No module named 'fcntl'" in done.stderr


def test_a_second_holder_is_refused_with_the_same_message_with_or_without_fcntl(tmp_path, lock_env):
    holder = start_holder(tmp_path, env=lock_env)
    try:
        refused = try_to_take(tmp_path, env=lock_env)
        expected = f"Otro proceso del agente ya está trabajando en {tmp_path}; no se arranca un segundo"
        assert refused.startswith(expected) and refused.count("\n") == 1
        # Sin fcntl el candado vive en un archivo; con fcntl, en el directorio mismo.
        assert sorted(os.listdir(tmp_path)) == ([LOCK_FILE] if lock_env else [])
    finally:
        holder.communicate("")
    assert holder.returncode == 0
    assert try_to_take(tmp_path, env=lock_env) == "tomado\n"
    assert os.listdir(tmp_path) == []  # quien lo suelta borra el archivo


@NO_SIGKILL
def test_sigkill_frees_the_lock_with_or_without_fcntl(tmp_path, lock_env):
    holder = start_holder(tmp_path, env=lock_env)
    holder.send_signal(signal.SIGKILL)
    assert holder.wait() == -signal.SIGKILL
    holder.stdout.close()
    before = digest(tmp_path)  # sin fcntl queda el archivo, sin candado
    assert try_to_take(tmp_path, env=lock_env) == "tomado\n"
    assert (sorted(before), os.listdir(tmp_path)) == (([LOCK_FILE] if lock_env else []), [])


def test_without_fcntl_one_process_cannot_take_it_twice(tmp_path, monkeypatch):
    # os.lockf es por proceso: sin el registro de lock.py, el segundo candado se concedería.
    monkeypatch.setattr(lock, "fcntl", None)
    with workdir_lock(tmp_path):
        with pytest.raises(WorkdirBusy):
            with workdir_lock(tmp_path):
                pass
        assert (tmp_path / LOCK_FILE).exists()  # el primero sigue tomado y su archivo en su lugar
    assert not (tmp_path / LOCK_FILE).exists()
    with workdir_lock(tmp_path):
        pass


def test_without_fcntl_a_lock_file_removed_under_the_taker_is_not_a_lock(tmp_path, monkeypatch):
    """Quien suelta el candado borra el archivo: quien lo abrió justo antes no debe quedarse con un
    candado sobre un archivo que ya no está (otro crearía uno nuevo y serían dos dueños)."""
    monkeypatch.setattr(lock, "fcntl", None)
    real_open, opened = os.open, []

    def open_then_lose_the_file(path, *args):
        fd = real_open(path, *args)
        if Path(path).name == LOCK_FILE:
            opened.append(path)
            if len(opened) == 1:
                os.remove(path)  # el que soltaba lo borra entre nuestro open y nuestro candado
        return fd

    monkeypatch.setattr(lock.os, "open", open_then_lose_the_file)
    with workdir_lock(tmp_path):
        # Se volvió a abrir, y el candado es sobre el archivo que está en el directorio.
        assert len(opened) == 2 and (tmp_path / LOCK_FILE).exists()
    assert not (tmp_path / LOCK_FILE).exists()


# ---------------------------------------------------------------------------------------------------
# Nombres que Windows rechaza

RESERVED = re.compile(r"(CON|PRN|AUX|NUL|COM[1-9¹²³]|LPT[1-9¹²³])(\..*)?", re.IGNORECASE)
FORBIDDEN_CHARS = set('<>:"|?*\\') | {chr(c) for c in range(32)}


def windows_refuses(name):
    """Por qué Windows no acepta ``name`` como nombre de archivo o carpeta, o None si lo acepta."""
    bad = sorted(FORBIDDEN_CHARS & set(name))
    if bad:
        return f"caracteres prohibidos {bad!r}"
    if name.endswith((".", " ")) and name not in (".", ".."):
        return "termina en punto o espacio"
    if RESERVED.fullmatch(name):
        return "nombre reservado de dispositivo"
    return None


@pytest.mark.parametrize(
    "name",
    ["script_fixed_after-tool:1", "a<b", 'a"b', "a|b", "a?b", "a*b", "a\tb", "x.", "x ", "CON", "nul.txt"]
    + ["Aux.tar.gz", "COM1", "lpt9.log", "COM¹", "a\\b"],
)
def test_names_windows_refuses_are_caught(name):
    assert windows_refuses(name)


@pytest.mark.parametrize(
    "name", ["script_fixed_after-tool-1", "checkpoint.json", ".agente.lock", "CONSOLE", "COM10", "nulo.txt"]
)
def test_names_windows_accepts_pass(name):
    assert windows_refuses(name) is None


NOTEBOOKS = sorted(
    [*REPO.glob("notebooks/*.ipynb"), *REPO.glob("solutions/grading/source/*/*.ipynb")],
    key=lambda p: p.relative_to(REPO),
)


@pytest.fixture(scope="module")
def copy_of_repo(tmp_path_factory):
    """Los archivos del repositorio (los que git sigue y los nuevos sin ignorar), en una carpeta aparte:
    los notebooks escriben su ``_trabajo`` ahí y no en el de quien trabaja en el repositorio."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    copy = tmp_path_factory.mktemp("copia") / "curso"
    for name in filter(None, listed.decode().split("\0")):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    return copy


def created_paths(log):
    """Las rutas que anotó ``COURSE_CREATED_PATHS`` (sitecustomize de la pasada de portabilidad)."""
    return {Path(line) for line in log.read_text(encoding="utf-8", errors="replace").splitlines()}


def refused_names(paths):
    """{ruta: motivo} de las rutas con algún componente que Windows rechaza."""
    return {
        os.fspath(path): reason
        for path in paths
        for part in path.parts[1:]
        if (reason := windows_refuses(part))
    }


def test_the_recorder_sees_what_a_child_process_creates(tmp_path):
    log = tmp_path / "rutas.txt"
    code = "import os, sys; os.makedirs(os.path.join(sys.argv[1], 'script_fixed_after-tool:1', 'x'))"
    args, env = python(code, tmp_path / "w", env={**NO_FCNTL, "COURSE_CREATED_PATHS": os.fspath(log)})
    subprocess.run(args, env=env, check=True)
    bad = tmp_path / "w" / "script_fixed_after-tool:1"
    assert created_paths(log) == {tmp_path / "w", bad, bad / "x"}
    assert set(refused_names(created_paths(log))) == {os.fspath(bad), os.fspath(bad / "x")}


@pytest.mark.slow
@LONG
def test_no_path_the_notebooks_create_has_a_name_windows_refuses(
    copy_of_repo, tmp_path, monkeypatch, nbval_paths
):
    """Cada notebook, de arriba abajo y sin fcntl, en un kernel que anota cada ruta que crea (y cada
    agente que lanza, otro proceso, también): ninguna lleva un nombre que Windows rechaza. Los que nbval
    ya corrió enteros en este proceso (la pasada de portabilidad; ``nbval_paths``, conftest.py de la raíz)
    no se ejecutan otra vez: se revisan las rutas que anotaron sus kernels."""
    ran = nbval_paths.ran() if nbval_paths else set()
    log = tmp_path / "rutas.txt"
    monkeypatch.setenv("COURSE_CREATED_PATHS", os.fspath(log))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([NO_FCNTL["PYTHONPATH"], os.fspath(copy_of_repo)]))
    monkeypatch.setenv("TMPDIR", os.fspath(tmp_path))  # las carpetas temporales de las comprobaciones
    failures = {}
    for notebook in [nb for nb in NOTEBOOKS if nb.relative_to(REPO).as_posix() not in ran]:
        copied = copy_of_repo / notebook.relative_to(REPO)
        # Las fuentes del instructor no tienen la lección al lado: usan el agente de referencia, como
        # al calificar (harness.notebook.exercise_feedback lee LESSON_AGENT).
        if copied.is_relative_to(copy_of_repo / "solutions"):
            monkeypatch.setenv("LESSON_AGENT", os.fspath(copy_of_repo / "solutions" / "agent.py"))
        else:
            monkeypatch.delenv("LESSON_AGENT", raising=False)
        try:
            execute(cleared(copied), copied.parent, timeout=300)
        except Exception as err:  # noqa: BLE001 (se informa al final, junto con los nombres)
            failures[os.fspath(notebook.relative_to(REPO))] = str(err).strip().splitlines()[-1:]
    created = created_paths(log) if log.exists() else set()
    if ran:
        created |= created_paths(Path(nbval_paths.log)) | set(Path(nbval_paths.tmp).rglob("*"))
        created |= set((REPO / "notebooks").rglob("*"))  # lo que nbval dejó en notebooks/_trabajo
    # Los agentes que lanzaron los notebooks anotaron lo suyo: la anotación llegó a otros procesos.
    assert any(path.name == "checkpoint.json" for path in created)
    created |= set(copy_of_repo.rglob("*")) | set(tmp_path.rglob("*"))
    assert (refused_names(created), failures) == ({}, {})


# ---------------------------------------------------------------------------------------------------
# Los comandos del README


def readme_commands(language):
    """Las líneas de comando del bloque ```language de la sección «Empezar» del README (sin comentarios)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Empezar", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, f"la sección «Empezar» debe tener un solo bloque ```{language}"
    return [line for line in blocks[0].splitlines() if line.strip() and not line.startswith("#")]


def steps(command, separator):
    return [step.strip() for step in command.split(separator)]


def test_the_readme_gives_two_commands_for_each_system_that_do_the_same():
    bash, powershell = readme_commands("bash"), readme_commands("powershell")
    assert len(bash) == len(powershell) == 2
    for unix, windows in zip(bash, powershell, strict=True):
        unix_steps, windows_steps = steps(unix, "&&"), steps(windows, ";")
        # Los mismos pasos: crear el entorno, activarlo, instalar, y el mismo último comando.
        assert unix_steps[0] == "python3 -m venv .venv" and "py -m venv .venv" in windows_steps
        assert unix_steps[1] == ". .venv/bin/activate" and ".venv\\Scripts\\Activate.ps1" in windows_steps
        assert unix_steps[2:] == windows_steps[-2:]
    # La raíz de JupyterLab es el repositorio (README y docs a mano), con la lección abierta; como root también.
    assert bash[0].endswith(
        "python -m jupyter lab --allow-root --notebook-dir=. notebooks/leccion_6_puntos_de_control.ipynb"
    )
    assert bash[1].endswith("python -m pytest")


@pytest.mark.slow
@LONG
@pytest.mark.skipif(
    not os.path.exists("/usr/bin/python3") or sys.platform == "win32",
    reason="hace falta el Python del sistema en /usr/bin/python3 (el comando de PowerShell no se corre aquí)",
)
def test_the_readme_commands_work_verbatim_with_the_system_python(copy_of_repo, tmp_path):
    """Comando 1 tal cual: JupyterLab arranca y sirve la lección; se lo apaga con SIGTERM. Comando 2
    tal cual hasta su pytest, que corre una parte de la suite (la suite entera es la corrida de CI)."""
    copy = copy_of_repo.parent / "limpia"
    shutil.copytree(copy_of_repo, copy)  # una copia sin el _trabajo de la otra prueba
    env = {
        "PATH": "/usr/bin:/bin",  # python3 es el del sistema, no uno de pyenv, conda o un venv
        "HOME": os.environ.get("HOME", os.fspath(tmp_path)),  # la caché de pip, si la hay
        "LANG": "C.UTF-8",
        "BROWSER": "true",  # que no intente abrir un navegador
        "JUPYTER_CONFIG_DIR": os.fspath(tmp_path / "config"),
        "JUPYTER_DATA_DIR": os.fspath(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": os.fspath(tmp_path / "runtime"),
        # Un puerto libre y no el 8888 de siempre: otro JupyterLab de la máquina (una prueba del
        # navegador, quien trabaja en el curso) no le gana el puerto entre que lo anuncia y se le habla.
        "JUPYTER_PORT": str(free_port()),
    }
    open_lesson, run_tests = readme_commands("bash")
    server_log = tmp_path / "jupyter.log"
    with open(server_log, "wb") as log:
        server = subprocess.Popen(
            ["bash", "-c", open_lesson], cwd=copy, env=env, stdout=log, stderr=log, start_new_session=True
        )
    try:
        root, base, token = wait_for_server(server, server_log)
        status = json.loads(fetch(f"{base}/api/status?token={token}"))
        # Sirve el repositorio entero, y la lección como notebook (lo que ve quien la abre).
        lesson = json.loads(
            fetch(f"{base}/api/contents/notebooks/leccion_6_puntos_de_control.ipynb?token={token}")
        )
        assert "started" in status and Path(root) == copy
        assert lesson["type"] == "notebook" and lesson["content"]["cells"]
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=120)
    install, pytest_step = run_tests.rsplit(" && ", 1)
    assert pytest_step == "python -m pytest"
    subprocess.run(["bash", "-c", install], cwd=copy, env=env, check=True, capture_output=True)
    tests = subprocess.run(
        ["bash", "-c", f". .venv/bin/activate && {pytest_step} tests/conformance/test_transcripts.py -q"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]


def wait_for_server(server, log, limit_s=900):
    """(carpeta que sirve, dirección, token) que JupyterLab escribe al arrancar. El límite solo corta
    un cuelgue: instalar desde PyPI tarda lo que tarde."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        match = re.search(
            r"local directory: (\S+)\n.*?(http://(?:localhost|127\.0\.0\.1):\d+)/lab\?token=(\w+)",
            log.read_text("utf-8"),
            re.DOTALL,
        )
        if match:
            return match.groups()
        if server.poll() is not None:
            raise AssertionError(
                f"el comando 1 terminó sin abrir JupyterLab:\n{log.read_text('utf-8')[-3000:]}"
            )
        time.sleep(1)  # espera a que aparezca la línea; no es una medida de tiempo
    raise AssertionError("JupyterLab no arrancó")


def fetch(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode("utf-8")

"""Entradas malas, con procesos reales: un mensaje claro en español, salida distinta de 0, y nada cambiado.

Cada caso estropea un archivo de un estado real (el punto A del turno 3, con write_report colgante),
corre ``--resume`` y exige: una sola línea en stderr que nombra el archivo y dice qué hacer, nada en
stdout, ningún traceback, y el directorio idéntico byte a byte (nombres, contenidos y permisos).
"""

import json
import os
import shutil
import subprocess
import tempfile

import pytest
from course_files import digest

import harness
from harness.tools import report_copies

DO_SOMETHING = ("Bórralo", "bórralo", "revísalo", "Revísalo", "revisa ese archivo")


@pytest.fixture(scope="module")
def crashed_state(tmp_path_factory, run):
    """Un directorio real tras morir en el punto A del turno 3 (y otro tras el punto B del turno 2)."""
    states = {}
    for label in ("after-save-a:3", "after-save-b:2", "after-effect-write:3"):
        workdir = tmp_path_factory.mktemp(label.replace(":", "-"))
        assert run(workdir, crash_after=label).killed
        states[label] = workdir
    return states


@pytest.fixture
def state(crashed_state, tmp_path):
    """Una copia del estado de after-save-a:3, para estropearla."""
    return copy_state(crashed_state["after-save-a:3"], tmp_path / "w")


def copy_state(source, target):
    shutil.copytree(source, target)
    return target


def refused(run, workdir, *, resume=True, names="checkpoint.json", env=None, hint=True):
    """Corre el agente y exige el rechazo limpio; devuelve la línea de error. ``hint=False`` para los
    textos de la lección, que se mantienen al pie de la letra aunque no digan qué hacer."""
    before = digest(workdir)
    done = run(workdir, resume=resume, env=env)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert names in done.stderr and (not hint or any(h in done.stderr for h in DO_SOMETHING)), done.stderr
    assert digest(workdir) == before, "un rechazo no puede cambiar ni borrar nada"
    return done.stderr.strip()


def edit_json(path, change):
    data = json.loads(path.read_bytes())
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


# —— checkpoint.json ——


@pytest.mark.parametrize("cut", [0, 1, 0.33, 0.5, -1])
def test_truncated_checkpoint(run, state, cut):
    path = state / "checkpoint.json"
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * cut) if isinstance(cut, float) else cut % len(raw)])
    assert refused(run, state).startswith("No se pudo parsear checkpoint.json")


def test_checkpoint_not_utf8(run, state):
    path = state / "checkpoint.json"
    path.write_bytes(path.read_text(encoding="utf-8").encode("latin-1"))  # las «ó» dejan de ser UTF-8
    assert refused(run, state).startswith("No se pudo parsear checkpoint.json")


def test_checkpoint_is_a_directory(run, state):
    (state / "checkpoint.json").unlink()
    (state / "checkpoint.json").mkdir()
    assert refused(run, state) == "No se puede leer checkpoint.json (es un directorio); revisa ese archivo."


SHAPES = {
    "sin task": (lambda cp: cp.pop("task"), "falta la clave «task»"),
    "sin messages": (lambda cp: cp.pop("messages"), "falta la clave «messages»"),
    "sin pendingToolUse": (lambda cp: cp.pop("pendingToolUse"), "falta la clave «pendingToolUse»"),
    "turns de texto": (lambda cp: cp.update(turns="3"), "«turns» debe ser un entero"),
    "turns booleano": (lambda cp: cp.update(turns=True), "«turns» debe ser un entero"),
    "tokens negativos": (lambda cp: cp.update(tokensUsed=-1), "«tokensUsed» debe ser un entero"),
    "messages objeto": (lambda cp: cp.update(messages={}), "«messages» debe ser una lista"),
    "mensaje sin role": (lambda cp: cp["messages"][0].pop("role"), "messages[0] no es un mensaje"),
    "sin tool_result": (lambda cp: cp["messages"].pop(), "emparejamiento tool_use/tool_result"),
    "herramienta desconocida": (
        lambda cp: cp["pendingToolUse"].update(name="borrar_todo"),
        'nombra una herramienta desconocida: "borrar_todo"',
    ),
    "input de texto": (lambda cp: cp["pendingToolUse"].update(input="x"), "«pendingToolUse.input»"),
    "id ya respondido": (lambda cp: cp["pendingToolUse"].update(id="toolu_01"), "repite el id toolu_01"),
    "turno completo ajeno": (
        lambda cp: cp.update(pendingAssistantContent=[{"type": "text", "text": "hola"}]),
        "«pendingAssistantContent» no trae exactamente",
    ),
}


@pytest.mark.parametrize("case", SHAPES)
def test_checkpoint_of_the_wrong_shape(run, state, case):
    change, problem = SHAPES[case]
    edit_json(state / "checkpoint.json", change)
    message = refused(run, state)
    assert message.startswith("checkpoint.json no tiene la forma de un punto de control: ")
    assert problem in message and message.endswith("bórralo y empieza de nuevo sin --resume.")


@pytest.mark.parametrize("version", [2, True, None, [1]])
def test_checkpoint_of_another_version(run, state, version):
    edit_json(state / "checkpoint.json", lambda cp: cp.update(version=version))
    assert refused(run, state, hint=False) == (
        f"checkpoint.json tiene version={json.dumps(version)}; este programa solo acepta version=1 y se niega "
        "a cargarlo."
    )


def test_checkpoint_that_is_a_list(run, state):
    (state / "checkpoint.json").write_text("[]", encoding="utf-8")
    assert refused(run, state, hint=False).startswith("checkpoint.json tiene version=null")


# —— effects.json (el registro) ——


LEDGERS = {
    "vacío": (b"", "No se pudo parsear effects.json"),
    "cortado": (b'{"toolu_01": {"name": "read_no', "No se pudo parsear effects.json"),
    "no UTF-8": (
        '{"toolu_01": {"name": "read_notes", "result": "ó", "at": 1}}'.encode("latin-1"),
        "No se pudo parsear",
    ),
    "una lista": (b"[]", "debe ser un objeto {tool_use_id: anotación} y es []"),  # parsea: dice qué le falta
    "anotación de texto": (b'{"toolu_01": "hecho"}', "la anotación de toolu_01 no es un objeto"),
    "herramienta desconocida": (
        b'{"toolu_01": {"name": "x", "result": "", "at": 1}}',
        "herramienta conocida",
    ),
    # El marcador de posición del ejercicio de Nivel 2: «hecho» sin resultado real.
    "result null": (b'{"toolu_03": {"name": "write_report", "result": null, "at": 1}}', "«result» de texto"),
    "sin at": (b'{"toolu_01": {"name": "read_notes", "result": "x"}}', "«at» entero"),
}


@pytest.mark.parametrize("case", LEDGERS)
def test_damaged_ledger(run, state, case):
    raw, expected = LEDGERS[case]
    (state / "effects.json").write_bytes(raw)
    message = refused(run, state, names="effects.json")
    assert expected in message and "sin --resume" in message


def test_damaged_ledger_is_refused_even_with_nothing_pending(run, crashed_state, tmp_path):
    """Con pendingToolUse null reconcile no lee el registro: igual se valida antes de escribir nada."""
    workdir = copy_state(crashed_state["after-save-b:2"], tmp_path / "w")
    (workdir / "effects.json").write_bytes(b'{"toolu_01": ')
    assert refused(run, workdir, names="effects.json").startswith("No se pudo parsear effects.json")


def test_ledger_is_a_directory(run, state):
    (state / "effects.json").unlink()
    (state / "effects.json").mkdir()
    assert (
        refused(run, state, names="effects.json")
        == "No se puede leer effects.json (es un directorio); revisa ese archivo."
    )


# —— archivos .tmp sobrantes: nunca se leen ——


def test_leftover_tmp_files_are_never_trusted_on_resume(run, crashed_state, tmp_path):
    workdir = copy_state(crashed_state["after-effect-write:3"], tmp_path / "w")
    (workdir / "checkpoint.json.tmp").write_bytes(b'{"version": 1, "turns": 9')
    (workdir / "effects.json.tmp").write_bytes(b"basura")
    done = run(workdir, resume=True)
    assert done.returncode == 0 and "acierto en el registro" in done.stdout
    assert report_copies(workdir / "report.txt") == 1


def test_a_tmp_file_is_not_promoted_when_the_checkpoint_is_missing(run, crashed_state, tmp_path):
    workdir = copy_state(crashed_state["after-save-a:3"], tmp_path / "w")
    os.replace(workdir / "checkpoint.json", workdir / "checkpoint.json.tmp")
    assert (
        refused(run, workdir, hint=False)
        == "No se encuentra checkpoint.json; no hay nada desde donde hacer --resume"
    )


def test_a_fresh_run_cleans_leftover_tmp_files(run, state):
    (state / "checkpoint.json.tmp").write_bytes(b"{")
    (state / "effects.json.tmp").write_bytes(b"{")
    assert run(state).returncode == 0
    assert sorted(os.listdir(state)) == ["checkpoint.json", "effects.json", "report.txt", "sales-notes.txt"]


# —— el directorio de trabajo ——


@pytest.mark.parametrize("kind", ["archivo", "inexistente"])
def test_workdir_that_is_a_file_or_missing(command, tmp_path, kind):
    target = tmp_path / "no-soy-un-directorio"
    if kind == "archivo":
        target.write_text("x", encoding="utf-8")
    args, env = command(tmp_path)
    env["AGENT_WORKDIR"] = os.fspath(target)
    done = subprocess.run(
        args, cwd=tmp_path, env=env, capture_output=True, text=True, encoding="utf-8", timeout=60
    )
    reason = "no es un directorio" if kind == "archivo" else "no existe"
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"No se puede usar {target} como directorio de trabajo ({reason}); indica en AGENT_WORKDIR un directorio "
        "que exista.\n"
    )


def unwritable_runs():
    """Maneras honestas de quitarle la escritura a root: un bind de solo lectura o otro usuario."""
    ways = {}
    if (
        shutil.which("unshare")
        and subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0
    ):
        ways["bind de solo lectura"] = lambda d: [
            "unshare",
            "--mount",
            "sh",
            "-c",
            'mount --bind -o ro "$0" "$0" && exec "$@"',
            d,
        ]
    if shutil.which("setpriv") and os.geteuid() == 0:
        ways["usuario nobody"] = lambda d: ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return ways


@pytest.mark.parametrize("resume", [False, True], ids=["nueva", "--resume"])
@pytest.mark.parametrize("way", ["bind de solo lectura", "usuario nobody"])
def test_workdir_not_writable(start, agent, crashed_state, resume, way):
    ways = unwritable_runs()
    if way not in ways:
        pytest.skip(
            f"{way}: no disponible en esta máquina (hace falta unshare con permisos, o setpriv como root)"
        )
    # Un directorio que nobody puede atravesar pero no escribir (el tmp de pytest es 700).
    workdir = tempfile.mkdtemp(prefix="solo-lectura-")
    # El agente, donde nobody pueda leerlo (el exportado del notebook vive en el tmp 700 de pytest).
    readable = tempfile.mkdtemp(prefix="agente-")
    try:
        shutil.copytree(crashed_state["after-save-a:3"], workdir, dirs_exist_ok=True)
        os.chmod(workdir, 0o755)
        os.chmod(readable, 0o755)
        copied = shutil.copy(agent, os.path.join(readable, "agent.py"))
        os.chmod(copied, 0o644)
        # Otro usuario no ve la instalación editable de root (el repositorio puede vivir en una carpeta
        # 700, como la de mktemp): el paquete va copiado junto al agente y se le indica con PYTHONPATH.
        shutil.copytree(
            os.path.dirname(harness.__file__),
            os.path.join(readable, "harness"),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        before = digest(workdir)
        proc = start(
            workdir,
            agent=copied,
            resume=resume,
            prefix=ways[way](workdir),
            env={"PYTHONPATH": readable},
        )
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 1 and stdout == "" and stderr.count("\n") == 1, (stdout, stderr)
        assert (
            stderr.startswith("No se puede escribir en el directorio de trabajo ")
            and "Traceback" not in stderr
        )
        assert digest(workdir) == before
    finally:
        shutil.rmtree(workdir)
        shutil.rmtree(readable)


# —— una escritura del registro que falla ——


@pytest.mark.needs_strace
def test_a_failing_ledger_write_still_returns_the_result(command, workdir):
    """Cada escritura del registro falla (strace hace fallar con ENOSPC cada apertura de effects.json.tmp,
    como un disco lleno): la lección avisa a una persona y le devuelve igual el resultado al modelo (sin
    is_error, que duplicaría el efecto)."""
    args, env = command(workdir, env={"SCRIPTED_MODEL_LOG": os.fspath(workdir / "model.jsonl")})
    inject = ["strace", "-f", "-o", os.devnull, "-P", "effects.json.tmp", "-e", "trace=openat"]
    inject += ["-e", "inject=openat:error=ENOSPC"]
    done = subprocess.run(
        [*inject, *args], cwd=workdir, env=env, capture_output=True, text=True, encoding="utf-8", timeout=120
    )
    assert done.returncode == 0 and done.stdout.endswith(
        "[done] Reporte escrito en report.txt, tarea completa.\n"
    )
    assert done.stderr.splitlines() == [
        f"[falló la escritura del registro] tool_use_id=toolu_0{n}: el efecto secundario ya ocurrió, riesgo de "
        "ejecución duplicada al reanudar, por favor revisa a mano"
        for n in (1, 2, 3)
    ]
    assert not (workdir / "effects.json").exists() and report_copies(workdir / "report.txt") == 1
    last = json.loads((workdir / "model.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    results = [
        b for m in last if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_result"
    ]
    assert len(results) == 3 and not any(b.get("is_error") for b in results)


# —— una escritura del punto de control que falla a mitad de corrida (disco lleno, por ejemplo) ——


def test_a_failing_checkpoint_write_is_one_line_and_keeps_the_last_checkpoint(run, state):
    """Un directorio llamado checkpoint.json.tmp hace fallar el punto B que rellena la reanudación
    (como un disco lleno): una línea clara, y el punto de control anterior intacto y reanudable."""
    (state / "checkpoint.json.tmp").mkdir()
    saved = (state / "checkpoint.json").read_bytes()
    done = run(state, resume=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert done.stderr.startswith("No se pudo escribir en checkpoint.json.tmp: es un directorio.")
    assert (state / "checkpoint.json").read_bytes() == saved
    (state / "checkpoint.json.tmp").rmdir()
    resumed = run(state, resume=True)
    assert resumed.returncode == 0 and report_copies(state / "report.txt") == 1

"""El aislamiento de cada entrega (``solutions/grading/sandbox.py``), probado desde adentro.

Quien califica suele ser root; un proceso aislado corre como uid 0. La prueba intenta, desde adentro,
lo que le daría la máquina entera: volver a montar con escritura, escribir en ``/proc/sys`` (con el
valor que ya tiene: si el aislamiento fallara, nada cambiaría), crear un dispositivo, recuperar
capacidades al ejecutar otro programa. Y comprueba que la entrega sí escribe donde debe.
"""

import json
import os
import socket
import subprocess
import sys

import pytest

from solutions.grading import sandbox

pytestmark = pytest.mark.needs_bwrap
LIMITS = (sandbox.MEMORY_BYTES, sandbox.FILE_BYTES, sandbox.TMP_BYTES)

ATTEMPTS = r"""
import json, os, subprocess, sys

def fails(action):
    try:
        action()
    except OSError as err:
        return type(err).__name__
    return None

def rewrite(path):
    with open(path, encoding="utf-8") as f:
        same = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(same)

def run(*command):
    return subprocess.run(command, capture_output=True, text=True)

mounts = [line.split()[1] for line in open("/proc/self/mounts")]
found = {
    "remount": {m: run("mount", "-o", "remount,rw,bind", m).returncode for m in ("/", *mounts)},
    "core_pattern": fails(lambda: rewrite("/proc/sys/kernel/core_pattern")),
    "hostname": fails(lambda: rewrite("/proc/sys/kernel/hostname")),
    "mknod": fails(lambda: os.mknod("/tmp/disco", 0o600 | 0o060000, os.makedev(8, 0))),
    "cap_after_exec": run("sh", "-c", "grep CapEff /proc/self/status").stdout.split()[1],
    "uid": os.getuid(),
}
def fill(path, total):
    with open(path, "wb") as f:
        for _ in range(total >> 20):
            f.write(bytes(1 << 20))

memory, file_bytes, tmp_bytes = (int(n) for n in sys.argv[1:])
try:
    bytearray(memory + (1 << 30))
    found["memory"] = None
except MemoryError:
    found["memory"] = "MemoryError"
found["big_file"] = fails(lambda: fill("grande.bin", file_bytes + (1 << 20)))
found["full_tmp"] = fails(lambda: [fill(f"/tmp/lleno_{n}", file_bytes - (1 << 20)) for n in range(3)])
os.remove("grande.bin")
for name in os.listdir("/tmp"):
    if name.startswith("lleno_"):
        os.remove(os.path.join("/tmp", name))
with open("propio.txt", "w") as f:
    f.write("sí")
with open("/tmp/propio.txt", "w") as f:
    f.write("sí")
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def attempts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("entrega")
    done = subprocess.run(
        [*sandbox.prefix(folder), sys.executable, "-c", ATTEMPTS, *map(str, LIMITS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return folder, json.loads(done.stdout)


def test_nothing_can_be_mounted_again_with_write_access(attempts):
    _, found = attempts
    assert len(found["remount"]) > 1
    assert all(code != 0 for code in found["remount"].values()), found["remount"]


@pytest.mark.parametrize("setting", ["core_pattern", "hostname"])
def test_whole_machine_settings_are_read_only(attempts, setting):
    """Como root sin capacidades, ``kernel.core_pattern`` le daría un programa que la máquina corre
    como root fuera del aislamiento."""
    _, found = attempts
    assert found[setting] is not None, found


def test_no_capability_survives_not_even_through_exec(attempts):
    _, found = attempts
    if os.getuid() == 0:
        assert found["uid"] == 0  # lo que hace falta cubrir: root dentro del aislamiento
    assert int(found["cap_after_exec"], 16) == 0
    assert found["mknod"] is not None


def test_a_submission_cannot_take_the_memory_or_the_disk_of_the_others(attempts):
    """Cada límite es un error dentro de la entrega: memoria por proceso, tamaño de cada archivo y su /tmp."""
    _, found = attempts
    assert found["memory"] == "MemoryError"
    assert found["big_file"] == "OSError"  # EFBIG: «File too large»
    assert found["full_tmp"] == "OSError"  # ENOSPC: su /tmp es chico y en memoria


def test_the_submission_still_writes_in_its_own_folder(attempts):
    folder, _ = attempts
    assert (folder / "propio.txt").read_text(encoding="utf-8") == "sí"


def test_disarm_leaves_only_plain_files_and_folders(tmp_path):
    """Lo que quien califica encuentra en la carpeta de una entrega, después de su kernel."""
    outside = tmp_path / "fuera"
    outside.mkdir()
    (outside / "agent.py").write_text("original")
    folder = tmp_path / "entrega"
    (folder / "_trabajo" / "nivel_2").mkdir(parents=True)
    (folder / "ejercicio.ipynb").write_text("{}")
    (folder / "_trabajo" / "nivel_2" / "effects.json").write_text("{}")
    (folder / "enlace.ipynb").symlink_to(outside / "agent.py")
    (folder / "_trabajo" / "carpeta_ajena").symlink_to(outside)
    (folder / "_trabajo" / "nivel_2" / "report.txt").symlink_to(outside / "agent.py")
    os.mkfifo(folder / "espera.ipynb")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(folder / "_trabajo" / "socket"))
    sandbox.disarm(folder)
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    assert left == [
        "_trabajo",
        "_trabajo/nivel_2",
        "_trabajo/nivel_2/effects.json",
        "ejercicio.ipynb",
    ]
    assert sorted(p.name for p in outside.iterdir()) == ["agent.py"]
    assert (outside / "agent.py").read_text() == "original"


def test_secrets_in_the_environment_do_not_reach_a_submission(tmp_path, monkeypatch):
    """Solo pasan las variables de Python, del idioma y del arnés: una clave o la URL de una base con su
    contraseña podrían terminar impresas en el notebook que vuelve como devolución."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secreto")
    monkeypatch.setenv("DBOS_SYSTEM_DATABASE_URL", "postgresql://curso:contraseña@localhost/curso")
    monkeypatch.setenv("AGENT_VARIANT", "solo-b")
    show = "import json, os; print(json.dumps(dict(os.environ)))"
    done = subprocess.run(
        [*sandbox.prefix(tmp_path), sys.executable, "-c", show],
        capture_output=True,
        text=True,
        env={**os.environ, "ORDER": "prod"},  # como las de cada corrida del Nivel 2
    )
    seen = json.loads(done.stdout)
    assert not {"ANTHROPIC_API_KEY", "DBOS_SYSTEM_DATABASE_URL"} & seen.keys()
    assert (seen["AGENT_VARIANT"], seen["ORDER"], seen["PATH"]) == ("solo-b", "prod", os.environ["PATH"])

"""Escrituras durables, comprobadas con strace: lo que el agente le pide al núcleo, no lo que dice el código.

Para cada archivo que se pone en su lugar con rename (checkpoint.json, effects.json, sales-notes.txt):
escribir el temporal → fsync del temporal → rename → fsync del directorio. Y el reporte, que es el efecto
secundario, llega a disco (fsync) antes de que el registro diga «ya está hecho».
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

STRACE = shutil.which("strace")
pytestmark = pytest.mark.needs_strace  # sin strace no se ve el orden de las llamadas
SYSCALLS = "openat,write,fsync,fdatasync,rename,renameat,renameat2,close"
LINE = re.compile(r"^(?:\d+\s+)?(\w+)\((.*)\)\s+=\s+(-?\d+)")
FD_PATH = re.compile(r"^\d+<([^>]*)>")
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def traced(cmd, log):
    """Corre ``cmd`` bajo strace (-f: también sus hijos; -y: la ruta de cada descriptor)."""
    return [STRACE, "-f", "-y", "-qq", "-e", f"trace={SYSCALLS}", "-o", os.fspath(log), *cmd]


def events(log, workdir):
    """(llamada, ruta) de cada llamada exitosa que toca un archivo del directorio de trabajo."""
    root = os.path.realpath(workdir)
    found = []
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m or int(m.group(3)) < 0:
                continue
            name, args = m.group(1), m.group(2)
            if name.startswith("rename"):
                src, dst = (os.path.join(root, q) for q in QUOTED.findall(args)[:2])
                found.append((name, (src, dst)))
            elif (fd := FD_PATH.match(args)) and root in (fd.group(1), os.path.dirname(fd.group(1))):
                found.append((name, fd.group(1)))
    return root, found


def durability_violations(log, workdir):
    """Cada rename de un ``.tmp`` sin fsync del temporal antes, o sin fsync del directorio después."""
    root, evs = events(log, workdir)
    problems, renames = [], []
    for i, (name, target) in enumerate(evs):
        if not name.startswith("rename"):
            continue
        src, dst = target
        renames.append(os.path.basename(dst))
        writes = [j for j in range(i) if evs[j] == ("write", src)]
        synced = writes and any(evs[j] in (("fsync", src), ("fdatasync", src)) for j in range(writes[-1], i))
        if not synced:
            problems.append(f"{os.path.basename(dst)}: rename sin fsync del temporal después de escribirlo")
        later = next(
            (j for j in range(i + 1, len(evs)) if evs[j][0] in ("write",) or evs[j][0].startswith("rename")),
            len(evs),
        )
        if ("fsync", root) not in evs[i + 1 : later]:
            problems.append(
                f"{os.path.basename(dst)}: rename sin fsync del directorio antes de seguir escribiendo"
            )
    return problems, renames, evs


def test_fresh_run_makes_every_rename_durable(start, workdir, tmp_path):
    log = tmp_path / "strace.log"
    proc = start(workdir, prefix=traced([], log))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    problems, renames, evs = durability_violations(log, workdir)
    assert problems == []
    assert renames.count("checkpoint.json") == 7  # puntos A y B de tres turnos, y la tarea terminada
    assert renames.count("effects.json") == 3 and renames.count("sales-notes.txt") == 1
    # El efecto secundario llega a disco antes de anotarse: fsync de report.txt antes de escribir el registro.
    report = os.path.join(os.path.realpath(workdir), "report.txt")
    ledger_tmp = os.path.join(os.path.realpath(workdir), "effects.json.tmp")
    # El reporte también va por temporal + rename: ni un SIGKILL ni un corte de luz lo dejan a medias.
    assert renames.count("report.txt") == 1 and ("write", report) not in evs
    written = evs.index(("write", report + ".tmp"))
    synced = evs.index(("fsync", report + ".tmp"))
    next_ledger = next(j for j in range(written, len(evs)) if evs[j] == ("write", ledger_tmp))
    assert written < synced < next_ledger


def test_the_checker_catches_a_rename_without_fsync(workdir, tmp_path):
    """La versión de la lección (solo rename) no pasa la revisión: la prueba de arriba puede fallar."""
    lesson_style = (
        "import os\n"
        "open('checkpoint.json.tmp', 'w').write('{}')\n"
        "os.replace('checkpoint.json.tmp', 'checkpoint.json')\n"
    )
    log = tmp_path / "strace.log"
    subprocess.run(traced([sys.executable, "-c", lesson_style], log), cwd=workdir, check=True)
    problems, renames, _ = durability_violations(log, workdir)
    assert renames == ["checkpoint.json"]
    assert len(problems) == 2 and all(p.startswith("checkpoint.json: rename sin fsync") for p in problems)

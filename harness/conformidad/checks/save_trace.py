"""Los guardados de una corrida de verdad, leídos de sus llamadas al sistema (strace): sirve para
cualquier lenguaje, porque no importa el agente, y ve lo que el código no dice (un rename que llega
antes que los datos, un fsync que falta).

Un guardado es una racha de llamadas sobre ``checkpoint.json`` o ``effects.json`` (o un archivo de la
carpeta cuyo nombre empieza como ellos: su temporal) y sobre la carpeta misma (el fsync del rename).
Termina cuando el archivo ya está en su lugar (un rename hacia él, o datos escritos en él) y no queda
abierto para escribir: la siguiente llamada que lo cambia empieza otro.
"""

import json
import os
from typing import NamedTuple

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE
from harness.runs.launcher import AtSyscall
from harness.runs.strace_log import PATH_CALLS, SAVE_TRACED, parse_log, paths_of, strace_prefix

from ..processes import run_prefixed

TARGETS = (CHECKPOINT_FILE, EFFECTS_FILE)
# Lo que no cambia lo que queda en disco tras un SIGKILL (la caché de páginas sobrevive al proceso):
# matar antes de una de estas deja lo mismo que matar antes de la siguiente llamada que sí cambia algo.
KEEPS_DISK = frozenset(("close", "fsync", "fdatasync"))
WRITES = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")
RENAMES = ("rename", "renameat", "renameat2")
WRITES_DATA = ("write", "pwrite64")
# Las copias dentro del núcleo (shutil.copyfile usa sendfile): el índice del descriptor al que escriben.
COPIES = {"sendfile": 0, "sendfile64": 0, "copy_file_range": 2}
POINT_A, POINT_B, REFILL, LEDGER = "punto A", "punto B", "punto B rellenado", "registro"


class Save(NamedTuple):
    target: str  # CHECKPOINT_FILE o EFFECTS_FILE
    kind: str  # POINT_A, POINT_B, REFILL, LEDGER, o el nombre del archivo si no se pudo leer
    calls: tuple  # índices en la grabación
    renamed: bool  # si terminó con un rename hacia el archivo


def record(ctx, w, log, **options):
    """(corrida, llamadas): el agente en ``w`` con strace grabando ``SAVE_TRACED`` en ``log``."""
    done = run_prefixed(ctx, w, strace_prefix(log, ["-e", f"trace={SAVE_TRACED}"]), **options)
    return done, parse_log(log)


def _target(path, w):
    if os.path.dirname(path) != w:
        return None
    name = os.path.basename(path)
    return next((t for t in TARGETS if name.startswith(t.split(".")[0])), None)


def _key(call, w):
    """El archivo del agente que toca ``call``, «dir» si solo toca la carpeta, o None."""
    paths = paths_of(call, w)
    return next((t for p in paths if (t := _target(p, w))), "dir" if w in paths else None)


def changes_disk(call):
    """¿Puede ``call`` cambiar lo que un SIGKILL deja en disco? (Una apertura solo para leer, no.)"""
    if call.name in KEEPS_DISK:
        return False
    if call.name in ("openat", "open"):
        return any(f in str(call.args[-2 if call.name == "openat" else 1]) for f in WRITES)
    return True


def _data(call):
    return call.args[1] if len(call.args) > 1 and isinstance(call.args[1], bytes) else b""


def _copied_to(call):
    """La ruta a la que escribe una copia del núcleo (``COPIES``), o None."""
    arg = call.args[COPIES[call.name]] if len(call.args) > COPIES[call.name] else None
    return arg[1] if isinstance(arg, tuple) else None


def copies(calls, save):
    """¿Pone ``save`` sus datos en el archivo copiándolos (shutil.copyfile) en vez de con un rename?"""
    return any(calls[i].name in COPIES for i in save.calls)


def _fd_path(call):
    return call.args[0][1] if call.args and isinstance(call.args[0], tuple) else None


class _Open:
    """Un guardado que se está leyendo: sus llamadas, los descriptores de escritura aún abiertos y
    si el archivo ya quedó en su lugar."""

    def __init__(self, target):
        self.target, self.calls, self.fds, self.placed, self.renamed, self.data = (
            target,
            [],
            set(),
            False,
            False,
            b"",
        )

    @property
    def done(self):
        return self.placed and not self.fds

    def add(self, i, call, w, elsewhere):
        """Suma ``call``; ``elsewhere``, lo escrito hasta ahora en otros archivos (un temporal con otro
        nombre, o en otra carpeta, trae al rename los datos que lo hacen un punto A o un punto B)."""
        self.calls.append(i)
        final = os.path.join(w, self.target)
        if call.name in ("openat", "open", "creat") and call.result >= 0 and changes_disk(call):
            self.fds.add(str(call.result))
        elif call.name == "close" and call.args:
            self.fds.discard(call.args[0][0] if isinstance(call.args[0], tuple) else call.args[0])
        elif call.name in RENAMES and paths_of(call, w)[-1:] == [final]:
            self.placed = self.renamed = True
            self.data = self.data or elsewhere.get(paths_of(call, w)[0], b"")
        elif call.name in WRITES_DATA and _target(_fd_path(call) or "", w) == self.target:
            self.data += _data(call)
            self.placed |= _fd_path(call) == final
        elif call.name in COPIES and _copied_to(call) == final:
            self.placed = True  # los datos son los del temporal, ya sumados al escribirlo


def _kind(target, data):
    if target == EFFECTS_FILE:
        return LEDGER
    try:
        cp = json.loads(data)
    except ValueError:
        return target
    return POINT_A if isinstance(cp, dict) and cp.get("pendingToolUse") else POINT_B


def saves(calls, w):
    """Los guardados de una grabación hecha en la carpeta ``w``, en orden (solo los que cambian algo)."""
    w = os.path.realpath(w)
    found, current, elsewhere = [], None, {}
    for i, call in enumerate(calls):
        key = _key(call, w)
        if key is None and call.name in ("openat", "open", "creat") and changes_disk(call):
            elsewhere[call.returned_path] = b""  # un archivo que se abre para escribir empieza de nuevo
        if call.name in WRITES_DATA and key is None:
            elsewhere[_fd_path(call)] = elsewhere.get(_fd_path(call), b"") + _data(call)
        if key is None or (key == "dir" and current is None):
            continue
        starts = key != "dir" and (
            current is None or key != current.target or (current.done and changes_disk(call))
        )
        if starts:
            found.append(current)
            current = _Open(key)
        current.add(i, call, w, elsewhere)
    found.append(current)
    return [
        Save(s.target, _kind(s.target, s.data), tuple(s.calls), s.renamed)
        for s in found
        if s and any(changes_disk(calls[i]) for i in s.calls)
    ]


def watched(calls, found, w):
    """Los nombres, relativos a la carpeta ``w``, que tocan los guardados ``found``: sus archivos, sus
    temporales y la carpeta misma («.»)."""
    real, names = os.path.realpath(w), {"."}
    for save in found:
        for i in save.calls:
            names |= {
                os.path.relpath(p, real)
                for p in paths_of(calls[i], real)
                if p == real or os.path.dirname(p) == real
            }
    return frozenset(names)


def filter_paths(w, names):
    """Las rutas de ``strace -P`` para una corrida en ``w``: cada nombre como puede escribirlo el agente
    (relativo, o absoluto con la carpeta tal cual o resuelta), que strace compara texto a texto."""
    bases = {w, os.path.realpath(w)}
    return tuple(sorted({*names, *(os.path.normpath(os.path.join(b, n)) for b in bases for n in names)}))


def _filtered(call, paths):
    """¿Cuenta ``call`` con ``strace -P paths``? Si nombra una de esas rutas, o usa un descriptor abierto
    en una (AT_FDCWD no: strace no lo resuelve)."""
    for arg in call.args:
        if isinstance(arg, tuple) and arg[0] != "AT_FDCWD" and arg[1] in paths:
            return True
        if isinstance(arg, bytes) and call.name in PATH_CALLS and arg.decode("utf-8", "replace") in paths:
            return True
    return False


def kill_at(calls, i, names, recorded_in, run_in):
    """El ``AtSyscall`` que mata una corrida en ``run_in`` en el mismo estado que dejaría la grabación
    (hecha en ``recorded_in``) muerta justo antes de su llamada ``i``: antes de la primera llamada sobre
    ``names`` desde ``i`` (las de en medio no tocan esos archivos), contando solo las llamadas sobre
    ``names``, así que la n-ésima es la misma en cada corrida. None si no queda ninguna: la corrida
    entera deja lo mismo que la grabación."""
    paths = frozenset(filter_paths(recorded_in, names))
    j = next((k for k in range(i, len(calls)) if _filtered(calls[k], paths)), None)
    if j is None:
        return None
    name = calls[j].name
    when = sum(c.name == name and _filtered(c, paths) for c in calls[: j + 1])
    return AtSyscall(name, when, filter_paths(run_in, names))

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
from harness.runs.strace_log import SAVE_TRACED, parse_log, paths_of, strace_prefix

from ..processes import run_prefixed

TARGETS = (CHECKPOINT_FILE, EFFECTS_FILE)
# Lo que no cambia lo que queda en disco tras un SIGKILL (la caché de páginas sobrevive al proceso):
# matar antes de una de estas deja lo mismo que matar antes de la siguiente llamada que sí cambia algo.
KEEPS_DISK = frozenset(("close", "fsync", "fdatasync"))
WRITES = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")
RENAMES = ("rename", "renameat", "renameat2")
WRITES_DATA = ("write", "pwrite64")
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


def kill_at(calls, i):
    """El ``AtSyscall`` que mata la corrida justo antes de la llamada ``i`` de la grabación (la
    ``n``-ésima con ese nombre)."""
    name = calls[i].name
    return AtSyscall(name, sum(c.name == name for c in calls[: i + 1]))

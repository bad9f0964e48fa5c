"""Modelo de corte de luz al estilo de ALICE: qué puede encontrar el agente en disco al volver la luz.

Se graban con strace las llamadas de una corrida sobre el directorio de trabajo y se convierten en
operaciones: entradas del directorio (crear, rename, borrar) y datos de un archivo (write). Un corte
puede caer después de cualquier operación, y lo que queda en disco es, como POSIX promete y nada más:

- los datos de un archivo escritos antes de su último ``fsync``, y las entradas del directorio
  cambiadas antes de su último ``fsync`` del directorio: seguro;
- cualquier otra operación ya hecha: puede haber llegado o no, cada una por su cuenta (una entrada del
  directorio solo con las anteriores que tocan el mismo nombre); un write que no llegó entero puede
  dejar su parte, o solo el tamaño nuevo relleno de ceros.

No modela: un disco que miente sobre fsync, bits dañados, ni dos cortes seguidos (ALICE tampoco).

Lo usan «De la lección a producción» (el corte de luz de su primera sección), ``benchmarks/power_cut.py``
y sus pruebas; las llamadas las graba y lee ``harness.runs.strace_log``.
"""

import itertools
import os
from typing import NamedTuple

# Cómo puede quedar un write que no llegó con seguridad: no llegó, entero, cortado a la mitad (el
# archivo termina ahí), la mitad y el resto en ceros (el tamaño nuevo llegó, los datos no), solo ceros.
WRITE_FATES = ("none", "full", "prefix", "half", "zeros")
# Más operaciones en duda que esto a la vez se recorren solo por prefijos (el agente nunca llega).
MAX_DOUBTFUL = 10


class Op(NamedTuple):
    """Una operación: ``kind`` es link (nombre nuevo para un inodo), rename, unlink, write, fsync
    (de un inodo) o dirsync (del directorio)."""

    kind: str
    name: str | None = None
    other: str | None = None
    inode: int | None = None
    offset: int = 0
    data: bytes = b""


def operations(calls, workdir, initial):
    """Las operaciones de las llamadas ``calls`` (``harness.runs.strace_log.parse_log``) sobre ``workdir``,
    que al empezar tenía los archivos ``initial`` ({nombre: bytes}). Inodos: 0..n-1 los iniciales."""
    root = os.path.realpath(workdir)
    names = {name: i for i, name in enumerate(sorted(initial))}
    fds, ops, next_inode = {}, [], len(names)

    def local(arg):
        path = arg if isinstance(arg, str) else os.path.join(root, arg.decode("utf-8", "replace"))
        path = os.path.normpath(path)
        return os.path.basename(path) if os.path.dirname(path) == root else (None if path != root else ".")

    for call in calls:
        if call.result < 0:
            continue
        if call.name == "openat":
            name = local(call.args[1])
            if name == ".":
                fds[call.result] = "."
            elif name is not None:
                if name not in names and "O_CREAT" in call.args[2]:
                    names[name], next_inode = next_inode, next_inode + 1
                    ops.append(Op("link", name, inode=names[name]))
                if name in names:
                    fds[call.result] = [names[name], 0]
        elif call.name == "write" and int(call.args[0][0]) in fds and fds[int(call.args[0][0])] != ".":
            state = fds[int(call.args[0][0])]
            ops.append(Op("write", inode=state[0], offset=state[1], data=call.args[1][: call.result]))
            state[1] += call.result
        elif call.name in ("fsync", "fdatasync") and int(call.args[0][0]) in fds:
            state = fds[int(call.args[0][0])]
            ops.append(Op("dirsync") if state == "." else Op("fsync", inode=state[0]))
        elif call.name == "close":
            fds.pop(int(call.args[0][0]), None)
        elif call.name in ("rename", "unlink"):
            name = local(call.args[0])
            other = local(call.args[1]) if call.name == "rename" else None
            if name is None:
                continue
            ops.append(Op(call.name, name, other))
            inode = names.pop(name, None)
            if other is not None and inode is not None:
                names[other] = inode
    return ops


def _doubtful(ops, k):
    """Las operaciones de ``ops[:k]`` que un corte ahí podría no haber guardado."""
    last_dirsync = max((i for i in range(k) if ops[i].kind == "dirsync"), default=-1)
    last_fsync = {}
    for i in range(k):
        if ops[i].kind == "fsync":
            last_fsync[ops[i].inode] = i
    doubtful = []
    for i in range(k):
        op = ops[i]
        if op.kind in ("link", "rename", "unlink") and i > last_dirsync:
            doubtful.append(i)
        elif op.kind == "write" and i > last_fsync.get(op.inode, -1):
            doubtful.append(i)
    return doubtful


def _names(op):
    return {n for n in (op.name, op.other) if n}


def _choices(ops, doubtful):
    """Cada combinación de destinos de las operaciones en duda (índice → destino)."""
    options = []
    for i in doubtful:
        options.append(WRITE_FATES if ops[i].kind == "write" else ("none", "full"))
    if len(doubtful) > MAX_DOUBTFUL:  # solo prefijos: o llegó todo hasta ahí, o nada después
        for cut in range(len(doubtful) + 1):
            yield {i: ("full" if n < cut else "none") for n, i in enumerate(doubtful)}
        return
    for fates in itertools.product(*options):
        chosen = dict(zip(doubtful, fates, strict=True))
        # Una entrada del directorio llega solo con las anteriores en duda que tocan el mismo nombre.
        entries = [i for i in doubtful if ops[i].kind != "write"]
        if all(
            chosen[j] == "full"
            for i in entries
            if chosen[i] == "full"
            for j in entries
            if j < i and _names(ops[j]) & _names(ops[i])
        ):
            yield chosen


def _apply(ops, k, chosen, initial):
    names = {name: i for i, name in enumerate(sorted(initial))}
    data = {i: bytearray(initial[name]) for name, i in names.items()}
    for i in range(k):
        op, fate = ops[i], chosen.get(i, "full")
        if fate == "none" or op.kind in ("fsync", "dirsync"):
            continue
        if op.kind == "link":
            names[op.name] = op.inode
        elif op.kind == "unlink":
            names.pop(op.name, None)
        elif op.kind == "rename" and op.name in names:
            names[op.other] = names.pop(op.name)
        elif op.kind == "write":
            content = data.setdefault(op.inode, bytearray())
            kept = {"full": len(op.data), "prefix": len(op.data) // 2, "half": len(op.data) // 2, "zeros": 0}[
                fate
            ]
            end = op.offset + (kept if fate == "prefix" else len(op.data))
            if len(content) < end:
                content.extend(bytes(end - len(content)))
            content[op.offset : op.offset + kept] = op.data[:kept]
    return {name: bytes(data.get(inode, b"")) for name, inode in names.items()}


def crash_states(ops, initial):
    """({nombre: bytes} de cada estado distinto que un corte puede dejar, cuántos se recorrieron)."""
    seen, walked = {}, 0
    for k in range(len(ops) + 1):
        for chosen in _choices(ops, _doubtful(ops, k)):
            walked += 1
            state = _apply(ops, k, chosen, initial)
            seen.setdefault(tuple(sorted(state.items())), state)
    return list(seen.values()), walked


def write_state(state, workdir):
    """Escribe en ``workdir`` los archivos de un estado ({nombre: bytes}) tal cual."""
    for name, content in state.items():
        with open(os.path.join(workdir, name), "wb") as f:
            f.write(content)

"""Grabar con strace las llamadas al sistema de un proceso de verdad, y leerlas.

    prefix = strace_prefix(log, ["-e", f"trace={TRACED}"])   # delante del comando del agente
    calls = parse_log(log)                                   # [Call(nombre, args, resultado, …)]

Lo usan el corte de luz de «De la lección a producción» (con ``harness.runs.power_cut``), el barrido de
fallas y el modelo de corte de luz del mantenimiento, y sus pruebas.
"""

import os
import re
import shutil
from typing import NamedTuple

STRACE = shutil.which("strace")
# Las llamadas que tocan los archivos del agente: las que el modelo de corte de luz convierte en operaciones.
TRACED = "openat,write,rename,renameat,renameat2,fsync,fdatasync,unlink,unlinkat,close"
# Con -f, cada línea empieza con el pid del proceso: aquí se lo salta (se sigue a un solo proceso).
LINE = re.compile(r"^(?:\d+\s+)?(\w+)\((.*)\)\s+=\s+(-?\d+)(?:<((?:\\x[0-9a-f]{2})*)>)?(.*)$")
HEX = re.compile(r"\\x([0-9a-f]{2})")
FD = re.compile(r"^(\d+|AT_FDCWD)<((?:\\x[0-9a-f]{2})*)>$")


def recording_options(log, extra=()):
    """Las opciones de strace que graban en ``log``: -y (la ruta de cada descriptor), -xx y -s grande
    (los datos de cada write enteros, en hexadecimal), solo el proceso del agente (no tiene hijos)."""
    return ["-qq", "-y", "-xx", "-s", "4000000", "-o", os.fspath(log), *extra]


def strace_prefix(log, extra=()):
    """strace delante del agente, grabando en ``log`` (``recording_options``)."""
    return [STRACE, *recording_options(log, extra)]


def unhex(text):
    return bytes(int(h, 16) for h in HEX.findall(text))


class Call(NamedTuple):
    """Una llamada grabada: nombre, argumentos (un descriptor es (número, ruta); un texto, bytes;
    lo demás, tal cual), resultado, ruta del descriptor devuelto y si strace la falló a propósito."""

    name: str
    args: list
    result: int
    returned_path: str | None
    injected: bool


def _arg(text):
    fd = FD.match(text)
    if fd:
        return (fd.group(1), unhex(fd.group(2)).decode("utf-8", "replace"))
    if text.startswith('"'):
        return unhex(text)
    return text


def parse_log(path):
    """Las llamadas de un log de ``strace_prefix``, en orden."""
    calls = []
    with open(path, encoding="ascii", errors="replace") as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            name, args, result, returned, rest = m.groups()
            path_back = unhex(returned).decode("utf-8", "replace") if returned else None
            calls.append(
                Call(name, [_arg(a) for a in args.split(", ")], int(result), path_back, "(INJECTED)" in rest)
            )
    return calls


# Las llamadas con que un guardado cambia un archivo (o lo abre, lo fija o lo cierra), en cualquier
# lenguaje: «?» delante, las que esta arquitectura puede no tener (strace no falla por ellas).
SAVE_TRACED = (
    "openat,write,rename,renameat,renameat2,fsync,fdatasync,unlink,unlinkat,close,"
    "?open,?creat,?pwrite64,?writev,?pwritev,?pwritev2,?ftruncate,?truncate,?link,?linkat,"
    "?sendfile,?sendfile64,?copy_file_range"
)
# Las que reciben rutas como texto (las «…at» las resuelven desde el descriptor que va antes).
PATH_CALLS = frozenset(
    "open creat unlink rename truncate link openat unlinkat renameat renameat2 linkat".split()
)


def paths_of(call, cwd):
    """Las rutas absolutas que toca ``call``: las que nombra (resueltas desde su descriptor, o desde
    ``cwd``), la de cada descriptor que usa y la del que devuelve. Un descriptor que solo sirve de
    base a una ruta (el de ``openat``) no cuenta: la llamada no toca esa carpeta."""
    found, base = [], None
    for arg in call.args:
        if isinstance(arg, tuple):
            if call.name not in PATH_CALLS and arg[0] != "AT_FDCWD":
                found.append(arg[1])
            base = arg[1]
        elif isinstance(arg, bytes) and call.name in PATH_CALLS:
            name = arg.decode("utf-8", "replace")
            found.append(os.path.normpath(os.path.join(base or cwd, name)))
            base = None
    if call.returned_path:
        found.append(call.returned_path)
    return found

"""Lo que varias pruebas comparten: dónde está el notebook de la lección, lo que muestra una celda y
fotos del disco, para exigir que una corrida rechazada no cambió nada."""

import hashlib
import os
import stat

from maintainer.paths import ROOT as REPO_ROOT

LESSON_NOTEBOOK = os.path.join(REPO_ROOT, "notebooks", "leccion_6_puntos_de_control.ipynb")


def snapshot(workdir):
    """{nombre: bytes} de los archivos de ``workdir``: para comparar y para buscar algo adentro."""
    return {p.name: p.read_bytes() for p in sorted(workdir.iterdir()) if p.is_file()}


def digest(workdir):
    """Todo lo que hay en el directorio: nombre, permisos y contenido de cada entrada."""
    found = {}
    for root, dirs, files in os.walk(workdir):
        for name in dirs + files:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            data = open(path, "rb").read() if stat.S_ISREG(mode) else b""  # noqa: SIM115
            found[os.path.relpath(path, workdir)] = (mode, hashlib.sha256(data).hexdigest())
    return found


def output_text(cell):
    """Lo que la celda muestra como texto: sus streams y la versión text/plain de sus datos."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif "data" in output:
            parts.append(output.data.get("text/plain", "") + "\n")  # una salida aparte, en su línea
    return "".join(parts)

"""Escritura durable: temporal + fsync + rename atómico + fsync del directorio.

El rename solo ya evita un archivo a medio escribir si el proceso muere. Ante un corte de luz no
alcanza: el sistema de archivos puede guardar el rename antes que los datos y dejar, tras reiniciar,
un archivo con su nombre final pero vacío. El fsync del temporal fija los datos antes del rename, y
el del directorio fija el rename mismo.
"""

import os


def fsync_dir(path):
    """Fija en disco las entradas del directorio (creaciones, renames, borrados)."""
    fd = os.open(path or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durable(path, data):
    """Escribe ``data`` (bytes) en ``path``: o queda el contenido anterior, o el nuevo entero."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path))


def read_bytes(path):
    """El contenido de ``path`` en bytes: un carácter UTF-8 cortado cuenta como archivo a medio
    escribir, no como un error de decodificación. Propaga ``OSError`` (FileNotFoundError incluido)."""
    with open(path, "rb") as f:
        return f.read()

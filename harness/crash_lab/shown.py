"""La salida de un proceso tal como la muestra el laboratorio: sin las rutas absolutas de la máquina.

Una traza de Python nombra cada archivo con su ruta entera (``/home/ana/curso/_trabajo/agent.py``) y
un error de disco también; la salida guardada de un notebook no las admite, y a quien estudia no le
dicen nada. Cada ruta absoluta se muestra relativa a la carpeta del notebook si está dentro de ella, y
si no, con su carpeta y su nombre (``json/decoder.py``).
"""

import os
import pathlib
import re

_START = r"(?:/|[A-Za-z]:\\)"  # una ruta absoluta de POSIX o de Windows
# Entre comillas (la de una traza, la de un error de disco), con sus espacios si los tiene.
QUOTED = re.compile(rf"([\"'])({_START}[^\"'\n]*)\1")
# Suelta, hasta un espacio; empieza una palabra: no es la barra de «1/3», ni la de «a / b», ni un URL.
BARE = re.compile(rf"(?<![\w.~/\\:]){_START}[^\s\"'<>/\\]+(?:[/\\][^\s\"'<>/\\]*)*")


def shown_path(path):
    """La ruta relativa a la carpeta del notebook; fuera de ella, su carpeta y su nombre."""
    relative = os.path.relpath(os.path.abspath(path))
    if not relative.startswith(os.pardir):
        return relative.replace(os.sep, "/")
    parts = pathlib.Path(os.path.abspath(path)).parts[1:]  # sin la raíz: nunca empieza con «/»
    return "/".join(parts[-2:])


def without_paths(text):
    """``text`` con cada ruta absoluta cambiada por la que se muestra."""
    text = QUOTED.sub(lambda found: found[1] + shown_path(found[2]) + found[1], text)
    return BARE.sub(lambda found: shown_path(found[0]), text)

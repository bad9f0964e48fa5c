"""Un Python como el de Windows en lo que el curso podría dar por sentado, para la pasada de
portabilidad de CI (``.ci/run``) y ``tests/test_portability.py``.

Con esta carpeta en ``PYTHONPATH`` (ruta absoluta: los agentes arrancan en otro directorio), cada
proceso de Python que se lance, el kernel de cada notebook y cada agente incluidos, arranca así:

- ``import fcntl`` falla con ``ModuleNotFoundError``, como en Windows, en el código del curso: todo lo
  que no es la biblioteca estándar ni un paquete instalado (``harness``, los agentes, las celdas de un
  notebook, ``python -c``). Las bibliotecas instaladas lo siguen teniendo: en Windows toman otro camino
  (IPython, por ejemplo, importa fcntl solo en POSIX) y bloqueárselo aquí no probaría nada del curso;
- con ``COURSE_CREATED_PATHS=<archivo>``, anota en ese archivo (una por línea) cada ruta que el proceso
  crea (archivo, carpeta, destino de un rename o de un enlace), para revisar después sus nombres.
"""

import builtins
import os
import sys
import sysconfig

_INSTALLED = tuple(
    os.path.join(os.path.realpath(sysconfig.get_path(kind)), "")
    for kind in ("stdlib", "platstdlib", "purelib", "platlib")
)
_original_import = builtins.__import__


def _is_course_code(filename):
    """¿Es ``filename`` (el del código que hace el import) del curso y no de la instalación de Python?"""
    if filename.startswith("<frozen"):
        return False
    return filename.startswith("<") or not os.path.realpath(filename).startswith(_INSTALLED)


def _import_without_fcntl(name, *args, **kwargs):
    # Se mira en cada import (no en un buscador de módulos): si una biblioteca ya cargó fcntl, un
    # import desde el curso lo encontraría en sys.modules sin preguntarle a nadie.
    if name == "fcntl" and _is_course_code(sys._getframe(1).f_code.co_filename):
        raise ModuleNotFoundError("No module named 'fcntl' (bloqueado: pasada de portabilidad)", name=name)
    return _original_import(name, *args, **kwargs)


builtins.__import__ = _import_without_fcntl

# Evento de auditoría → posición del argumento con la ruta creada.
_CREATING = {"os.mkdir": 0, "os.rename": 1, "os.symlink": 1, "os.link": 1}


def _record_created_paths(log):
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # antes del gancho: no se anota

    def hook(event, args):
        if event == "open":
            if not (isinstance(args[2], int) and args[2] & os.O_CREAT):
                return
            created = args[0]
        elif event in _CREATING:
            created = args[_CREATING[event]]
        else:
            return
        if isinstance(created, (str, bytes, os.PathLike)):
            # O_APPEND y una línea por write: las de varios procesos no se mezclan.
            os.write(fd, os.fsencode(os.path.abspath(created)) + b"\n")

    sys.addaudithook(hook)


if os.environ.get("COURSE_CREATED_PATHS"):
    _record_created_paths(os.environ["COURSE_CREATED_PATHS"])

"""La excepción base de las condiciones esperadas: main() las muestra en una línea, sin traza; y los
fallos del disco dichos en español, con qué se intentaba (leer, escribir, borrar) y qué quedó."""

import errno
import os
import sys

from harness.contract import NOT_WRITTEN


class HarnessError(Exception):
    """Un error que la persona usuaria puede entender y resolver (archivo corrupto, falta algo…)."""


# Los motivos de un OSError, en español: el strerror del sistema viene en inglés y no se muestra.
_OS_REASONS = {
    errno.EPERM: "operación no permitida",
    errno.ENOENT: "no existe",
    errno.EIO: "error de entrada/salida del disco",
    errno.EBADF: "el descriptor ya no es válido",
    errno.EAGAIN: "recurso ocupado por ahora",
    errno.ENOMEM: "no alcanza la memoria",
    errno.EACCES: "sin permiso",
    errno.EBUSY: "está en uso",
    errno.EEXIST: "ya existe",
    errno.EXDEV: "está en otro sistema de archivos",
    errno.ENOTDIR: "no es un directorio",
    errno.EISDIR: "es un directorio",
    errno.EINVAL: "no es un archivo común",
    errno.EMFILE: "hay demasiados archivos abiertos",
    errno.EFBIG: "el archivo es demasiado grande",
    errno.ENOSPC: "el disco está lleno",
    errno.EROFS: "el sistema de archivos es de solo lectura",
    errno.EPIPE: "la salida está cerrada",
    errno.ENAMETOOLONG: "el nombre es demasiado largo",
    errno.ENOTEMPTY: "el directorio no está vacío",
    errno.ELOOP: "es un enlace simbólico, y el agente no sigue enlaces en sus propios archivos",
    errno.EDQUOT: "se agotó la cuota de disco",
}


def os_reason(err):
    """El motivo de ``err`` (un OSError) en una frase corta en español."""
    if err.errno in _OS_REASONS:
        return _OS_REASONS[err.errno]
    return f"error del sistema número {err.errno}" if err.errno else "error del sistema"


class DiskError(OSError):
    """Un ``OSError`` que sabe qué se intentaba (``action``: «leer», «escribir en», «borrar») y qué
    quedó en disco (``outcome``); sigue siendo un OSError para quien ya lo atrapa como tal."""

    def __init__(self, err, action, outcome, path=None):
        super().__init__(err.errno, err.strerror, err.filename or path)
        self.action, self.outcome = action, outcome

    @classmethod
    def doing(cls, action, outcome, path=None):
        """Dentro del bloque, un OSError sale como ``DiskError``; ``path`` nombra el archivo cuando el
        error no trae uno (un fsync, por ejemplo)."""
        return _Doing(cls, action, outcome, path)


class _Doing:
    """El bloque de ``DiskError.doing``. Una clase y no contextlib: cada proceso del agente de la lección
    importa este módulo, y contextlib no se importa gratis."""

    def __init__(self, cls, action, outcome, path):
        self.cls, self.action, self.outcome, self.path = cls, action, outcome, path

    def __enter__(self):
        return self

    def __exit__(self, kind, err, traceback):
        if isinstance(err, OSError) and not isinstance(err, DiskError):
            raise self.cls(err, self.action, self.outcome, self.path) from err
        return False


def disk_failure(err):
    """La línea de ``main()`` para un ``OSError``: qué se intentaba, con qué archivo, por qué y qué
    quedó. Sin saber qué quedó (un OSError sin contexto), no promete nada."""
    where = os.path.basename(err.filename or "") or "el directorio de trabajo"
    if err.filename is None and not isinstance(err, DiskError):  # un print: la salida estándar
        return (
            f"No se pudo escribir en la salida estándar: {os_reason(err)}. La corrida se detuvo ahí; lo que "
            "ya estaba guardado en disco sigue ahí: retoma con --resume."
        )
    if isinstance(err, DiskError):
        return (
            f"No se pudo {err.action} {where}: {os_reason(err)}. Se detuvo ahí y {err.outcome}: cuando "
            "se resuelva, retoma con --resume (o vuelve a empezar sin él si no había punto de control)."
        )
    return (
        f"Falló una operación de disco con {where}: {os_reason(err)}. Revisa el estado con "
        "--resume cuando se resuelva (o vuelve a empezar sin él si no había punto de control)."
    )


def print_final(line):
    """Imprime la última línea de una corrida y devuelve el código de salida: 0, o 1 si la salida
    estándar ya no acepta nada (una tubería cerrada, un disco lleno), sin traza de Python."""
    try:
        print(line, flush=True)
        return 0
    except OSError as err:
        _silence_stdout()
        try:
            print(
                f"La tarea terminó, pero no se pudo mostrar su última línea: {os_reason(err)}. El punto "
                "de control y el reporte ya están guardados.",
                file=sys.stderr,
                flush=True,
            )
        except (OSError, ValueError):
            pass  # stderr tampoco acepta nada: queda el código de salida
        return 1


def _silence_stdout():
    """Tras un error de la salida estándar: lo que quedó en su búfer iría a parar de nuevo a la salida
    rota al terminar el proceso (y Python lo mostraría en inglés); se manda a /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # sin stdout que redirigir: no hay búfer que pueda volver a la salida rota


class NotWrittenYetError(HarnessError):
    """Una pieza del taller que todavía es un «TU CÓDIGO AQUÍ»."""


def not_yet(piece):
    """El error de una pieza del taller sin escribir: el agente lo dice en una línea y la suite de
    conformidad lo reconoce («todavía no», no ✗)."""
    return NotWrittenYetError(f"{NOT_WRITTEN} {piece} (su celda «tu turno» del taller)")


todavia_no = not_yet  # el nombre de antes, para los talleres ya repartidos

"""La excepción base de las condiciones esperadas: main() las muestra en una línea, sin traza; y las
fallas del disco dichas en español, con qué se intentaba (leer, escribir, borrar) y qué quedó."""

import errno
import os
import sys

from harness.contract import NOT_WRITTEN


class HarnessError(Exception):
    """Un error que la persona usuaria puede entender y resolver (archivo corrupto, falta algo…)."""


# Los motivos de un OSError, en español y escritos una sola vez: el strerror del sistema viene en inglés
# y no se muestra. Cada uno dice lo que significa ese errno en cualquier llamada (un EINVAL de fsync no
# es «no es un archivo común»: eso lo dice ``FileRefused``, que el agente arma él mismo). Por nombre: un
# sistema que no tiene alguno (Windows no tiene EDQUOT) lo salta.
_MEANINGS = {
    "EPERM": "operación no permitida",
    "ENOENT": "no existe",
    "EINTR": "una señal interrumpió la operación",
    "EIO": "error de entrada/salida del disco",
    "ENXIO": "el dispositivo no existe o no está conectado",
    "E2BIG": "la lista de argumentos es demasiado larga",
    "ENOEXEC": "no es un programa que se pueda ejecutar",
    "EBADF": "el descriptor ya no es válido",
    "ECHILD": "no hay un proceso hijo que esperar",
    "EAGAIN": "el recurso no está disponible por ahora",
    "ENOMEM": "no alcanza la memoria",
    "EACCES": "sin permiso",
    "EFAULT": "una dirección de memoria inválida",
    "ENOTBLK": "no es un dispositivo de bloques",
    "EBUSY": "está en uso",
    "EEXIST": "ya existe",
    "EXDEV": "está en otro sistema de archivos",
    "ENODEV": "el dispositivo no admite la operación",
    "ENOTDIR": "no es un directorio",
    "EISDIR": "es un directorio",
    "EINVAL": "el sistema de archivos no admite la operación (argumento inválido)",
    "ENFILE": "el sistema tiene demasiados archivos abiertos",
    "EMFILE": "el proceso tiene demasiados archivos abiertos",
    "ENOTTY": "el dispositivo no admite la operación",
    "ETXTBSY": "es un programa que se está ejecutando",
    "EFBIG": "el archivo es demasiado grande",
    "ENOSPC": "el disco está lleno",
    "ESPIPE": "no se puede mover la posición (una tubería)",
    "EROFS": "el sistema de archivos es de solo lectura",
    "EMLINK": "hay demasiados enlaces",
    "EPIPE": "la salida está cerrada",
    "EDEADLK": "el candado quedaría en un bloqueo mutuo",
    "ENAMETOOLONG": "el nombre es demasiado largo",
    "ENOLCK": "no quedan candados disponibles",
    "ENOSYS": "el sistema no implementa la operación",
    "ENOTEMPTY": "el directorio no está vacío",
    "ELOOP": "hay un ciclo de enlaces simbólicos en la ruta",
    "ENODATA": "no hay datos disponibles",
    "ETIME": "se agotó el tiempo",
    "ENOLINK": "se cortó el enlace con el sistema remoto",
    "EPROTO": "error de protocolo",
    "EBADMSG": "los datos están dañados",
    "EOVERFLOW": "el valor es demasiado grande para su tipo",
    "EILSEQ": "el nombre tiene una secuencia de bytes inválida",
    "ENOTSOCK": "no es un socket",
    "EOPNOTSUPP": "la operación no está soportada",
    "ENOTSUP": "la operación no está soportada",
    "ENOBUFS": "no alcanza el espacio de los búferes",
    "ENOTCONN": "no está conectado",
    "ECONNRESET": "la otra punta cortó la conexión",
    "ECONNREFUSED": "la conexión fue rechazada",
    "ETIMEDOUT": "se agotó el tiempo de espera",
    "EHOSTDOWN": "el servidor no responde",
    "EHOSTUNREACH": "el servidor es inalcanzable",
    "ENETDOWN": "la red no está disponible",
    "ENETUNREACH": "la red es inalcanzable",
    "ESTALE": "el archivo remoto ya no es válido (NFS)",
    "EUCLEAN": "el sistema de archivos está dañado y necesita una revisión",
    "EREMOTEIO": "error de entrada/salida en el sistema remoto",
    "EDQUOT": "se agotó la cuota de disco",
    "ENOMEDIUM": "no hay un medio en la unidad",
    "EMEDIUMTYPE": "el tipo de medio no sirve",
    "ECANCELED": "la operación se canceló",
    "EOWNERDEAD": "murió el dueño del candado",
    "ENOTRECOVERABLE": "el estado no se puede recuperar",
    "ERANGE": "el resultado está fuera de rango",
    "EDOM": "el argumento está fuera del dominio",
}
_OS_REASONS = {getattr(errno, name): words for name, words in _MEANINGS.items() if hasattr(errno, name)}


class FileRefused(OSError):  # noqa: N818 (se lee como una condición del archivo)
    """Un ``OSError`` que arma el agente mismo al rechazar un archivo suyo (un enlace que no sigue, algo
    que no es un archivo común, uno demasiado grande): su motivo en español es ``spanish_reason``, no
    el del errno que lleva para quien lo atrapa por número."""

    def __init__(self, code, reason, path):
        super().__init__(code, reason, path)
        self.spanish_reason = reason


def os_reason(err):
    """El motivo de ``err`` (un OSError) en una frase corta en español, nunca un número."""
    if getattr(err, "spanish_reason", None):  # un FileRefused, o un DiskError que ya lo tradujo
        return err.spanish_reason
    if err.errno in _OS_REASONS:
        return _OS_REASONS[err.errno]
    name = errno.errorcode.get(err.errno) if err.errno else None
    return f"un error del sistema que este programa no traduce ({name})" if name else "un error del sistema"


class DiskError(OSError):
    """Un ``OSError`` que sabe qué se intentaba (``action``: «leer», «escribir en», «borrar») y qué
    quedó en disco (``outcome``); sigue siendo un OSError para quien ya lo atrapa como tal."""

    def __init__(self, err, action, outcome, path=None):
        super().__init__(err.errno, err.strerror, err.filename or path)
        self.action, self.outcome, self.spanish_reason = action, outcome, os_reason(err)

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


# Los caracteres de control (y los separadores de línea de Unicode) de un texto ajeno: en una línea
# para una persona se muestran escapados, así un nombre con un salto de línea no parte la línea en dos.
_CONTROLS = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
}


def one_line(text):
    """``text`` en una sola línea: sus caracteres de control escapados (``\\n``, ``\\x1b``…)."""
    return str(text).translate(_CONTROLS)


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

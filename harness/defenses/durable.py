"""Escritura durable: temporal + fsync + rename atómico + fsync del directorio.

El rename solo ya evita un archivo a medio escribir si el proceso muere. Ante un corte de luz no
alcanza: el sistema de archivos puede guardar el rename antes que los datos y dejar, tras reiniciar,
un archivo con su nombre final pero vacío. El fsync del temporal fija los datos antes del rename, y
el del directorio fija el rename mismo. Ningún archivo propio se abre a través de un enlace simbólico:
un temporal sobrante que es un enlace se borra (el enlace, no su destino) y se crea de nuevo.
"""

import errno
import os
import stat

from harness.contract import TMP_SUFFIX
from harness.defenses.bounded import MAX_FILE_BYTES
from harness.errors import DiskError, FileRefused

# O_EXCL: el temporal se crea siempre nuevo; O_NOFOLLOW: nunca se escribe a través de un enlace.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: abrir una FIFO no se queda esperando; igual se rechaza abajo por no ser un archivo común.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def fsync_dir(path):
    """Fija en disco las entradas del directorio (creaciones, renames, borrados)."""
    if os.name == "nt":  # Windows no abre carpetas con os.open ni les hace fsync: queda el diario de NTFS
        return
    fd = os.open(path or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durable(path, data):
    """Escribe ``data`` (bytes) en ``path``: o queda el contenido anterior, o el nuevo entero."""
    tmp = path + TMP_SUFFIX
    before = f"{os.path.basename(path)} quedó como estaba antes de este intento"
    with DiskError.doing("escribir en", before, tmp):
        if len(data) > MAX_FILE_BYTES:  # lo que read_bytes rechazaría al reanudar no se escribe
            reason = f"pesaría más de {MAX_FILE_BYTES // 2**20} MB, más de lo que el agente vuelve a leer"
            raise FileRefused(errno.EFBIG, reason, path)
        remove_leftover(tmp)
        fd = os.open(tmp, _CREATE, 0o666)
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # rename no sigue enlaces: reemplaza la entrada misma
    after = f"{os.path.basename(path)} ya tiene su versión nueva, pero puede que no haya llegado al disco"
    with DiskError.doing("escribir en", after, path):
        fsync_dir(os.path.dirname(path))


def remove_leftover(path):
    """Borra un temporal que dejó una muerte anterior: si es un enlace, se borra el enlace."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_durably(*paths):
    """Borra los ``paths`` que existan (un enlace se borra a sí mismo) y fija los borrados en disco
    antes de volver: lo que venga después no puede llegar al disco sin ellos."""
    directories = set()
    with DiskError.doing("borrar", "la corrida nueva todavía no escribió nada"):
        for path in paths:
            if os.path.lexists(path):
                os.unlink(path)
                directories.add(os.path.dirname(path))
        for directory in directories:
            fsync_dir(directory)


# Lo que ``read_bytes`` rechaza por no ser un archivo común: un enlace, una FIFO o un socket, una carpeta.
NOT_PLAIN = (errno.ELOOP, errno.EINVAL, errno.EISDIR)


def read_present(path):
    """``read_bytes(path)``, o None si ``path`` no existe (tampoco existe si su carpeta es un archivo):
    para mirar lo que dejó una corrida sin seguir enlaces ni esperar en una FIFO."""
    try:
        return read_bytes(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


# Los motivos de esos rechazos, dichos por el agente (el errno solo no los distingue de otra falla).
SYMLINK_REASON = "es un enlace simbólico, y el agente no sigue enlaces en sus propios archivos"
NOT_PLAIN_REASON = "no es un archivo común"


def read_bytes(path, limit=MAX_FILE_BYTES):
    """El contenido de ``path`` en bytes: un carácter UTF-8 cortado cuenta como archivo a medio
    escribir, no como un error de decodificación. No sigue enlaces simbólicos (ELOOP), rechaza lo que
    no es un archivo común y lo que pesa más de ``limit`` bytes (EFBIG: leerlo entero agotaría la
    memoria). Propaga ``OSError`` (FileNotFoundError incluido)."""
    try:
        fd = os.open(path, _READ)
    except OSError as err:
        if err.errno == errno.ELOOP and os.path.islink(path):
            raise FileRefused(errno.ELOOP, SYMLINK_REASON, path) from None
        raise
    with open(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "es un directorio", path)
        if not stat.S_ISREG(mode):
            raise FileRefused(errno.EINVAL, NOT_PLAIN_REASON, path)
        os.set_blocking(fd, True)
        data = f.read(limit + 1)  # no más que el tope, aunque el archivo crezca mientras se lee
    if len(data) > limit:
        raise FileRefused(errno.EFBIG, f"pesa más de {limit // 2**20} MB, más de lo que el agente lee", path)
    return data

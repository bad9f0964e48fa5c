"""Lo que cada estudiante entregó, leído sin salir de su carpeta: qué notebooks cuentan y por qué no.

Una carpeta de entregas llega de un zip o de ``cp -r``, que guardan enlaces: un notebook que es un
enlace a otro archivo (el de un compañero, ``/dev/zero``) o una FIFO, un dispositivo o una carpeta con
el nombre de un notebook no cuentan como entregados; tampoco un archivo que no es un notebook (JSON
inválido, o JSON que no sigue el formato de nbformat) ni uno que pesa más de ``NOTEBOOK_BYTES``. Cada
uno vale 0, con su razón en español (``reasons``), y el resto de la entrega se califica.

Nada se lee siguiendo un enlace: cada carpeta y cada archivo se abre desde la carpeta que lo contiene
(``dir_fd``) con ``O_NOFOLLOW``, solo si es un archivo común (``lstat``, y ``fstat`` del abierto), y se
lee hasta un tope. Un enlace duro no se distingue del original: un notebook que es el mismo archivo (el
mismo inodo) que el de otra entrega de la clase no cuenta para ninguna de las dos (``shared``).

``stage`` copia lo que cuenta a una carpeta propia de quien califica: nbgrader califica esa copia, no la
carpeta de la entrega. La huella de una entrega (``fingerprint``) se calcula con las mismas reglas.
"""

import contextlib
import errno
import hashlib
import json
import os
import stat

import nbformat
from nbgrader.utils import parse_utc

# Lo más que se lee de un notebook entregado, y de cada otro archivo y de todos juntos al copiarlos.
NOTEBOOK_BYTES = 20 << 20
OTHER_FILE_BYTES = 16 << 20
OTHER_TOTAL_BYTES = 64 << 20
# Lo que cuenta para la huella de cada archivo: su contenido hasta este tope; de ahí en más, su tamaño.
FINGERPRINT_BYTES = 64 << 20
TIMESTAMP = "timestamp.txt"  # la hora de entrega que deja ``nbgrader collect``; nbgrader la lee

# Por qué un notebook no cuenta como entregado: «<notebook>.ipynb <razón>».
MISSING = "falta"
LINK = "es un enlace (simbólico), no un archivo: no se sigue"
FOLDER = "es una carpeta, no un archivo"
SPECIAL = "no es un archivo común (un dispositivo, una FIFO o un socket)"
TOO_BIG = f"pesa más de {NOTEBOOK_BYTES >> 20} MiB"
NOT_JSON = "no se puede leer (no es un notebook en JSON)"
NOT_NOTEBOOK = "no es un notebook (es JSON, pero no sigue el formato de nbformat)"
LINKED_FOLDER = "está en una carpeta que es un enlace, no en la carpeta de la entrega"
SHARED = "es el mismo archivo (un enlace duro) que el de {others}: no se sabe de quién es"


def _kind(mode):
    """La razón de un archivo que no es común, por su tipo; None si es un archivo común."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return LINK
    return FOLDER if stat.S_ISDIR(mode) else SPECIAL


@contextlib.contextmanager
def opened_folder(course_dir, student, assignment):
    """El descriptor de ``submitted/<student>/<assignment>`` abierto sin seguir enlaces (ninguna de
    las dos carpetas puede ser un enlace); None si no existe o si alguna es un enlace."""
    fd = os.open(os.path.join(course_dir, "submitted"), os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in (student, assignment):
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                inner = None
            os.close(fd)
            fd = inner
            if fd is None:
                break
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def read_bounded(folder_fd, name, limit):
    """(bytes, None) del archivo común ``name`` de la carpeta ``folder_fd``, si no pasa de ``limit``;
    si no, (None, razón). No sigue enlaces ni abre lo que no es un archivo común."""
    try:
        before = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None, MISSING
    if _kind(before.st_mode):
        return None, _kind(before.st_mode)
    if before.st_size > limit:
        return None, TOO_BIG
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
    except OSError as err:
        return None, LINK if err.errno == errno.ELOOP else f"no se puede leer ({err.strerror})"
    with open(fd, "rb") as f:
        if not os.path.samestat(before, os.fstat(f.fileno())):  # cambió entre mirarlo y abrirlo
            return None, SPECIAL
        data = f.read(limit + 1)
    return (None, TOO_BIG) if len(data) > limit else (data, None)


def notebook_problem(data):
    """Por qué ``data`` no es un notebook que nbgrader pueda leer (``NOT_JSON``, ``NOT_NOTEBOOK``), o None."""
    try:
        json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return NOT_JSON
    try:
        nbformat.validate(nbformat.reads(data.decode("utf-8"), as_version=4))
    except Exception:  # noqa: BLE001 (cualquier forma de no ser un notebook)
        return NOT_NOTEBOOK
    return None


def shared(course_dir, students, notebooks, assignment):
    """{(estudiante, notebook): [otros estudiantes]} de los notebooks que son el mismo archivo (el mismo
    inodo, un enlace duro) que el de otra entrega de la clase. Solo se mira ``lstat``."""
    owners = {}
    for student in students:
        with opened_folder(course_dir, student, assignment) as fd:
            for notebook in notebooks if fd is not None else ():
                try:
                    found = os.stat(f"{notebook}.ipynb", dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(found.st_mode) and found.st_nlink > 1:
                    owners.setdefault((found.st_dev, found.st_ino), []).append((student, notebook))
    found = {}
    for holders in owners.values():
        students_here = {s for s, _ in holders}
        for student, notebook in holders if len(students_here) > 1 else ():
            found[student, notebook] = sorted(students_here - {student})
    return found


def stage(course_dir, student, assignment, notebooks, target, shared_with=None):
    """Copia a ``target`` lo que cuenta de la entrega de ``student``: los notebooks que son notebooks
    y, del resto, los archivos comunes (hasta ``OTHER_FILE_BYTES`` cada uno y ``OTHER_TOTAL_BYTES``
    todos), sin seguir enlaces. Devuelve {notebook: razón} de los que no cuentan. ``shared_with``:
    {notebook: [otros]} de ``shared``."""
    os.makedirs(target, exist_ok=True)
    with opened_folder(course_dir, student, assignment) as fd:
        if fd is None:
            return {n: LINKED_FOLDER for n in notebooks}
        reasons = {}
        for notebook in notebooks:
            others = (shared_with or {}).get(notebook)
            data, reason = read_bounded(fd, f"{notebook}.ipynb", NOTEBOOK_BYTES)
            reason = reason or (SHARED.format(others=", ".join(others)) if others else notebook_problem(data))
            if reason:
                reasons[notebook] = reason
                continue
            with open(os.path.join(target, f"{notebook}.ipynb"), "wb") as f:
                f.write(data)
        _copy_others(fd, target)
    return reasons


def _copy_others(folder_fd, target):
    """Los archivos comunes que no son notebooks, con sus carpetas (sin seguir enlaces), hasta los topes.
    La hora de entrega se copia solo si nbgrader puede leerla."""
    left = OTHER_TOTAL_BYTES
    for parent, dirs, files, parent_fd in os.fwalk(".", dir_fd=folder_fd, follow_symlinks=False):
        _only_real(dirs, parent_fd)
        dirs[:] = [d for d in dirs if not d.endswith(".ipynb")]  # nbgrader la tomaría por un notebook
        for name in sorted(files):
            if name.endswith(".ipynb") or left <= 0:
                continue
            data, reason = read_bounded(parent_fd, name, min(OTHER_FILE_BYTES, left))
            if reason or (parent == "." and name == TIMESTAMP and not _valid_time(data)):
                continue
            left -= len(data)
            where = os.path.normpath(os.path.join(target, parent))
            os.makedirs(where, exist_ok=True)
            with open(os.path.join(where, name), "wb") as f:
                f.write(data)


def _only_real(dirs, parent_fd):
    """Deja en ``dirs`` (lo que ``os.fwalk`` va a recorrer, en orden) solo las carpetas que no son enlaces."""
    dirs[:] = sorted(
        d for d in dirs if stat.S_ISDIR(os.stat(d, dir_fd=parent_fd, follow_symlinks=False).st_mode)
    )


def _valid_time(data):
    try:
        parse_utc(data.decode("utf-8").strip())
    except (ValueError, UnicodeDecodeError, OverflowError):
        return False
    return True


def fingerprint(course_dir, student, assignment):
    """Un resumen de la entrega de ``student``: si algo cambia, cambia. Se lee con las mismas reglas que
    al copiarla: sin seguir enlaces (de un enlace cuenta a dónde apunta) y hasta un tope por archivo."""
    found = hashlib.sha256()
    with opened_folder(course_dir, student, assignment) as fd:
        walked = os.fwalk(".", dir_fd=fd, follow_symlinks=False) if fd is not None else ()
        found.update(b"" if fd is not None else LINKED_FOLDER.encode())
        for parent, dirs, files, parent_fd in walked:
            for name in sorted([*dirs, *files]):
                found.update(_entry_digest(parent, name, parent_fd))
            _only_real(dirs, parent_fd)
    return found.hexdigest()


def _entry_digest(parent, name, parent_fd):
    """Lo que cuenta de un archivo para la huella: su ruta, su tipo, su tamaño y su contenido (hasta el
    tope; si no, su hora de cambio); de un enlace, a dónde apunta."""
    seen = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    said = f"{parent}/{name}\0{stat.S_IFMT(seen.st_mode)}\0{seen.st_size}\0".encode()
    if stat.S_ISLNK(seen.st_mode):
        return said + os.readlink(name, dir_fd=parent_fd).encode(errors="replace") + b"\0"
    data = read_bounded(parent_fd, name, FINGERPRINT_BYTES)[0] if stat.S_ISREG(seen.st_mode) else None
    return said + (hashlib.sha256(data).digest() if data is not None else str(seen.st_mtime_ns).encode())


# {estudiante: {notebook: razón}} de la última calificación de cada estudiante, en la carpeta del curso:
# lo que el informe, la devolución y las notas a mano dicen que no se entregó.
RECORD_FILE = "no_entregados.json"


def recorded(course_dir):
    """{estudiante: {notebook: razón}} de lo calificado ({} si no hay registro o no se puede leer)."""
    try:
        with open(os.path.join(course_dir, RECORD_FILE), encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def record(course_dir, student, reasons):
    """Anota por qué no cuenta cada notebook de ``student`` que no se entregó (reemplaza lo anterior)."""
    known = recorded(course_dir)
    known[student] = dict(reasons)
    path = os.path.join(course_dir, RECORD_FILE)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(known, f, indent=1, sort_keys=True, ensure_ascii=False)
    os.replace(path + ".tmp", path)

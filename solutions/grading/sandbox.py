"""El aislamiento de cada entrega: bubblewrap (``bwrap``) alrededor de su kernel y de su código.

Dentro se ve solo lo que hace falta, de solo lectura, sobre un / vacío: /usr (y sus enlaces), unos
pocos archivos de /etc, el intérprete, el entorno virtual y el paquete ``harness`` (``python_paths``);
no el repositorio (``solutions/``: las soluciones, la verdad medida, el código de quien califica), ni
la carpeta del curso (otras entregas, ``gradebook.db``). Lo que una comprobación necesita de quien
califica se presta en ``LENT``. Se escribe solo en la carpeta de esa entrega (el kernel, en una copia
privada vista con la misma ruta: ``private_copy``) y en un /tmp y un /dev/shm propios que desaparecen.
Python arranca sin la carpeta actual en su ruta de módulos (``PYTHONSAFEPATH``): un módulo entregado
no se importa por accidente. Con ``--unshare-pid`` y ``--die-with-parent``, todo proceso que la
entrega arranque (aunque se separe con setsid) muere con ella. Con ``--unshare-net`` no hay red (ni la
de la máquina ni la de 127.0.0.1): el kernel habla con nbgrader por sockets de Unix en una carpeta
propia.

Quien califica suele ser root, y bwrap corriendo como root deja al aislado todas las capacidades: con
ellas, la entrega podría volver a montar ``/`` con escritura. Por eso se quitan todas
(``--cap-drop ALL``). Pero un uid 0 sin capacidades todavía escribe en ``/proc/sys``: en
``kernel.core_pattern``, un programa que la máquina correría como root fuera del aislamiento. Por eso
``/proc/sys`` (y lo demás de ``/proc`` que cambia la máquina entera) queda de solo lectura, y el nombre
de la máquina y el IPC de System V son propios del aislado.

Del entorno de quien califica pasan solo las variables de Python, del idioma y del arnés
(``passes``): una clave de API no llega al código de la entrega. bwrap mismo arranca sin las demás
(``env -u``): su primer proceso dentro del aislamiento (el pid 1, una copia de bwrap) guarda el entorno
con que nació, y cualquiera de adentro lo lee en ``/proc/1/environ``.

Con ``prlimit``, cada proceso aislado tiene un tope de memoria, de tamaño por archivo y de archivos
abiertos; su /tmp y su /dev/shm son chicos, y un grupo de control le pone tope a sus procesos: una
entrega que se come la máquina falla en su celda con un error que nombra el límite (``limit_note``),
no deja sin memoria a las demás.

Lo que la entrega deja en su carpeta lo lee y lo escribe después quien califica, fuera del
aislamiento: ``disarm`` borra antes los enlaces simbólicos y las FIFOs.

Sin bwrap, calificar se detiene con un mensaje claro, salvo que quien califica pida explícitamente
calificar sin aislamiento.
"""

import functools
import os
import select
import shutil
import stat
import subprocess
import sys
import tempfile

from jupyter_client.manager import AsyncKernelManager

from harness.contract import CRASH_VAR, LESSON_AGENT_VAR, MODEL_LOG_VAR, ORDER_VAR
from harness.runs.launcher import launch

# Quien califica lo pone en 1 (``grade_class --sin-aislamiento``) para calificar sin aislamiento.
UNSANDBOXED_ENV = "LESSON6_NO_SANDBOX"


class SandboxMissingError(RuntimeError):
    """No hay aislamiento y nadie pidió calificar sin él."""


@functools.lru_cache(maxsize=1)
def available():
    """¿Funciona bwrap en esta máquina? (Se prueba de verdad: puede estar instalado y no poder aislar.)"""
    if not (shutil.which("bwrap") and shutil.which("prlimit") and shutil.which("env")):
        return False
    return launch([*_command(), *_system(), "--", "true"]).returncode == 0


# Lo que una entrega puede gastar de la máquina: memoria por proceso, tamaño de cada archivo que
# escribe, su /tmp y su /dev/shm (en memoria), archivos abiertos por proceso y procesos a la vez.
# Pasarse es un error en su celda (MemoryError, «File too large», «No space left», «Too many open
# files», «Resource temporarily unavailable») que nombra el límite (``limit_note``), no la máquina
# sin memoria ni disco para las demás entregas.
MEMORY_BYTES = 4 << 30
FILE_BYTES = 256 << 20
TMP_BYTES = 512 << 20
SHM_BYTES = 64 << 20
OPEN_FILES = 1024
PROCESSES = 256


def _mib(n):
    return f"{n >> 20} MiB"


# (lo que dice el error, el límite que lo explica), en el orden en que se buscan.
LIMITS = (
    ("No space left on device", f"/tmp de {_mib(TMP_BYTES)} y /dev/shm de {_mib(SHM_BYTES)}, en memoria"),
    ("File too large", f"{_mib(FILE_BYTES)} por archivo"),
    ("Too many open files", f"{OPEN_FILES} archivos abiertos por proceso"),
    ("Resource temporarily unavailable", f"{PROCESSES} procesos a la vez"),
    ("MemoryError", f"{MEMORY_BYTES >> 30} GiB de memoria por proceso"),
    ("Cannot allocate memory", f"{MEMORY_BYTES >> 30} GiB de memoria por proceso"),
)


def limit_note(text):
    """La frase que nombra el límite de la calificación detrás de un error (``text``), o None."""
    for said, limit in LIMITS:
        if said in text:
            return f"(límite de la calificación: {limit} por entrega)"
    return None


# Lo que jupyter_client agrega al entorno del kernel al lanzarlo (después de ``prefix``). Dentro, el padre
# del kernel es el init del aislamiento (pid 1): que ipykernel no lo vigile.
ADDED_AT_LAUNCH = ("JPY_PARENT_PID",)


def _command(env=None):
    """prlimit (los límites) y bwrap con lo que aísla a toda entrega, sin sus carpetas todavía. bwrap
    arranca sin las variables de ``env`` (el entorno con que se lanza; ``os.environ`` si no se dice)
    que no pasan (``passes``): ningún proceso de adentro, ni el pid 1 que es bwrap, las tiene. Las que
    pasan y quien lanza agrega al lanzar (``ORDER`` de una corrida) llegan igual."""
    limits = [shutil.which("prlimit"), f"--as={MEMORY_BYTES}", f"--fsize={FILE_BYTES}"]
    limits += [f"--nofile={OPEN_FILES}", "--"]
    names = sorted({*(n for n in (os.environ if env is None else env) if not passes(n)), *ADDED_AT_LAUNCH})
    unset = [arg for name in names for arg in ("-u", name)]
    return [*limits, shutil.which("env"), *unset, shutil.which("bwrap"), *_isolation()]


# Lo de /proc que cambia la máquina entera y un uid 0 sin capacidades igual podría escribir. bwrap 0.8
# no tapa /proc/sys: ve la carpeta sin permiso de escritura y no mira los archivos de adentro.
WHOLE_MACHINE_PROC = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"]
# Del sistema, solo lo que un intérprete y sus programas necesitan: /usr (y sus enlaces de siempre) y
# unos pocos archivos de /etc. No /home, /root, /work ni /var: ahí viven el repositorio, la carpeta
# del curso y lo de otras personas.
SYSTEM_DIRS = ["/usr"]
SYSTEM_LINKS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
SYSTEM_FILES = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/alternatives",
    "/etc/mime.types",
]
# Dónde ve el aislado lo que quien califica le presta (el agente de referencia, el servidor de
# corridas): una carpeta propia, no su lugar en el repositorio.
LENT = "/calificacion"


def _isolation():
    """Lo que aísla a toda entrega, antes de sus carpetas: procesos, red, nombre de la máquina, IPC y
    capacidades; un / vacío."""
    args = ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    return args + ["--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-ipc"]


def _system():
    """El sistema de solo lectura (lo justo), /dev y /proc, y un /tmp y un /dev/shm chicos."""
    args = []
    for path in SYSTEM_DIRS:
        if os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in SYSTEM_LINKS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in SYSTEM_FILES:
        args += ["--ro-bind-try", path, path]
    args += ["--dev", "/dev", "--proc", "/proc"]
    for path in WHOLE_MACHINE_PROC:
        args += ["--ro-bind-try", path, path]
    args += ["--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    return [*args, "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]


def required():
    """True si hay que aislar; False si quien califica pidió no hacerlo; si no se puede, se detiene."""
    if os.environ.get(UNSANDBOXED_ENV) == "1":
        return False
    if available():
        return True
    raise SandboxMissingError(
        "No se puede aislar cada entrega: falta bubblewrap (bwrap) o prlimit, o no funcionan en esta "
        "máquina. Sin aislamiento, el código de una entrega podría cambiar gradebook.db, el repositorio u "
        "otras entregas. Instálalos (apt-get install bubblewrap util-linux) o, si confías en todas las "
        "entregas, califica "
        f"sin aislamiento con --sin-aislamiento ({UNSANDBOXED_ENV}=1)."
    )


def _outermost(candidates):
    """De ``paths`` (reales), las de más arriba: una carpeta montada trae sus subcarpetas."""
    inside = sorted({os.path.realpath(p) for p in candidates if p and os.path.exists(p)})
    return [p for i, p in enumerate(inside) if not any(p.startswith(q + os.sep) for q in inside[:i])]


def harness_dir():
    """La carpeta del paquete ``harness`` que usa quien califica."""
    import harness

    return os.path.dirname(os.path.realpath(harness.__file__))


# Dónde ve el aislado el paquete ``harness`` además de en su lugar (la ruta de módulos apunta ahí): en
# una instalación editable, o con el repositorio en PYTHONPATH, ``harness`` vive en el repositorio, y se
# presta solo esa carpeta, no el repositorio.
PACKAGES = os.path.join(LENT, "paquetes")


def python_paths():
    """Lo que el intérprete necesita leer: su instalación, el entorno virtual, sus paquetes y el
    paquete ``harness`` (sin el repositorio donde viva)."""
    prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    needed = [*prefixes, os.path.dirname(os.path.realpath(sys.executable))]
    needed.append(harness_dir())
    roots = [os.path.realpath(p) for p in prefixes]
    # Las rutas de sys.path fuera del entorno (la raíz del repositorio, la carpeta actual) no.
    for path in sys.path:
        real = os.path.realpath(path) if path else ""
        if real and any(real == r or real.startswith(r + os.sep) for r in roots):
            needed.append(real)
    # El entorno virtual por su ruta, aunque sea un enlace (``python`` de .venv/bin apunta afuera).
    return _outermost([*needed, os.path.abspath(sys.prefix)])


# Las variables de entorno que pasan al código de una entrega: las de Python, el idioma y el arnés. Las
# demás (una clave ANTHROPIC_API_KEY, la URL de una base con su contraseña…) podrían terminar impresas
# en el notebook calificado que vuelve como devolución.
PASSING_ENV = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "VIRTUAL_ENV", "NBGRADER_EXECUTION"}
PASSING_ENV |= {CRASH_VAR, ORDER_VAR, LESSON_AGENT_VAR, MODEL_LOG_VAR}
PASSING_PREFIXES = ("LC_", "PYTHON", "AGENT_", "WORKER_", "CURSO_")
# De las de Python, las que harían correr o importar algo que no es del intérprete: no pasan.
BLOCKED_ENV = {"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONINSPECT"}


def passes(name):
    """¿Llega la variable ``name`` al código de la entrega?"""
    return name not in BLOCKED_ENV and (name in PASSING_ENV or name.startswith(PASSING_PREFIXES))


def prefix(writable, readable=(), sockets=None, shown_as=None, lent=(), as_init=False, env=None):
    """El comando que antepone el aislamiento, con ``writable`` como única carpeta escribible (vista
    en ``shown_as``, su misma ruta si no se dice) y ``sockets``, la de los sockets del kernel;
    ``readable``, rutas que se ven donde están; ``lent``, {nombre: archivo} que se ven en ``LENT``. ()
    si quien califica pidió no aislar. Con ``as_init``, el comando es el init del aislamiento (pid 1): lo
    que corre dentro no puede matarlo ni detenerlo, y tiene que recoger a los huérfanos. ``env``: el
    entorno con que se lanzará el comando (``os.environ`` si no se dice): de él, dentro llega solo lo que
    pasa.

    Se ve solo eso, el sistema y el intérprete con sus paquetes: ni el repositorio (``solutions/``, el
    código de quien califica), ni la carpeta del curso (otras entregas, ``gradebook.db``). Python
    arranca sin la carpeta actual en su ruta de módulos (``PYTHONSAFEPATH``): un
    ``ipykernel_launcher.py`` entregado no se importa en lugar del de verdad."""
    if not required():
        return []
    writable = os.path.abspath(writable)
    args = [*_command(env), *(["--as-pid-1"] if as_init else [])]
    # El sistema primero: su /tmp nuevo taparía un intérprete o un repositorio que viven bajo /tmp
    # (un clon en /tmp, como el de CI); lo que se monta después queda encima.
    args += _system()
    for path in python_paths():
        args += ["--ro-bind", path, path]
    for path in readable:
        args += ["--ro-bind", path, path]
    for name, path in dict(lent).items():
        args += ["--ro-bind", path, os.path.join(LENT, name)]
    args += ["--ro-bind", harness_dir(), os.path.join(PACKAGES, "harness")]
    if sockets:
        args += ["--bind", sockets, sockets]
    shown_as = os.path.abspath(shown_as or writable)
    args += ["--bind", writable, shown_as, "--chdir", shown_as]
    # Lo que bwrap creó para montar (/, /dev) queda de solo lectura: escribir solo en lo escribible.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--setenv", "HOME", "/tmp", "--setenv", "IPYTHONDIR", "/tmp/ipython"]
    args += ["--setenv", "PYTHONSAFEPATH", "1", "--setenv", "PYTHONPATH", PACKAGES]
    return [*args, "--"]


# Dónde crear el grupo de control («cgroup») de procesos de cada aislado: el tope de procesos. RLIMIT_NPROC
# no sirve: cuenta por usuario en toda la máquina y no se le aplica a root, que suele ser quien califica.
PIDS_HIERARCHIES = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup")


def process_group():
    """Un grupo de control nuevo con tope de ``PROCESSES`` procesos (e hilos), o None si esta máquina no
    deja crearlo (sin permiso, o sin el controlador «pids»): entonces no hay tope de procesos."""
    for root in PIDS_HIERARCHIES:
        if not os.path.exists(os.path.join(root, "cgroup.procs")):
            continue
        try:
            group = tempfile.mkdtemp(prefix="leccion6-", dir=root)
        except OSError:
            continue
        if not os.path.exists(os.path.join(group, "pids.max")):  # sin el controlador «pids»
            release_group(group)
            continue
        try:
            with open(os.path.join(group, "pids.max"), "w") as f:
                f.write(str(PROCESSES))
        except OSError:
            release_group(group)
            continue
        return group
    return None


def in_group(group, command):
    """``command`` que arranca dentro de ``group`` (antes de que exista ningún proceso del aislado)."""
    if not group:
        return list(command)
    join = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
    return [shutil.which("sh") or "/bin/sh", "-c", join, group, *command]


def release_group(group):
    """Borra ``group`` cuando ya no queda ningún proceso en él (espera a cada uno con un pidfd)."""
    if not group:
        return
    for _ in range(3):
        try:
            with open(os.path.join(group, "cgroup.procs")) as f:
                left = [int(p) for p in f.read().split()]
        except OSError:
            left = []
        for pid in left:
            try:
                os.kill(pid, 9)
                pidfd = os.pidfd_open(pid)
            except OSError:
                continue
            try:
                select.select([pidfd], [], [], 5)
            finally:
                os.close(pidfd)
        try:
            os.rmdir(group)
            return
        except OSError:
            continue


def private_copy(folder):
    """Una copia de los archivos comunes de ``folder`` (la carpeta del notebook) en una carpeta
    temporal: el kernel escribe ahí, vista como ``folder``, y nunca en la carpeta donde quien califica
    escribe después. Los enlaces y lo que no es un archivo común no se copian; se abre sin seguir
    enlaces."""
    copy = tempfile.mkdtemp(prefix="entrega-")
    for parent, dirs, files in os.walk(folder):
        target = os.path.join(copy, os.path.relpath(parent, folder))
        os.makedirs(target, exist_ok=True)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(parent, d))]
        for name in files:
            try:
                fd = os.open(os.path.join(parent, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:  # un enlace, o ya no está
                continue
            with open(fd, "rb") as src:
                if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
                    continue
                with open(os.path.join(target, name), "wb") as dst:
                    shutil.copyfileobj(src, dst)
    return copy


class SandboxKernelManager(AsyncKernelManager):
    """El kernel de cada entrega, dentro del aislamiento, sin red. Escribe en una copia privada de la
    carpeta del notebook (``private_copy``), vista con la ruta de esa carpeta: lo que deje ahí (un
    enlace con el nombre de un notebook, por ejemplo) nunca llega a donde nbgrader escribe el notebook
    calificado. Habla con nbgrader por sockets de Unix (transporte «ipc») en una carpeta temporal que
    se ve igual dentro y fuera: sin red, 127.0.0.1 de adentro no es el de afuera."""

    _sockets = None
    _private = None
    _group = None

    async def _async_pre_start_kernel(self, **kw):
        if required():
            self._sockets = tempfile.mkdtemp(prefix="kernel-aislado-")
            self.transport, self.ip = "ipc", os.path.join(self._sockets, "canal")
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # Una señal al proceso de bwrap no llega al kernel: la interrupción de una celda que no termina
        # va como mensaje, y ipykernel se la manda a sí mismo.
        self.kernel_spec.interrupt_mode = "message"
        cwd = os.path.abspath(kw.get("cwd") or os.getcwd())
        if required():
            self._discard_private()
            self._private = private_copy(cwd)
            isolation = prefix(
                self._private,
                readable=[self.connection_file],
                sockets=self._sockets,
                shown_as=cwd,
                env=kw.get("env"),
            )
            self._release_group()
            self._group = process_group()
            kernel_cmd = in_group(self._group, [*isolation, *kernel_cmd])
        # Lo que ipykernel imprime al arrancar (cómo conectarse a él) no le sirve a quien califica; lo
        # que imprimen las celdas va por el canal del kernel, no por aquí.
        kw.setdefault("stdout", subprocess.DEVNULL)
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        except BaseException:
            self._discard_private()
            self._release_group()
            raise

    async def _async_wait(self, pollinterval=0.1):
        # Tras el SIGKILL el aislamiento termina en milisegundos: esperar de a 0,1 s (lo de jupyter_client)
        # sería casi todo el costo de apagar cada kernel.
        await super()._async_wait(pollinterval=0.005)

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart)
        if self._sockets and not restart:
            shutil.rmtree(self._sockets, ignore_errors=True)
        if not restart:
            self._discard_private()
            self._release_group()

    def _release_group(self):
        release_group(self._group)
        self._group = None

    def _discard_private(self):
        if self._private:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None


def disarm(folder):
    """Borra de ``folder`` (la carpeta donde escribió la entrega) todo lo que no es un archivo común ni
    una carpeta: enlaces simbólicos, FIFOs, sockets. Quien califica escribe ahí después, fuera del
    aislamiento: un enlace con el nombre de un notebook lo haría escribir (o cambiar permisos) en
    cualquier archivo de la máquina, y una FIFO lo dejaría esperando para siempre."""
    for parent, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = os.path.join(parent, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                os.remove(path)

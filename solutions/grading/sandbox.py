"""El aislamiento de cada entrega: bubblewrap (``bwrap``) alrededor de su kernel y de su código.

Dentro, todo el sistema de archivos se ve de solo lectura (el repositorio, la carpeta del curso,
``gradebook.db``); solo se puede escribir en la carpeta de esa entrega y en un /tmp propio que
desaparece. Con ``--unshare-pid`` y ``--die-with-parent``, todo proceso que la entrega arranque
(aunque se separe con setsid) muere con ella. Con ``--unshare-net`` no hay red (ni la de la máquina
ni la de 127.0.0.1): el kernel habla con nbgrader por sockets de Unix en una carpeta propia.

Quien califica suele ser root, y bwrap corriendo como root deja al aislado todas las capacidades: con
ellas, la entrega podría volver a montar ``/`` con escritura. Por eso se quitan todas
(``--cap-drop ALL``). Pero un uid 0 sin capacidades todavía escribe en ``/proc/sys``: en
``kernel.core_pattern``, un programa que la máquina correría como root fuera del aislamiento. Por eso
``/proc/sys`` (y lo demás de ``/proc`` que cambia la máquina entera) queda de solo lectura, y el nombre
de la máquina y el IPC de System V son propios del aislado.

Del entorno de quien califica pasan solo las variables de Python, del idioma y del arnés
(``passes``): una clave de API no llega al código de la entrega.

Con ``prlimit``, cada proceso aislado tiene un tope de memoria y de tamaño por archivo, y su /tmp es
chico: una entrega que se come la máquina falla en su celda, no deja sin memoria a las demás.

Lo que la entrega deja en su carpeta lo lee y lo escribe después quien califica, fuera del
aislamiento: ``disarm`` borra antes los enlaces simbólicos y las FIFOs.

Sin bwrap, calificar se detiene con un mensaje claro, salvo que quien califica pida explícitamente
calificar sin aislamiento.
"""

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile

from jupyter_client.manager import AsyncKernelManager

from solutions.grading import paths

# Quien califica lo pone en 1 (``grade_class --sin-aislamiento``) para calificar sin aislamiento.
UNSANDBOXED_ENV = "LECCION6_SIN_AISLAMIENTO"


class SandboxMissingError(RuntimeError):
    """No hay aislamiento y nadie pidió calificar sin él."""


@functools.lru_cache(maxsize=1)
def available():
    """¿Funciona bwrap en esta máquina? (Se prueba de verdad: puede estar instalado y no poder aislar.)"""
    if not (shutil.which("bwrap") and shutil.which("prlimit")):
        return False
    return subprocess.run([*_command(), "--", "true"], capture_output=True).returncode == 0


# Lo que una entrega puede gastar de la máquina: memoria por proceso, tamaño de cada archivo que
# escribe y su /tmp (en memoria). Pasarse es un error en su celda (MemoryError, «File too large»,
# «No space left»), no la máquina sin memoria ni disco para las demás entregas.
MEMORY_BYTES = 4 << 30
FILE_BYTES = 256 << 20
TMP_BYTES = 512 << 20


def _command():
    """prlimit (los límites) y bwrap con lo que aísla a toda entrega, sin sus carpetas todavía."""
    limits = [shutil.which("prlimit"), f"--as={MEMORY_BYTES}", f"--fsize={FILE_BYTES}", "--"]
    return [*limits, shutil.which("bwrap"), *_isolation()]


# Lo de /proc que cambia la máquina entera y un uid 0 sin capacidades igual podría escribir. bwrap 0.8
# no tapa /proc/sys: ve la carpeta sin permiso de escritura y no mira los archivos de adentro.
WHOLE_MACHINE_PROC = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"]


def _isolation():
    """Lo que aísla a toda entrega, antes de sus carpetas: procesos, red, nombre de la máquina, IPC,
    capacidades y un sistema de archivos de solo lectura."""
    args = ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += ["--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-ipc"]
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in WHOLE_MACHINE_PROC:
        args += ["--ro-bind-try", path, path]
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


def under_tmp():
    """Lo que el /tmp propio taparía y el kernel necesita leer: el intérprete, sus paquetes y el
    repositorio (el agente de referencia y, en una instalación editable, el paquete harness), si viven
    bajo /tmp (un entorno virtual en un clon temporal, por ejemplo)."""
    needed = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable)), paths.ROOT}
    needed |= {p for p in sys.path if p}
    inside = sorted(os.path.realpath(p) for p in needed if os.path.exists(p))
    inside = [p for p in inside if p == "/tmp" or p.startswith("/tmp/")]
    # Una carpeta ya montada trae sus subcarpetas: alcanza con las de más arriba.
    return [p for i, p in enumerate(inside) if not any(p.startswith(q + os.sep) for q in inside[:i])]


# Las variables de entorno que pasan al código de una entrega: las de Python, el idioma y el arnés. Las
# demás (una clave ANTHROPIC_API_KEY, la URL de una base con su contraseña…) podrían terminar impresas
# en el notebook calificado que vuelve como devolución.
PASSING_ENV = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "VIRTUAL_ENV", "NBGRADER_EXECUTION"}
PASSING_ENV |= {"CRASH_AFTER", "ORDER", "LESSON_AGENT", "SCRIPTED_MODEL_LOG"}
PASSING_PREFIXES = ("LC_", "PYTHON", "AGENT_", "WORKER_", "CURSO_")


def passes(name):
    """¿Llega la variable ``name`` al código de la entrega?"""
    return name in PASSING_ENV or name.startswith(PASSING_PREFIXES)


def prefix(writable, readable=(), sockets=None):
    """El comando que antepone el aislamiento, con ``writable`` como única carpeta escribible (y
    ``sockets``, la de los sockets del kernel); () si quien califica pidió no aislar."""
    if not required():
        return []
    writable = os.path.abspath(writable)
    args = _command()
    # Lo que vive en /tmp y hace falta leer: el intérprete o el repositorio, el archivo de conexión.
    for path in [*under_tmp(), *readable]:
        args += ["--ro-bind", path, path]
    if sockets:
        args += ["--bind", sockets, sockets]
    args += ["--bind", writable, writable, "--chdir", writable]
    args += ["--setenv", "HOME", "/tmp", "--setenv", "IPYTHONDIR", "/tmp/ipython"]
    for name in sorted(os.environ):
        if not passes(name):
            args += ["--unsetenv", name]
    # Dentro, el padre del kernel es el init del aislamiento (pid 1): que ipykernel no lo vigile.
    args += ["--unsetenv", "JPY_PARENT_PID"]
    return [*args, "--"]


class SandboxKernelManager(AsyncKernelManager):
    """El kernel de cada entrega, dentro del aislamiento: escribe solo en la carpeta del notebook y no
    tiene red. Habla con nbgrader por sockets de Unix (transporte «ipc») en una carpeta temporal que
    se ve igual dentro y fuera: sin red, 127.0.0.1 de adentro no es el de afuera."""

    _sockets = None

    async def _async_pre_start_kernel(self, **kw):
        if required():
            self._sockets = tempfile.mkdtemp(prefix="kernel-aislado-")
            self.transport, self.ip = "ipc", os.path.join(self._sockets, "canal")
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # Una señal al proceso de bwrap no llega al kernel: la interrupción de una celda que no termina
        # va como mensaje, y ipykernel se la manda a sí mismo.
        self.kernel_spec.interrupt_mode = "message"
        cwd = kw.get("cwd") or os.getcwd()
        kernel_cmd = [*prefix(cwd, readable=[self.connection_file], sockets=self._sockets), *kernel_cmd]
        # Lo que ipykernel imprime al arrancar (cómo conectarse a él) no le sirve a quien califica; lo
        # que imprimen las celdas va por el canal del kernel, no por aquí.
        kw.setdefault("stdout", subprocess.DEVNULL)
        await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_wait(self, pollinterval=0.1):
        # Tras el SIGKILL el aislamiento termina en milisegundos: esperar de a 0,1 s (lo de jupyter_client)
        # sería casi todo el costo de apagar cada kernel.
        await super()._async_wait(pollinterval=0.005)

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart)
        if self._sockets and not restart:
            shutil.rmtree(self._sockets, ignore_errors=True)


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

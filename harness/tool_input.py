"""Lo que una herramienta recibe del modelo: argumentos de texto y rutas dentro del directorio de trabajo.

Lo usan ``harness.tools`` y la escritura con clave de ``harness.defenses.idempotent``: el modelo elige las rutas,
así que ninguna puede salir del directorio de trabajo ni ser un archivo propio del agente (una
herramienta que los tocara podría falsear el punto de control o el registro).
"""

import os

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE, TMP_SUFFIX
from harness.errors import HarnessError, os_reason


class ToolError(HarnessError):
    """Una entrada que la herramienta rechaza (falta un argumento, ruta fuera del directorio)."""


class ToolOSError(ToolError):
    """Una herramienta que falló por el entorno (el disco, un permiso, un enlace), no por lo que pidió
    el modelo. ``str(err)`` es lo que lee el modelo; ``line`` lo que lee una persona si la corrida se
    detiene. ``lasting``: reintentar no cambia nada (un enlace duro), la corrida se detiene enseguida."""

    def __init__(self, message, *, action, path, reason, lasting=False):
        super().__init__(message)
        self.action, self.path, self.reason, self.lasting = action, path, reason, lasting
        self.tool = None  # lo pone run_tool

    def line(self, times=1):
        """La línea de ``main()``: qué herramienta, qué operación, con qué archivo, por qué y qué hacer."""
        tool = f"{self.tool} " if self.tool else ""
        repeated = f" ({times} veces seguidas)" if times > 1 else ""
        if os.path.exists(CHECKPOINT_FILE):
            then = f"{CHECKPOINT_FILE} guarda dónde quedó. Cuando se resuelva, retoma con --resume."
        else:  # la variante «solo-b» antes de su primer punto B: no hay nada que retomar
            then = "no había nada guardado todavía. Cuando se resuelva, vuelve a correr sin --resume."
        return (
            f"{tool}no pudo {self.action} {self.path}{repeated}: {self.reason}. Es una falla del entorno, no "
            f"una respuesta del modelo: la corrida se detuvo y {then}"
        )


def text_arg(tool_input, key):
    """El argumento ``key``: un texto no vacío, o ``ToolError``."""
    value = tool_input.get(key) if isinstance(tool_input, dict) else None
    if not isinstance(value, str) or not value:
        raise ToolError(f"falta el argumento «{key}» (texto no vacío)")
    return value


def tool_path(tool_input):
    """La ruta pedida en «path» (con sus enlaces resueltos), que no puede salir del directorio de
    trabajo ni ser uno de los archivos del agente."""
    raw = text_arg(tool_input, "path")
    root = os.path.realpath(os.getcwd())
    full = os.path.realpath(os.path.join(root, raw))
    if os.path.commonpath([root, full]) != root:
        raise ToolError(f"la ruta {raw} queda fuera del directorio de trabajo")
    name = os.path.basename(full)
    if os.path.dirname(full) == root and (
        name in (CHECKPOINT_FILE, EFFECTS_FILE) or name.endswith(TMP_SUFFIX)
    ):
        raise ToolError(
            f"la ruta {raw} es un archivo propio del agente ({name}); ninguna herramienta lo toca"
        )
    return full


def os_failure(action, tool_input, err):
    """La ``ToolOSError`` de un ``OSError`` al ``action`` (leer, escribir en) el archivo pedido."""
    raw, reason = tool_input["path"], os_reason(err)
    return ToolOSError(f"no se pudo {action} {raw}: {reason}", action=action, path=raw, reason=reason)


def link_reason(path, shown=None):
    """Por qué ``path`` no se puede escribir en su lugar, o None: es un enlace simbólico, o un archivo
    con más de un nombre (un enlace duro): cambiarlo cambiaría también el otro. ``shown``: la ruta tal
    como la pidió el modelo, si el enlace simbólico se mira ahí y no en ``path`` ya resuelta."""
    if os.path.islink(shown or path):
        return (
            "es un enlace simbólico, y escribirlo cambiaría el archivo al que apunta; bórralo (el enlace, "
            "no su destino)"
        )
    try:
        names = os.lstat(path).st_nlink
    except FileNotFoundError:
        return None
    if names <= 1:
        return None
    return (
        f"tiene {names} nombres en el disco (un enlace duro) y escribirlo cambiaría también el otro "
        "archivo; quita ese enlace (borra el nombre que sobra)"
    )


def refuse_hard_link(path, tool_input):
    """Un archivo a escribir que es otro nombre de otro archivo no se escribe: un enlace duro (a
    effects.json, por ejemplo) o un enlace simbólico (a sales-notes.txt). Reintentar no lo arregla: la
    corrida se detiene (``lasting``) con una línea."""
    raw = tool_input["path"]
    reason = link_reason(path, os.path.join(os.getcwd(), raw))
    if reason:
        raise ToolOSError(
            f"no se escribió {raw}: {reason}", action="escribir en", path=raw, reason=reason, lasting=True
        )

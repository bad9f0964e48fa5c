"""Lo que una herramienta recibe del modelo: argumentos de texto y rutas dentro del directorio de trabajo.

Lo usan ``harness.tools`` y la escritura con clave de ``harness.idempotent``: el modelo elige las rutas,
así que ninguna puede salir del directorio de trabajo ni ser un archivo propio del agente (una
herramienta que los tocara podría falsear el punto de control o el registro).
"""

import os

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE, TMP_SUFFIX
from harness.errors import HarnessError


class ToolError(HarnessError):
    """Una entrada que la herramienta rechaza (falta un argumento, ruta fuera del directorio)."""


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

"""La excepción base de las condiciones esperadas: main() las muestra en una línea, sin traza."""

import os


class HarnessError(Exception):
    """Un error que la persona usuaria puede entender y resolver (archivo corrupto, falta algo…)."""


# Los motivos más comunes de un OSError, en español (el strerror del sistema viene en inglés).
_OS_REASONS = {
    2: "no existe",
    13: "sin permiso",
    20: "no es un directorio",
    21: "es un directorio",
    28: "el disco está lleno",
    30: "el sistema de archivos es de solo lectura",
}


def os_reason(err):
    """El motivo de ``err`` (un OSError) en una frase corta en español."""
    return _OS_REASONS.get(err.errno, err.strerror or "error del sistema")


def disk_failure(err):
    """La línea de ``main()`` para un ``OSError`` que no se esperaba (disco lleno, sin permiso…)."""
    where = os.path.basename(err.filename or "") or "el directorio de trabajo"
    return (
        f"No se pudo escribir en {where}: {os_reason(err)}. El último punto de control guardado sigue "
        "intacto: cuando se resuelva, retoma con --resume."
    )

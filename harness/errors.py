"""La excepción base de las condiciones esperadas: main() las muestra en una línea, sin traza."""


class HarnessError(Exception):
    """Un error que la persona usuaria puede entender y resolver (archivo corrupto, falta algo…)."""

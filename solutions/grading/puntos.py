"""Los puntos como los escribe una persona: redondeados a centésimos en todo lo que se muestra.

nbgrader suma en coma flotante (2/7 + 2/7… da ``3.4299999999999997``); cada nota de una pregunta ya
viene en centésimos (``judge.PartlyRight``, las notas a mano), así que redondear la suma a centésimos
da exactamente la suma de lo que se ve: los totales cuadran.
"""

DECIMALS = 2


def rounded(value):
    """``value`` en centésimos (None sigue siendo None)."""
    return None if value is None else round(float(value), DECIMALS) + 0.0  # + 0.0: sin «-0»


def text(value):
    """``value`` para leer: centésimos sin ceros de más («3.43», «12», «0.5»)."""
    return f"{rounded(value):.{DECIMALS}f}".rstrip("0").rstrip(".")


def has_more_decimals(value):
    """¿``value`` trae más de dos decimales (una nota a mano que no se puede escribir tal cual)?"""
    return abs(value - round(value, DECIMALS)) > 1e-9

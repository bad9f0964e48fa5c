"""Lo que el agente lee de afuera (sus archivos, las respuestas del modelo), acotado antes de usarlo o
guardarlo: un JSON válido puede igual tumbar al agente más adelante.

- Anidado cientos de niveles, ``json.loads`` o ``json.dumps`` terminan en ``RecursionError``.
- Un sustituto suelto (``"\\ud800"`` escrito como escape JSON) se parsea, pero no se puede volver a
  escribir en UTF-8: el agente cambiaría el disco y caería al guardar, en cada ``--resume``.
- ``NaN``, ``Infinity`` o ``1e999`` se parsean en Python, pero no son JSON para la API ni para otro lenguaje.

``value_problem`` recorre el valor sin recursión y dice el primer problema en una frase en español;
``loads`` parsea y lo comprueba, con un ``Unbounded`` (un ``ValueError``) que dice qué tiene de malo.
"""

import json

# Niveles de anidación de un valor entero (un punto de control, un registro, una respuesta del modelo):
# el de la lección usa 6, y uno de mil tumba a json.
MAX_DEPTH = 64
# Bytes de un archivo que el agente lee entero (el suyo de la lección pesa unos pocos KB).
MAX_FILE_BYTES = 32 * 1024 * 1024
# El entero más grande que cualquier lector de JSON lee igual (JavaScript incluido): 2^53 − 1.
MAX_COUNT = 2**53 - 1

_INFINITE = (float("inf"), float("-inf"))


class Unbounded(ValueError):  # noqa: N818 (se lee como una condición del valor)
    """Un JSON que parsea pero que el agente no puede usar ni volver a escribir: ``str(err)`` dice por qué."""


def _where(path):
    """``messages[0].content`` a partir de la cadena (padre, clave) que arma ``value_problem``."""
    parts = []
    while path:
        path, key = path
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    shown = "".join(reversed(parts)).lstrip(".") or "la raíz"
    return shown if len(shown) <= 60 else shown[:59] + "…"  # una clave enorme no hace enorme la línea


def _text_problem(text):
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return f"tiene un texto con un carácter que no es Unicode válido (U+{ord(text[err.start]):04X}, un sustituto suelto)"
    return None


def _scalar_problem(value):
    if isinstance(value, str):
        return _text_problem(value)
    if isinstance(value, float) and (value != value or value in _INFINITE):
        return "tiene un número que no es finito (NaN o infinito)"
    return None


def value_problem(value, max_depth=MAX_DEPTH):
    """El primer problema de ``value`` (ya parseado), en una frase que dice dónde, o None: más de
    ``max_depth`` niveles, un texto (o una clave) que no es Unicode válido, un número no finito."""
    stack = [(value, 1, None)]  # (valor, nivel, camino como cadena (padre, clave))
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                return f"anida más de {max_depth} niveles"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                problem = _text_problem(key) if isinstance(key, str) else None
                if problem:
                    return f"{problem} en una clave de {_where(path)}"
                stack.append((child, depth + 1, (path, key)))
            continue
        problem = _scalar_problem(item)
        if problem:
            return f"{problem} en {_where(path)}"
    return None


def _no_constant(name):
    raise Unbounded(f"tiene {name}, que no es un número JSON")


def loads(raw):
    """``json.loads(raw)`` acotado: ``ValueError`` si no es JSON, ``Unbounded`` si lo es pero tiene
    algo de lo que ``value_problem`` rechaza (nunca un ``RecursionError``)."""
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise Unbounded(f"anida más de {MAX_DEPTH} niveles") from None
    problem = value_problem(value)
    if problem:
        raise Unbounded(problem)
    return value

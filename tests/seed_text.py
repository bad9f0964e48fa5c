"""Lo que las pruebas leen del texto de la lección (tests/data/leccion_6.txt, copia del seed).

Los textos esperados salen de la lección misma, no de lo que el código imprimió alguna vez.
"""

import os
import re

SEED_PATH = os.path.join(os.path.dirname(__file__), "data", "leccion_6.txt")

with open(SEED_PATH, encoding="utf-8") as _f:
    SEED = _f.read()


def transcript(command):
    """La línea de salida que la lección muestra después de ``$ <command>`` (las entradas entre
    corchetes quedaron pegadas al copiar la terminal)."""
    lines = SEED.splitlines()
    return lines[lines.index(f"$ {command}") + 1]


def template(start):
    """Un template de texto de agent.js (entre comillas invertidas) que empieza con ``start``."""
    match = re.search(re.escape(start) + r"[^`]*", SEED)
    assert match, f"la lección no tiene un texto que empiece con {start!r}"
    return match.group(0)


def fill(text, **values):
    """Reemplaza los ``${...}`` de un template de JavaScript por los valores dados, en orden."""
    parts = re.split(r"\$\{[^}]*\}", text)
    assert len(parts) - 1 == len(values), (text, values)
    out = parts[0]
    for value, part in zip(values.values(), parts[1:], strict=True):
        out += str(value) + part
    return out

"""Predicciones anotadas: lo que escribiste antes de ejecutar, al lado de lo que pasó.

Antes de cada experimento de la lección, una celda guarda tu predicción en un diccionario con una
clave por pregunta y ``...`` como valor («todavía sin escribir»; ``None`` puede ser una respuesta, como
un ``pendingToolUse`` nulo). La celda del experimento termina con ``compare(prediction, observed)``:
``observed`` sale de la corrida misma, nunca de un texto escrito a mano.

    prediccion_reanudar = {"copias del reporte": ...}
    ...
    compare(prediccion_reanudar, {"copias del reporte": report_copies(demo / "report.txt")})
"""

import json
import unicodedata

from harness.notebook.display import show_table

UNWRITTEN = "(sin escribir)"
HEADERS = ["pregunta", "tu predicción", "lo que pasó", ""]
ASK = "Escribe tu predicción en la celda de arriba (en lugar de ...) y vuelve a ejecutar las dos."


def _plain(text):
    """Un texto sin mayúsculas, tildes ni espacios de más, en la misma forma Unicode (NFC o NFD, como
    lo escriba el teclado): «Ninguna » y «ninguna» dicen lo mismo."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFC", str(text)).strip().casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def matches(guess, outcome):
    """Si la predicción dice lo mismo que lo observado (un booleano no es un número: ``1`` no es ``True``)."""
    if isinstance(outcome, bool) or isinstance(guess, bool):
        return guess is outcome
    if isinstance(outcome, (set, frozenset)):
        return isinstance(guess, (set, frozenset, list, tuple)) and {_plain(g) for g in guess} == {
            _plain(o) for o in outcome
        }
    if isinstance(outcome, str):
        return isinstance(guess, str) and _plain(guess) == _plain(outcome)
    return type(guess) is type(outcome) and guess == outcome


# Cómo se nombra cada tipo en la nota de «mismo valor, otro tipo».
TYPE_NAMES = {bool: "un booleano", int: "un número", float: "un número con decimales", str: "un texto"}


def _type_name(value):
    return "None" if value is None else TYPE_NAMES.get(type(value), f"un {type(value).__name__}")


def only_type_differs(guess, outcome):
    """Si la predicción dice el mismo valor con otro tipo: «1» por 1, "null" por None, 1 por True."""
    if guess is Ellipsis or matches(guess, outcome):
        return False
    if type(guess) is not type(outcome) and guess == outcome:  # 1 == True, 2.0 == 2 en Python
        return True
    forms = {str(outcome), json.dumps(outcome, ensure_ascii=False, default=str)}
    return isinstance(guess, str) and any(_plain(guess) == _plain(form) for form in forms)


def _type_notes(guesses, observed):
    return [
        f"En «{key}» el valor coincide pero no el tipo: escribiste {_type_name(guess)} ({guess!r}) y "
        f"pasó {_type_name(observed[key])} ({observed[key]!r})."
        for key, guess in guesses.items()
        if only_type_differs(guess, observed[key])
    ]


def shown(value):
    """Un valor como se lee en la tabla: los conjuntos ordenados, el texto sin comillas."""
    if value is Ellipsis:
        return UNWRITTEN
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(str, value))) + "}" if value else "ninguno"
    return value if isinstance(value, str) else repr(value)


def _mark(guess, outcome):
    if guess is Ellipsis:
        return "—"
    return "✓" if matches(guess, outcome) else "✗"


def _tally(guesses, observed):
    """Cuántas acertaste, o qué hacer si todavía no escribiste ninguna."""
    written = [key for key, guess in guesses.items() if guess is not Ellipsis]
    if not written:
        return ASK
    right = sum(matches(guesses[key], observed[key]) for key in written)
    return f"Acertaste {right} de {len(written)}."


def compare(prediction, observed):
    """Una fila por pregunta (en el orden de tu predicción): lo que predijiste, lo que pasó en la corrida
    y ✓ o ✗; debajo, cuántas acertaste."""
    notes = []
    if not isinstance(prediction, dict):
        notes.append("La predicción tiene que ser el diccionario de su celda, con una clave por pregunta.")
        prediction = {}
    unknown = [str(key) for key in prediction if key not in observed]
    if unknown:
        notes.append(f"Estas claves no son preguntas de este experimento: {', '.join(unknown)}.")
    order = [key for key in prediction if key in observed] + [
        key for key in observed if key not in prediction
    ]
    guesses = {key: prediction.get(key, Ellipsis) for key in order}
    rows = [
        [key, shown(guesses[key]), shown(observed[key]), _mark(guesses[key], observed[key])] for key in order
    ]
    notes += _type_notes(guesses, observed)
    show_table(HEADERS, rows, note=" ".join([*notes, _tally(guesses, observed)]))


comparar = compare  # el nombre de antes, para los notebooks ya repartidos

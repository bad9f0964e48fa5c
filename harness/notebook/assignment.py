"""Tus tres momentos del Nivel 1: los de la lista de la clase, o los tres de siempre si no hay lista.

Quien dicta el curso reparte, junto a los notebooks, ``momentos_nivel_1.json`` (lo arma con su
lista de la clase, como dice docs/instructores.md): a cada estudiante, tres momentos de la familia
(``harness.notebook.moments``). El archivo no guarda nombres (cada id va como su huella) ni ninguna
respuesta. Quien califica lee el mismo archivo, el repartido (nunca el de la entrega), con el nombre de
la carpeta de la entrega: por eso tu id es el que usa nbgrader (en JupyterHub, tu usuario).
"""

import hashlib
import json
import os

from harness.errors import HarnessError
from harness.notebook.moments import DEFAULT, GRADED

FILE_NAME = "momentos_nivel_1.json"
# Dónde va cada huella y sus momentos dentro del archivo.
STUDENTS = "estudiantes"
# La variable de entorno con tu usuario cuando el notebook corre en JupyterHub.
HUB_USER = "JUPYTERHUB_USER"
# Los momentos del último ``show_my_moments`` de este kernel (los que revisan las celdas de prueba).
_shown = {}


class NotAssignedError(HarnessError):
    """Un id que no está en la lista de la clase (o ningún id, con lista)."""


def key(student):
    """La huella de un id de estudiante: lo que guarda el archivo en lugar del nombre."""
    return hashlib.sha256(f"leccion_6:{student}".encode()).hexdigest()[:20]


def load(folder):
    """{huella: [ids de momentos]} del archivo de ``folder``, o None si no hay lista de la clase."""
    path = os.path.join(folder, FILE_NAME)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)[STUDENTS]


def moments_for(student, folder):
    """Los tres ids de momentos de ``student`` según la lista de ``folder`` (sin lista: ``DEFAULT``)."""
    assigned = load(folder)
    if assigned is None:
        return DEFAULT
    if not student:
        raise NotAssignedError(
            "hay lista de la clase y no sé quién eres: escribe tu id en ESTUDIANTE (el que usa nbgrader)"
        )
    if key(student) not in assigned:
        raise NotAssignedError(
            f"«{student}» no está en la lista de la clase ({FILE_NAME}): revisa que sea tu id de nbgrader "
            "o pide a quien dicta el curso que te agregue"
        )
    return tuple(assigned[key(student)])


def show_my_moments(student=None, folder="."):
    """Muestra tus tres momentos (``student``, o tu usuario de JupyterHub) y los devuelve."""
    student = student if isinstance(student, str) and student.strip() else os.environ.get(HUB_USER)
    _shown.clear()
    try:
        mine = moments_for(student, folder)
    except NotAssignedError as err:
        print(f"✗ {err}")
        return ()
    _shown["ids"] = mine
    said = (
        "según la lista de la clase" if load(folder) is not None else "sin lista de la clase: los de siempre"
    )
    print(f"Tus momentos ({said}):")
    for n, moment_id in enumerate(mine, 1):
        print(f"  {n}. {GRADED[moment_id].describe()}")
    return mine


def shown():
    """Los momentos que mostró ``show_my_moments`` en este kernel (vacío si todavía no)."""
    return _shown.get("ids", ())

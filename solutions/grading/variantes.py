"""Tres momentos del Nivel 1 para cada estudiante de la lista: el comando de quien dicta el curso.

    python -m solutions.grading.variantes LISTA [--carpeta notebooks]

``LISTA`` es un archivo de texto (un id por línea) o un CSV (la primera columna; un encabezado «id»,
«student_id», «estudiante» o «usuario» se salta): los ids son los nombres de carpeta que usa nbgrader.
Escribe ``momentos_nivel_1.json`` en la carpeta de los notebooks que se reparten (la de
``harness.notebook.assignment``): sin nombres (cada id va como su huella) y sin ninguna respuesta.

- Cada estudiante recibe un momento de cada dificultad (``harness.notebook.moments``).
- Dos estudiantes comparten a lo sumo un momento: los tríos salen de un rectángulo latino sobre los
  tres grupos de dificultad (el trío (i, j) lleva el i-ésimo del grupo más chico, el j-ésimo del
  mediano y el (i + j)-ésimo del más grande: dos tríos distintos coinciden a lo sumo en uno).
- Lo de cada id es estable: una huella del id elige su trío y, si ya es de otro, se prueba el siguiente.
  Un archivo que ya existe se conserva y solo se agregan los nuevos: agregar estudiantes no cambia a nadie.

Al final mide la verdad de cada momento repartido (``truth``, una vez por momento): calificar la encuentra.
"""

import csv
import hashlib
import json
import os
import re
import sys

from harness.conformidad.spanish_args import command_parser
from harness.notebook.assignment import FILE_NAME, STUDENTS, key
from harness.notebook.moments import GRADED
from solutions.grading import truth
from solutions.grading.paths import NOTEBOOKS

# Un id que nbgrader acepta como nombre de carpeta: letras, dígitos y «. _ @ + -», sin empezar por signo.
VALID_ID = re.compile(r"[^\W_][\w.@+-]{0,99}")
HEADERS = {"id", "student_id", "estudiante", "usuario"}
# La huella de la familia: una lista repartida con otra familia no se extiende (sus ids dirían otra cosa).
FAMILY_KEY = "familia"


class RosterError(ValueError):
    """La lista de la clase no sirve: el mensaje dice por qué, en español."""


def read_roster(path):
    """Los ids de ``path``, en su orden (``RosterError`` si está vacía, repite ids o tiene uno inválido)."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = (
            [row[0] if row else "" for row in csv.reader(f)]
            if path.endswith(".csv")
            else f.read().splitlines()
        )
    lines = [(n, text.strip()) for n, text in enumerate(rows, 1)]
    lines = [(n, s) for n, s in lines if s and not s.startswith("#")]
    if lines and lines[0][1].casefold() in HEADERS:
        lines = lines[1:]
    if not lines:
        raise RosterError(f"{path} no tiene ningún id de estudiante (uno por línea)")
    bad = [f"línea {n}: «{s}»" for n, s in lines if not VALID_ID.fullmatch(s)]
    if bad:
        raise RosterError(
            "estos ids no sirven como carpeta de nbgrader (solo letras, dígitos y . _ @ + -, sin espacios "
            "ni barras, empezando por letra o dígito): " + "; ".join(bad)
        )
    first, repeated = {}, []
    for n, student in lines:
        if student in first:
            repeated.append(f"«{student}» (líneas {first[student]} y {n})")
        first.setdefault(student, n)
    if repeated:
        raise RosterError("ids repetidos: " + "; ".join(repeated))
    return [s for _, s in lines]


def family_print():
    return hashlib.sha256("\n".join(m.describe() for m in GRADED.values()).encode()).hexdigest()[:20]


def triples():
    """Los tríos posibles, cada uno en orden de dificultad: de a pares comparten a lo sumo un momento."""
    groups = {}
    for moment in GRADED.values():
        groups.setdefault(moment.difficulty, []).append(moment.id)
    small, middle, large = sorted(groups.values(), key=len)
    found = []
    for i, a in enumerate(small):
        for j, b in enumerate(middle):
            trio = (a, b, large[(i + j) % len(large)])
            found.append(tuple(sorted(trio, key=lambda m: GRADED[m].difficulty)))
    return found


def assign(roster, existing=None):
    """{huella: [3 ids]}: ``existing`` tal cual, más un trío libre para cada id nuevo de ``roster``."""
    assigned = dict(existing or {})
    options = triples()
    taken = {tuple(t) for t in assigned.values()}
    new = [s for s in roster if key(s) not in assigned]
    if len(assigned) + len(new) > len(options):
        raise RosterError(
            f"la familia alcanza para {len(options)} estudiantes con a lo sumo un momento en común; "
            f"la lista pide {len(assigned) + len(new)}"
        )
    for student in new:
        start = int(hashlib.sha256(student.encode()).hexdigest(), 16) % len(options)
        trio = next(
            options[(start + k) % len(options)]
            for k in range(len(options))
            if options[(start + k) % len(options)] not in taken
        )
        taken.add(trio)
        assigned[key(student)] = list(trio)
    return assigned


def existing_assignment(path):
    """Lo ya repartido en ``path`` ({} si no hay archivo); ``RosterError`` si es de otra familia."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        stored = json.load(f)
    if stored.get(FAMILY_KEY) != family_print():
        raise RosterError(
            f"{path} se repartió con otra familia de momentos (cambiaron sus tablas): sus ids ya no dicen "
            "los mismos momentos; muévelo de ahí para repartir una lista nueva"
        )
    return stored[STUDENTS]


def write_assignment(folder, roster):
    """Escribe (o extiende) ``momentos_nivel_1.json`` en ``folder``; {id: trío} de los de ``roster``."""
    path = os.path.join(folder, FILE_NAME)
    assigned = assign(roster, existing_assignment(path))
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump({FAMILY_KEY: family_print(), STUDENTS: assigned}, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)
    return {student: tuple(assigned[key(student)]) for student in roster}


def main(argv=None):
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("lista", help="la lista de la clase: un id de nbgrader por línea (o un CSV)")
    parser.add_argument("--carpeta", default=NOTEBOOKS, help="donde están los notebooks que se reparten")
    args = parser.parse_args(argv)
    try:
        mine = write_assignment(args.carpeta, read_roster(args.lista))
    except (OSError, RosterError) as err:
        print(err, file=sys.stderr)
        return 1
    for student, trio in mine.items():
        print(f"{student}: {', '.join(trio)}")
    # La verdad de cada momento repartido, medida ahora (una vez por momento): calificar ya la encuentra.
    used = {m for trio in mine.values() for m in trio}
    truth.measured(used)
    print(f"verdad medida de {len(used)} momentos (guardada en {os.path.relpath(truth.CACHE)})")
    print(
        f"{len(mine)} estudiantes con sus tres momentos en {os.path.join(args.carpeta, FILE_NAME)} "
        f"(la familia alcanza para {len(triples())})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Nivel 1, medido: lo que de verdad queda en disco en cada momento de la familia.

La verdad no se escribe a mano: se mide matando al agente del momento (``escenarios``: el de la lección
con el cambio de su variante), en un proceso nuevo con ``CRASH_AFTER``, leyendo el disco y reanudando
(``harness.notebook.moment_run``). Cada momento se mide una vez y queda en ``CACHE``, con la huella de
lo que decide su verdad (el agente de la lección, los escenarios y el arnés que el agente importa):
si algo de eso cambia, se vuelve a medir.
"""

import glob
import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

from harness.notebook.exercise_feedback import FIELDS
from harness.notebook.moment_run import observe
from harness.notebook.moments import FAMILY
from solutions.grading import escenarios
from solutions.grading.paths import GRADING, LESSON_AGENT, ROOT

# Lo que se predice de cada momento: las claves que el ejercicio nombra.
OBSERVED_FIELDS = tuple(FIELDS)
# Una clase en paralelo mide una vez: grade_class guarda la medición en este archivo para cada proceso.
TRUTH_FILE_ENV = "LESSON6_TRUTH"
# La medición guardada entre corridas (en la carpeta de trabajo de quien califica, fuera de git).
CACHE = os.path.join(GRADING, "_trabajo", "verdades.json")
# El agente del momento importa este paquete: se corre con el repositorio a la vista.
SCENARIO_ENV = {"PYTHONPATH": ROOT}
# Corridas a la vez al medir muchos momentos (cada una son dos procesos cortos, uno tras otro).
PARALLEL = 2


def decisive_files():
    """Los archivos que deciden la verdad de un momento: el agente, sus cambios y lo que importa."""
    harness = os.path.join(ROOT, "harness")
    return sorted(
        [
            LESSON_AGENT,
            escenarios.__file__,
            __file__,
            *glob.glob(os.path.join(harness, "*.py")),
            *glob.glob(os.path.join(harness, "defenses", "*.py")),
            *(os.path.join(harness, "notebook", f"{m}.py") for m in ("moments", "moment_run", "disk_state")),
        ]
    )


def fingerprint():
    digest = hashlib.sha256()
    for path in decisive_files():
        digest.update(os.path.relpath(path, ROOT).encode())
        with open(path, "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


def observe_moment(moment_id):
    """Las siete claves del momento ``moment_id``, medidas en una carpeta nueva."""
    moment = FAMILY[moment_id]
    with tempfile.TemporaryDirectory(prefix=f"momento-{moment_id}-") as root:
        workdir = os.path.join(root, "trabajo")
        os.makedirs(workdir)
        return observe(workdir, escenarios.build(root, moment), moment, env=SCENARIO_ENV).keys


def _cached(print_to):
    try:
        with open(CACHE, encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return {}
    if stored.get("huella") == print_to:
        return stored.get("verdades", {})
    return {}


def _store(print_to, truths):
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    # Un temporal propio: dos procesos que guardan a la vez no se pisan a medio escribir.
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(CACHE), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"huella": print_to, "verdades": truths}, f, ensure_ascii=False, indent=1, sort_keys=True)
    os.replace(temporary, CACHE)


def measured(ids):
    """{id: las siete claves} de los momentos ``ids``: del archivo de la clase que se califica
    (``TRUTH_FILE_ENV``) o de ``CACHE`` si su huella es la de hoy; lo que falta se mide y se guarda."""
    ids = sorted(set(ids))
    if os.environ.get(TRUTH_FILE_ENV):
        with open(os.environ[TRUTH_FILE_ENV], encoding="utf-8") as f:
            given = json.load(f)
        if all(i in given for i in ids):
            return {i: _in_order(given[i]) for i in ids}
    unknown = [i for i in ids if i not in FAMILY]
    if unknown:
        raise KeyError(f"no son momentos de la familia: {', '.join(unknown)}")
    print_to = fingerprint()
    truths = _cached(print_to)
    missing = [i for i in ids if i not in truths]
    if missing:
        with ThreadPoolExecutor(PARALLEL) as pool:
            truths.update(zip(missing, pool.map(observe_moment, missing), strict=True))
        _store(print_to, truths)
    return {i: _in_order(truths[i]) for i in ids}


def _in_order(keys):
    """Las siete claves en el orden del enunciado (el archivo las guarda ordenadas por nombre)."""
    return {field: keys[field] for field in OBSERVED_FIELDS}

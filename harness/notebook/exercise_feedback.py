"""Marcado local de los ejercicios: formatos, pistas y tu propio código corriendo bajo una caída.

Nada de este módulo sabe la respuesta. En el Nivel 1 revisa que cada predicción tenga la forma
pedida (la compara con lo que de verdad queda en disco quien califica, fuera de tu kernel). En el
Nivel 2 corre tu función y tu script en procesos nuevos, los mata con SIGKILL en el momento pedido
y te muestra lo que dejaron en disco. Mientras nbgrader califica, no corre nada: la calificación se
hace aparte.
"""

import ast
import difflib
import json
import linecache
import os
import re
import unicodedata

from harness.contract import (
    BRANCH_WORDS,
    CHECKPOINT_FILE,
    CRASH_VAR,
    EFFECTS_FILE,
    LESSON_AGENT_VAR,
    ORDER_VAR,
)
from harness.defenses.workdir import fresh_dir
from harness.errors import HarnessError
from harness.notebook import assignment
from harness.notebook.disk_state import read_disk_state
from harness.notebook.export import PRODUCTION_NOTEBOOK, export_agent, render_agent
from harness.runs.kill_at_moment import run_and_kill
from harness.runs.launcher import load_agent, run_agent_process
from harness.scenario import EFFECT, SAVE_A, TOOL, TURNS, label
from harness.text import plural
from harness.tools import REPORT_PATH, REPORT_TITLE

LESSON = "leccion_6_puntos_de_control.ipynb"

# —— Nivel 1 ——

# La rama de --resume cuando no imprimió ni su línea «[resume] leído …»: se negó antes de leer el estado guardado.
NOT_RESUMED = "no reanudó"
# Las ramas de --resume, con las palabras de sus líneas de log, y la de una reanudación que se negó.
BRANCHES = (*BRANCH_WORDS.values(), NOT_RESUMED)


# Las claves cuyo texto no distingue mayúsculas (el enunciado lo dice en su tabla de claves).
CASELESS = ("reconcile_branch",)


def canonical(key, value):
    """``value`` de la clave ``key`` como se compara, aquí y al calificar: un texto en su forma NFC
    (una «ó» escrita como «o» más la tilde combinada es la misma «ó») y, en las claves de ``CASELESS``,
    sin mayúsculas. Lo que no es texto queda igual."""
    if type(value) is not str:
        return value
    value = unicodedata.normalize("NFC", value)
    return value.casefold() if key in CASELESS else value


def same_value(key, guess, value):
    """¿Acierta ``guess`` el valor ``value`` de la clave ``key``? Aquí, en la Práctica, y al calificar:
    el mismo tipo (en JSON ``true`` no es ``1``) y el mismo valor, con los textos en su forma canónica."""
    guess, value = canonical(key, guess), canonical(key, value)
    return type(guess) is type(value) and guess == value


def _count(v):
    return type(v) is int and v >= 0


def _branch(v):
    return type(v) is str and canonical("reconcile_branch", v) in {
        canonical("reconcile_branch", b) for b in BRANCHES
    }


# Cada clave de una predicción: qué valores acepta y cómo se revisa su forma (nunca si acierta).
FIELDS = {
    "pending_tool_use": ("un nombre de herramienta o None", lambda v: v is None or type(v) is str),
    "tool_result_in_messages": ("True o False", lambda v: type(v) is bool),
    "ledger_has_entry": ("True o False", lambda v: type(v) is bool),
    "reconcile_branch": (" o ".join(map(repr, BRANCHES)), _branch),
    "resume_finishes": ("True o False", lambda v: type(v) is bool),
    "report_copies_after_resume": ("un entero ≥ 0", _count),
    "notices_after_resume": ("un entero ≥ 0", _count),
}


def grading_elsewhere():
    """True mientras nbgrader califica: las comprobaciones corren fuera de este kernel."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def format_problems(answer, fields):
    """[(clave, problema)] de forma; vacío si todas las claves están y cada valor es de su tipo."""
    if type(answer) is not dict:
        return [("(todo)", "tiene que ser un diccionario {clave: valor}")]
    found = [(key, "falta esta clave") for key in fields if key not in answer]
    found += [(key, "clave desconocida") for key in answer if key not in fields]
    found += [
        (key, f"valor no válido: {why_not(key, answer[key])}; usa {allowed}")
        for key, (allowed, ok) in fields.items()
        if key in answer and not ok(answer[key])
    ]
    return found


def _unusual(text):
    """Los caracteres de ``text`` que no se ven o se confunden (espacios raros, marcas invisibles)."""
    return [
        f"{unicodedata.name(c, 'sin nombre').lower()} (U+{ord(c):04X}) en la posición {i + 1}"
        for i, c in enumerate(unicodedata.normalize("NFC", text))
        if unicodedata.category(c) in ("Zs", "Cf", "Cc", "Mn") and c != " "
    ]


def why_not(key, value):
    """Por qué ``value`` no vale para ``key``, dicho para poder arreglarlo."""
    if value is Ellipsis:
        return "todavía es ...: reemplázalo por tu predicción"
    allowed = FIELDS[key][0]
    if type(value) is str and value in ("True", "False") and allowed == "True o False":
        return f"es el texto {value!r}; escribe {value} sin comillas"
    if type(value) is float and value.is_integer() and "entero" in allowed:
        return f"{value!r} tiene decimales; escribe el entero {int(value)}"
    if type(value) is not str or key != "reconcile_branch":
        kind = {str: "un texto", int: "un entero", float: "un número con decimales", bool: "un booleano"}
        return f"{value!r} es {kind.get(type(value), f'de tipo {type(value).__name__}')}"
    said = f"«{value}» no es ninguna de las frases de la tabla"
    odd = _unusual(value)
    if odd:
        return f"{said}: tiene {', '.join(odd)}"
    close = difflib.get_close_matches(canonical(key, value), BRANCHES, n=1, cutoff=0.6)
    return f"{said} (¿quisiste decir «{close[0]}»? Cópiala tal cual, con sus tildes)" if close else said


def check_prediction_format(n, prediction):
    """Marcado local de tu momento ``n`` (1, 2 o 3, los de ``show_my_moments``): que ``prediction`` tenga
    su predicción, con la forma pedida (claves y tipos); nunca si acierta."""
    if grading_elsewhere():
        return True
    mine = assignment.shown()
    if not mine:
        print(f"✗ momento {n}: primero ejecuta la celda que muestra tus momentos")
        return False
    moment = mine[n - 1]
    if moment not in prediction:
        print(f'✗ momento {n} ({moment}): todavía sin responder (prediction["{moment}"] = {{...}})')
        return False
    problems = dict(format_problems(prediction[moment], FIELDS))
    if not problems:
        print(
            f"✓ momento {n} ({moment}): formato correcto. Quien califica lo compara con lo que de verdad "
            "queda en disco."
        )
        return True
    print(f"✗ momento {n} ({moment}):")
    for key, problem in problems.items():
        print(f"  ✗ {key}: {problem}")
    return False


# —— Nivel 2 ——

TOOL_USE_ID = TURNS[3].id
REPORT_INPUT = {"path": REPORT_PATH, "content": f"{REPORT_TITLE}\n\nClientes con novedades: 5.\n"}
# El turno 3 de la lección: el modelo pide write_report, la herramienta con efecto secundario.
WRITE_REPORT_CALL = [{"type": "tool_use", "id": TOOL_USE_ID, "name": TURNS[3].name, "input": REPORT_INPUT}]
# El instante entre el registro y la herramienta: lo primero que ocurra de los dos.
BETWEEN = ("registro", "herramienta:write_report")
WORKDIR = os.path.join("_trabajo", "nivel_2")
# Dónde muere el script del Nivel 2 con cada orden: el de producción al escribir el registro (anotación
# null, herramienta sin correr), el corregido al volver la herramienta (reporte escrito, sin anotación).
SCRIPT_CRASHES = {"prod": label(EFFECT, 1), "fixed": label(TOOL, 1)}

_agent = {}
# Lo único del agente que reciben la función y el script del Nivel 2: su registro.
LEDGER_NAMES = ("save_effect", "now_ms")
LEDGER_AGENT = "registro_del_agente.py"
# Lo que responde el agente prestado si se le pide otra cosa (su run_tool_uses, por ejemplo).
LEDGER_ONLY = """


def __getattr__(name):
    raise AttributeError(
        f"el agente que recibe tu código solo presta {names}, no {{name}}: la corrección tiene que "
        "ser tu propio código, no una llamada al agente"
    )
"""


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def ledger_only(agent_source):
    """El texto de un ``agent.py`` reducido a su registro: sus importaciones y constantes, y las
    funciones de ``LEDGER_NAMES`` con las que ellas usan (``load_effects``, ``write_json_atomic``…).
    Sin ``run_tool_uses``, ``reconcile``, ``run_agent`` ni ``main``: una corrección que solo llama al
    agente no tiene a quién llamar, y lo que se califica es el código de la celda."""
    tree = ast.parse(agent_source)
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    wanted, queue = set(), list(LEDGER_NAMES)
    while queue:
        name = queue.pop()
        if name in functions and name not in wanted:
            wanted.add(name)
            queue += _names(functions[name])
    kept = [
        n
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign))
        or getattr(n, "name", None) in wanted
    ]
    text = ast.unparse(ast.Module(body=kept, type_ignores=[]))
    return text + LEDGER_ONLY.format(names=" y ".join(LEDGER_NAMES))


def ledger_agent():
    """La ruta de un ``agent.py`` con solo el registro que reciben tu función y tu script (``ledger_only``),
    igual que al calificar: ``save_effect`` y ``now_ms`` de la lección, con la lectura y la escritura del
    registro de «De la lección a producción». Escribe por ``write_durable`` del arnés (temporal + rename,
    como la lección): así quien corre tu código ve cada anotación y puede matar en ese instante. Vive
    junto a tu agente de la lección; si ya está ahí, se usa ese."""
    lesson_agent()
    path = os.path.join(os.path.dirname(_agent["path"]), LEDGER_AGENT)
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(ledger_only(_ledger_source()))
    return path


def _ledger_source():
    """El código del que sale ese registro: el agente de ``LESSON_AGENT`` si se indicó uno (al calificar y
    en las fuentes del instructor: el de referencia, con ese mismo registro), o la lección y «De la
    lección a producción» guardadas junto a este notebook."""
    if os.environ.get(LESSON_AGENT_VAR):
        with open(_agent["path"], encoding="utf-8") as f:
            return f.read()
    if not os.path.exists(PRODUCTION_NOTEBOOK):
        raise HarnessError(
            f"No encuentro {PRODUCTION_NOTEBOOK} en esta carpeta: abre el ejercicio desde notebooks/."
        )
    return render_agent([LESSON, PRODUCTION_NOTEBOOK])


def lesson_agent():
    """El agente de la lección como módulo: el de ``LESSON_AGENT`` si está, o el que se arma desde
    las celdas ``#| export`` de la lección guardada junto a este notebook (solo la lección: los
    ejercicios vienen antes de «De la lección a producción»)."""
    if "module" not in _agent:
        path = os.environ.get(LESSON_AGENT_VAR)
        if not path:
            if not os.path.exists(LESSON):
                raise HarnessError(
                    f"No encuentro {LESSON} en esta carpeta: abre el ejercicio desde notebooks/, junto a la "
                    f"lección (o indica un agent.py en {LESSON_AGENT_VAR})."
                )
            path = str(export_agent([LESSON], os.path.join(WORKDIR, "agent.py")))
        _agent["path"], _agent["module"] = os.path.abspath(path), load_agent(path, "leccion")
    return _agent["module"]


def lesson_ledger():
    """(save_effect, now_ms) de tu agente de la lección, para leer y probar código en este kernel.
    Mientras nbgrader califica no hace falta el agente: devuelve funciones que lo dicen si se llaman."""
    if grading_elsewhere():

        def elsewhere(*args):
            raise HarnessError(
                "durante la calificación, tu código corre en procesos aparte, no en este kernel"
            )

        return elsewhere, elsewhere
    agent = lesson_agent()
    return agent.save_effect, agent.now_ms


def reset_workdir():
    """Vacía ``_trabajo/nivel_2`` y arma ahí el agente de la lección. Al calificar solo la vacía: la
    celda ``%%writefile`` escribe ahí, y sin carpeta la nota devuelta mostraría un error que no es tuyo."""
    fresh_dir(WORKDIR)
    if not grading_elsewhere():
        _agent.clear()
        lesson_agent()


def scratch(name):
    return fresh_dir(os.path.abspath(os.path.join(WORKDIR, name)))


def cell_source(fn):
    """La celda entera donde se definió ``fn`` (IPython la guarda en linecache)."""
    lines = linecache.getlines(fn.__code__.co_filename)
    if not lines:
        raise HarnessError(f"no encuentro la celda de {fn.__name__}: ejecuta esa celda otra vez")
    return "".join(lines)


def shown_entry(workdir):
    """La anotación de toolu_03 tal cual está en el registro, con la marca de tiempo «at» tapada
    (cambia en cada corrida)."""
    entry = read_disk_state(workdir).entries.get(TOOL_USE_ID)
    if entry is None:
        return f"{EFFECTS_FILE}: sin anotación de {TOOL_USE_ID}"
    raw = json.dumps({TOOL_USE_ID: entry}, ensure_ascii=False, indent=2)
    return f"{EFFECTS_FILE}, la anotación de {TOOL_USE_ID}:\n" + re.sub(r'"at": \d+', '"at": <ms>', raw)


def last_line(run):
    """La última línea que tu código escribió en stderr (la del error, si lanzó uno)."""
    return (run.stderr.strip().splitlines() or ["terminó sin escribir nada"])[-1]


def script_env(order):
    """El entorno del script del Nivel 2 con ese orden y su caída, y cómo se escribe en la terminal
    («ORDER=prod CRASH_AFTER=after-effect-write:1»)."""
    env = {ORDER_VAR: order, CRASH_VAR: SCRIPT_CRASHES[order]}
    return env, " ".join(f"{name}={value}" for name, value in env.items())


def _said(run):
    """Lo último que tu código escribió en stderr, si escribió algo (no cuenta como error)."""
    return f"\n  (stderr: {last_line(run)})" if run.stderr.strip() else ""


def check_fixed_function(fn):
    """Corre tu ``run_tool_uses_fixed`` en procesos nuevos: sin caída, y matado con SIGKILL justo
    cuando write_report vuelve. Muestra el disco y dice qué propiedad del contrato no se cumple."""
    if grading_elsewhere():
        return True
    source, ok = cell_source(fn), True
    for title, stop in (
        ("sin caída", None),
        ("SIGKILL justo cuando write_report vuelve", "herramienta:write_report"),
    ):
        workdir = scratch("sin_caida" if stop is None else "caida_tras_herramienta")
        run = run_and_kill(
            workdir, agent=ledger_agent(), stop_at=stop, source=source, content=WRITE_REPORT_CALL
        )
        state = read_disk_state(workdir)
        entry = state.entries.get(TOOL_USE_ID)
        if stop is None:
            problem = (run.returncode != 0 and f"terminó con código {run.returncode}") or (
                not (entry and isinstance(entry.get("result"), str))
                and f"{EFFECTS_FILE} no anota el resultado real"
            )
        else:
            problem = (not run.killed_at_moment and "la herramienta nunca volvió: llama a run_tool") or (
                entry is not None and f"tras la caída, {EFFECTS_FILE} ya da por hecha a {TOOL_USE_ID}"
            )
        print(f"{'✓' if not problem else '✗'} {title}{': ' + problem if problem else ''}{_said(run)}")
        print("  " + str(state).replace("\n", "\n  "))
        ok = ok and not problem
    return ok


def check_script(script):
    """Corre tu script con cada orden y su caída en procesos nuevos (SIGKILL en su crash_point)."""
    if grading_elsewhere():
        return True
    if not os.path.exists(script):
        print(f"✗ no existe {script}: ejecuta la celda %%writefile")
        return False
    ok = True
    for order, want in (
        ("prod", "toolu_03 con result null y sin report.txt"),
        ("fixed", "report.txt escrito y sin anotación de toolu_03"),
    ):
        workdir = scratch(f"script_{order}")
        env, shown = script_env(order)
        run = run_and_kill(workdir, agent=ledger_agent(), stop_at="caida", script=script, env=env)
        state = read_disk_state(workdir)
        entry = state.entries.get(TOOL_USE_ID)
        if order == "prod":
            good = entry is not None and entry.get("result") is None and not state.report_copies
        else:
            good = entry is None and state.report_copies == 1
        good = good and run.killed_at_moment
        print(f"{'✓' if good else '✗'} {shown}: se espera {want}{_said(run)}")
        print("  " + str(state).replace("\n", "\n  "))
        ok = ok and good
    return ok


def show_incident(fn):
    """El incidente, en vivo: el agente de la lección muere en el punto A del turno 3; ``fn`` corre
    esa llamada y muere con SIGKILL entre el registro y la herramienta; después, ``--resume``."""
    if grading_elsewhere():
        return
    lesson_agent()
    workdir = scratch(f"incidente_{fn.__name__}")
    run_agent_process(workdir, agent=_agent["path"], crash_after=label(SAVE_A, 3))
    pending = json.loads(open(os.path.join(workdir, CHECKPOINT_FILE), encoding="utf-8").read())[
        "pendingToolUse"
    ]
    call = [{"type": "tool_use", **pending}]
    source = cell_source(fn)
    run = run_and_kill(
        workdir, agent=ledger_agent(), stop_at=BETWEEN, function=fn.__name__, source=source, content=call
    )
    if not run.killed_at_moment:
        print(f"✗ {fn.__name__} no llegó al instante entre el registro y la herramienta: {last_line(run)}")
        return
    print(f"{fn.__name__}: SIGKILL entre el registro y la herramienta. En disco:")
    print(shown_entry(workdir))
    resumed = run_agent_process(workdir, agent=_agent["path"], resume=True)
    print("\n$ python agent.py --resume")
    print(resumed.output, end="")  # stdout y stderr en el orden en que se escribieron
    copies = read_disk_state(workdir).report_copies
    # El código siempre, también el 0: que la reanudación «terminó bien» es parte del incidente.
    print(f"\n--resume salió con código {resumed.returncode}.")
    print(
        f"{REPORT_PATH}: "
        + ("no existe" if not copies else f"existe ({plural(copies, 'copia', 'copias')} del reporte)")
    )

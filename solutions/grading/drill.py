"""Nivel 1, «un manual de simulacro»: lo que de verdad queda en disco en cada momento de caída.

La verdad se mide, no se escribe a mano: ``observe(n)`` mata al agente de referencia en el momento
n del turno 3 (el de write_report) en un proceso nuevo, lee el disco y reanuda para ver la rama de
``reconcile``. El marcado local del notebook y las pruebas ocultas del instructor comparan la
predicción de cada estudiante con esa medición.
"""

import os

from harness.disk_state import last_tool_results, read_disk_state
from harness.runner import BRANCH_MARKERS, run_agent_process
from harness.workdir import fresh_dir

# Los tres momentos de la lección en el turno de write_report, como etiquetas de CRASH_AFTER.
MOMENTS = {1: "after-save-a:3", 2: "after-tool:3", 3: "after-save-b:3"}
SYMBOLS = {1: "①", 2: "②", 3: "③"}
TOOL_USE_ID = "toolu_03"
BRANCHES = (*BRANCH_MARKERS, "none")
WORKDIR = os.path.join("_trabajo", "nivel_1")

# Cada clave de la predicción, el tipo que se espera y una pista que no da la respuesta.
FIELDS = {
    "pending_tool_use": (
        (str, type(None)),
        "¿qué guarda el punto A en pendingToolUse y qué deja el punto B?",
    ),
    "tool_result_in_messages": (bool, "¿cuál de los dos guardados ocurre después de empujar el tool_result?"),
    "ledger_has_entry": (bool, "¿en qué línea de run_tool_uses se escribe effects.json?"),
    "reconcile_branch": (str, "¿qué consulta reconcile primero, y write_report es de solo lectura?"),
    "report_exists": (bool, "¿la herramienta llegó a ejecutarse antes de la caída?"),
}


def reset_workdir():
    """Borra ``_trabajo/nivel_1`` (relativo a la carpeta del notebook): cada corrida empieza de cero."""
    fresh_dir(WORKDIR)


def crash_at(n):
    """Corre el agente desde cero hasta morir en el momento n; devuelve (carpeta, estado en disco)."""
    # Absoluta: el runner cambia de carpeta y además pasa la ruta en AGENT_WORKDIR.
    workdir = fresh_dir(os.path.abspath(os.path.join(WORKDIR, f"momento_{n}")))
    run = run_agent_process(workdir, crash_after=MOMENTS[n])
    if not run.killed:
        raise RuntimeError(f"el agente no murió en {MOMENTS[n]}: {run.stderr.strip() or run.stdout}")
    return workdir, read_disk_state(workdir)


def observe(n):
    """Lo que de verdad pasa en el momento n, con las mismas claves que la predicción."""
    workdir, state = crash_at(n)
    messages = state.checkpoint.get("messages", [])
    pending = state.pending
    return {
        "pending_tool_use": pending["name"] if pending else None,
        "tool_result_in_messages": TOOL_USE_ID in last_tool_results(messages),
        "ledger_has_entry": TOOL_USE_ID in state.entries,
        "reconcile_branch": run_agent_process(workdir, resume=True).branch,
        "report_exists": state.report_copies > 0,
    }


def what_reconcile_reads(n):
    """checkpoint.json y effects.json tras morir en n, sin la marca de tiempo ``at`` del registro."""
    _, state = crash_at(n)
    ledger = {tid: {k: v for k, v in e.items() if k != "at"} for tid, e in state.entries.items()}
    return state.checkpoint, ledger


def distinguishable():
    """¿Difiere lo que reconcile lee del disco entre ① y ②? Medido, comparando los archivos."""
    return what_reconcile_reads(1) != what_reconcile_reads(2)


def field_problem(key, value, truth):
    """Qué está mal en una respuesta (None si coincide con la medición), sin decir la correcta."""
    types, hint = FIELDS[key]
    if not isinstance(value, types) or (key == "reconcile_branch" and value not in BRANCHES):
        return f"valor no válido ({value!r}): usa {_allowed(key)}"
    if value != truth:
        return f"no coincide con lo que quedó en disco. Pista: {hint}"
    return None


def _allowed(key):
    """Qué valores acepta ``key``, para decirlo sin revelar cuál es el correcto."""
    if key == "pending_tool_use":
        return "un nombre de herramienta o None"
    if key == "reconcile_branch":
        return " o ".join(map(repr, BRANCHES))
    return "True o False"


def mismatches(prediction, truth):
    """[(clave, problema)] de una predicción frente a la medición; vacío si todo coincide."""
    if not isinstance(prediction, dict):
        return [("(todo)", "la predicción tiene que ser un diccionario con las cinco claves")]
    found = [(key, "falta esta clave") for key in truth if key not in prediction]
    found += [(key, "clave desconocida") for key in prediction if key not in truth]
    for key in truth:
        problem = key in prediction and field_problem(key, prediction[key], truth[key])
        if problem:
            found.append((key, problem))
    return found


def check_moment(n, prediction):
    """Marcado local de un momento: imprime qué está bien y qué no; True si todo coincide."""
    title = f"Momento {SYMBOLS[n]} ({MOMENTS[n]})"
    if n not in prediction:
        print(f"✗ {title}: todavía sin responder (prediction[{n}] = {{...}})")
        return False
    truth = observe(n)
    problems = dict(mismatches(prediction[n], truth))
    print(f"{title}: {sum(key not in problems for key in truth)} de {len(truth)} bien")
    for key in [*truth, *(k for k in problems if k not in truth)]:
        print(f"  ✗ {key}: {problems[key]}" if key in problems else f"  ✓ {key}")
    return not problems


def check_distinguishable(prediction):
    """Marcado local de la pregunta «¿reconcile puede distinguir ① de ②?»."""
    answer = prediction.get("distinguishable")
    if not isinstance(answer, bool):
        print(f"✗ prediction['distinguishable'] tiene que ser True o False (ahora: {answer!r})")
        return False
    if answer != distinguishable():
        print("✗ no coincide con lo medido. Pista: compara checkpoint.json y effects.json de ① y ②")
        return False
    print("✓ coincide con lo medido comparando checkpoint.json y effects.json de ① y ②")
    return True

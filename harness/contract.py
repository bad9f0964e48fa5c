"""El contrato del agente: los nombres de sus archivos, la forma de lo que guarda y la gramática de su log.

Todo módulo que lee o escribe ``checkpoint.json`` / ``effects.json``, o que imprime o lee las líneas
``[turn N][save A] …``, ``[resume][reconcile] …``, ``[kill] …`` y ``[done] …``, toma de aquí sus nombres:
un solo lugar donde cambiarlos (como el ``Checkpoint`` tipado de LangGraph). Cada línea tiene dos
funciones, una que la escribe y ``parse_line``, que la lee; una prueba exige que leer lo escrito
devuelva lo mismo. Las celdas de la lección escriben sus propios literales para enseñar: otra prueba
exige que coincidan con este contrato. Este módulo no importa nada del paquete: está abajo de todo.
"""

import re
from collections import namedtuple

# —— Archivos ——

CHECKPOINT_FILE = "checkpoint.json"
EFFECTS_FILE = "effects.json"
# Lo que ``write_durable`` escribe antes del rename atómico: nunca se lee.
TMP_SUFFIX = ".tmp"
TMP_FILES = (CHECKPOINT_FILE + TMP_SUFFIX, EFFECTS_FILE + TMP_SUFFIX)
# Un agente por directorio (harness.defenses.lock).
LOCK_FILE = ".agente.lock"

# —— Formas ——

VERSION = 1
# El agente de varias llamadas por turno («Más allá»): pendingToolUse es una lista.
BATCH_VERSION = 2


# Las claves de ``checkpoint.json`` (version 1), las de la lección, en su orden; sus tipos, en
# harness.beyond.file_types (sin typing aquí: cada proceso del agente importa este módulo).
CHECKPOINT_KEYS = ("version", "task", "turns", "tokensUsed", "messages", "pendingToolUse")


# Claves opcionales del punto de control: el turno del asistente completo (un modelo real suele
# escribir un texto antes del tool_use) y la marca de una tarea terminada.
PENDING_CONTENT = "pendingAssistantContent"
FINISHED = "finalText"

# —— Variables de entorno que lee el agente ——

# La carpeta de trabajo (por omisión, la actual), la caída simulada y la variante de producción.
WORKDIR_VAR = "AGENT_WORKDIR"
CRASH_VAR = "CRASH_AFTER"
VARIANT_VAR = "AGENT_VARIANT"
# Las que ponen quienes lo prueban: demoras al azar (harness.jitter), un tope de turnos más bajo
# (harness.base_loop), el registro de lo que recibe el modelo guionado, el agent.py de la lección que
# reúsan el agente de lotes y las comprobaciones de los ejercicios, y el orden (prod o fixed) que
# elige el script del ejercicio del Nivel 2.
JITTER_VAR = "AGENT_JITTER_MS"
MAX_TURNS_VAR = "AGENT_MAX_TURNS"
MODEL_LOG_VAR = "SCRIPTED_MODEL_LOG"
LESSON_AGENT_VAR = "LESSON_AGENT"
ORDER_VAR = "ORDER"
# El desvío que la suite le pide al modelo guionado: con DETOUR_UNKNOWN_TOOL, su primer turno pide
# UNKNOWN_TOOL (una herramienta que no existe) y, tras su is_error, sigue el guion de siempre.
DETOUR_VAR = "SCRIPTED_MODEL_DETOUR"
DETOUR_UNKNOWN_TOOL = "herramienta-desconocida"
UNKNOWN_TOOL = "borrar_todo"
# Con --live: las credenciales estáticas que lee el SDK, en su orden (con las dos, manda la clave).
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

# —— Línea de comandos y códigos de salida ——

FLAGS = ("--resume", "--live")
EXIT_DONE = 0
EXIT_FAILED = 1  # un problema esperado: una línea en español en stderr
EXIT_USAGE = 2  # la línea de comandos (o la variante pedida) no vale
EXIT_HANGUP = 129  # SIGHUP: se cerró la terminal (128 + 1)
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_TERMINATED = 143  # SIGTERM: kill, systemd, docker stop (128 + 15)
EXIT_KILLED = 137  # la caída simulada: el código de «matado por SIGKILL»


def command_line_problem(args, variant, variants):
    """Qué está mal en los argumentos o en ``AGENT_VARIANT`` ('' si nada)."""
    unknown = set(args) - set(FLAGS)
    if unknown:
        return f"Argumento desconocido: {' '.join(sorted(unknown))}"
    if variant not in variants:
        return f"{VARIANT_VAR}={variant} no es una variante conocida: usa {' o '.join(variants)}"
    return ""


# —— Las ramas de reconcile ——

HIT, RERUN, IS_ERROR, NO_PENDING = "hit", "rerun", "is_error", "none"
# Las palabras que nombran cada rama en su línea de log.
BRANCH_MARKERS = {
    HIT: "acierto en el registro",
    RERUN: "volviendo a ejecutar",
    IS_ERROR: "agregando is_error",
}
_BRANCH_TAILS = {
    HIT: "acierto en el registro, reutilizando resultado, sin volver a ejecutar",
    RERUN: "fallo en el registro, {reason}, volviendo a ejecutar",
    IS_ERROR: "fallo en el registro con efectos secundarios, no resoluble, agregando is_error",
}
# Las mismas ramas en las palabras de las respuestas de los ejercicios (y de quien califica).
BRANCH_WORDS = {**BRANCH_MARKERS, NO_PENDING: "sin llamada colgante"}
# Por qué se puede volver a ejecutar una llamada sin anotación.
READ_ONLY_REASON = "herramienta de solo lectura"
KEYED_REASON = "escritura idempotente con clave"

# Lo que dice un agente a medio escribir (las celdas «tu turno» del taller): la suite de conformidad lo
# reconoce y marca esas filas «todavía no» en vez de fallarlas.
NOT_WRITTEN = "Todavía no escribiste"

# —— Las líneas del log: escribir ——


def _names(pending):
    """Una llamada (o varias, separadas por comas) por su nombre; ``null`` si no hay ninguna."""
    if isinstance(pending, (list, tuple)):
        return ",".join(pending) or "null"
    return pending or "null"


def save_a_line(turn, pending):
    return f"[turn {turn}][save A] pending={_names(pending)}"


REFILLED = "rellenado el resultado de herramienta de este turno tras reanudar"


def save_b_line(turn, refilled=False):
    return f"[turn {turn}][save B]" + (f" {REFILLED}" if refilled else "")


def resume_line(turn, pending):
    return f"[resume] leído turn={turn} pending={_names(pending)}"


def reconcile_line(tool_use_id, name, branch, reason=READ_ONLY_REASON):
    tail = _BRANCH_TAILS[branch].format(reason=reason)
    return f"[resume][reconcile] tool_use_id={tool_use_id} name={name} {tail}"


def crash_message(label):
    """El mensaje de ``SimulatedCrash``: lo que va después de ``[kill]``."""
    return f"caída simulada en {label}"


def kill_line(message):
    return f"[kill] {message}"


def done_line(text):
    return f"[done] {text}"


def unknown_state_text(name):
    """El contenido del tool_result con is_error de la rama «fallo en el registro con efectos secundarios»."""
    return (
        f"Se desconoce el estado de ejecución previo a la reanudación de esta llamada a {name}: no hay "
        "anotación en el registro y, para evitar un efecto secundario duplicado, no se volvió a ejecutar. "
        "Por favor verifica por tu cuenta si se completó."
    )


def turn_limit_text(max_turns):
    return f"Se alcanzó el máximo de {max_turns} turnos, deteniéndonos por nuestra cuenta"


# —— Las líneas del log: leer ——


_LOG_FIELDS = (
    "kind",
    "turn",
    "point",
    "pending",
    "refilled",
    "tool_use_id",
    "name",
    "branch",
    "reason",
    "text",
    "label",
)


class LogLine(namedtuple("LogLine", _LOG_FIELDS, defaults=(None, None, None, False, *[None] * 6))):
    """Una línea del contrato, leída. ``kind``: save, resume, reconcile, kill o done; los demás
    campos valen None cuando esa clase de línea no los tiene: ``turn``; ``point``, «A» o «B»;
    ``pending``, los nombres de las llamadas colgantes (() si null); ``refilled`` (False si no);
    ``tool_use_id``, ``name``, ``branch`` y ``reason`` de un reconcile; ``text``, lo que sigue a [kill]
    o a [done]; ``label``, la etiqueta de la caída, si la línea [kill] la trae."""

    __slots__ = ()


# Patrones sin compilar: re los compila (y guarda) la primera vez que se lee un log; el agente, que solo
# escribe líneas, no paga esa compilación en cada proceso.
_SAVE = r"\[turn (\d+)\]\[save ([AB])\](?: pending=(\S+))?( " + re.escape(REFILLED) + ")?"
_RESUME = r"\[resume\] leído turn=(\d+) pending=(\S+)"
_RECONCILE = r"\[resume\]\[reconcile\] tool_use_id=(\S+) name=(\S+) (.*)"
_RERUN_REASON = r"fallo en el registro, (.+), volviendo a ejecutar"


def _pending(names):
    return () if names in (None, "null") else tuple(names.split(","))


def _branch(tail):
    return next((b for b, marker in BRANCH_MARKERS.items() if marker in tail), None)


def parse_line(line):
    """La ``LogLine`` de una línea del contrato, o None si la línea es otra cosa."""
    line = line.rstrip("\n")
    if m := re.fullmatch(_SAVE, line):
        return LogLine("save", int(m[1]), m[2], _pending(m[3]) if m[2] == "A" else None, bool(m[4]))
    if m := re.fullmatch(_RESUME, line):
        return LogLine("resume", int(m[1]), pending=_pending(m[2]))
    if m := re.fullmatch(_RECONCILE, line):
        branch, reason = _branch(m[3]), re.fullmatch(_RERUN_REASON, m[3])
        return LogLine("reconcile", tool_use_id=m[1], name=m[2], branch=branch, reason=reason and reason[1])
    if line.startswith("[kill] "):
        text = line[len("[kill] ") :]
        label = text[len(crash_message("")) :] if text.startswith(crash_message("")) else None
        return LogLine("kill", text=text, label=label)
    if line.startswith("[done] "):
        return LogLine("done", text=line[len("[done] ") :])
    return None


def format_line(line):
    """La línea de texto de una ``LogLine``: lo inverso de ``parse_line``."""
    if line.kind == "save" and line.point == "A":
        return save_a_line(line.turn, list(line.pending))
    if line.kind == "save":
        return save_b_line(line.turn, line.refilled)
    if line.kind == "resume":
        return resume_line(line.turn, list(line.pending))
    if line.kind == "reconcile":
        return reconcile_line(line.tool_use_id, line.name, line.branch, line.reason or READ_ONLY_REASON)
    return (kill_line if line.kind == "kill" else done_line)(line.text)


def parse_log(stdout):
    """Las líneas del contrato de un stdout entero, en orden (las demás se saltan)."""
    return [parsed for parsed in map(parse_line, stdout.splitlines()) if parsed]


def reconcile_branch(stdout):
    """La rama que tomó una reanudación: hit, rerun o is_error; «none» si leyó un punto de control sin
    llamada colgante; None si no fue una reanudación."""
    lines = parse_log(stdout)
    branch = next((p.branch for p in lines if p.kind == "reconcile"), None)
    if branch:
        return branch
    return NO_PENDING if any(p.kind == "resume" for p in lines) else None


def done_text(stdout):
    """El texto de la última línea ``[done]``, o None."""
    done = [p.text for p in parse_log(stdout) if p.kind == "done"]
    return done[-1] if done else None

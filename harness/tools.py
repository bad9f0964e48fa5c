"""Las herramientas de la tarea «convertir notas de ventas en un reporte».

``read_notes``, ``count_words`` y ``check_report`` solo leen; ``write_report`` tiene un efecto
secundario: agrega el reporte al final de ``report.txt``, así que una segunda ejecución se ve.
Todas resuelven sus rutas dentro del directorio actual (el directorio de trabajo del agente) y
ninguna toca los archivos propios del agente (punto de control, registro, temporales).
"""

import os

from harness.contract import KEYED_REASON, READ_ONLY_REASON, TMP_SUFFIX
from harness.defenses.durable import NOT_PLAIN, read_bytes, read_present, remove_durably, write_durable
from harness.defenses.idempotent import receipts_path, write_report_once
from harness.jitter import jitter
from harness.text import plural
from harness.tool_input import ToolError, ToolOSError, os_failure, refuse_hard_link, text_arg, tool_path

NOTES_PATH = "sales-notes.txt"
REPORT_PATH = "report.txt"
# Cada copia del reporte empieza con este título: contarlo dice cuántas veces se escribió.
REPORT_TITLE = "# Reporte de ventas"
# Lo que el modelo guionado busca en la respuesta de check_report para volver a escribir el reporte.
REPORT_MISSING = "el reporte no se escribió"
# Y lo que busca para no escribir encima de un reporte que ya está, pero roto.
REPORT_DAMAGED = "el reporte está dañado"

READ_ONLY = frozenset({"read_notes", "count_words", "check_report"})
# Con clave de idempotencia (la variante «idempotente» del agente), write_report recibe el tool_use_id
# como clave y repetirla no duplica el reporte: reanudar puede volver a ejecutarla en vez de is_error.
KEYED = frozenset({"write_report"})


def _read(tool_input):
    path = tool_path(tool_input)
    try:
        return read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise ToolError(f"no existe el archivo {tool_input['path']}") from None
    except OSError as err:  # una falla pasajera se le dice al modelo, que puede volver a intentarlo
        raise os_failure("leer", tool_input, err) from None
    except UnicodeDecodeError:
        raise ToolError(f"{tool_input['path']} no es texto UTF-8") from None


def read_notes(tool_input):
    """Devuelve el texto de un archivo de notas."""
    return _read(tool_input)


def count_words(tool_input):
    """Cuenta las palabras de un archivo."""
    words = len(_read(tool_input).split())
    return f"{tool_input['path']} tiene {words} palabras"


def write_report(tool_input):
    """Agrega el reporte al final del archivo (efecto secundario)."""
    path, content = tool_path(tool_input), text_arg(tool_input, "content")
    refuse_hard_link(path, tool_input)
    try:
        before = read_bytes(path) if os.path.lexists(path) else b""
        # Agregar reescribiendo el archivo entero de forma durable: tras un corte de luz queda el
        # reporte anterior o el nuevo completo, nunca uno cortado; y en disco (con su entrada en el
        # directorio) antes de anotarlo en el registro, que si no diría «ya está hecho» sin reporte.
        write_durable(path, before + content.encode("utf-8"))
    except OSError as err:
        raise os_failure("escribir en", tool_input, err) from None
    return f"Reporte escrito en {tool_input['path']} ({len(content)} caracteres)"


def report_damage(text):
    """Por qué ``text`` no es una sucesión de reportes completos, o None. Cada copia termina en un
    salto de línea y trae tantas líneas «- cliente» como dice su línea «Clientes con novedades: N.»."""
    if "\0" in text:
        return "tiene bytes nulos"
    for copy in text.split(REPORT_TITLE)[1:]:
        lines = copy.split("\n")
        counted = [line for line in lines if line.startswith("Clientes con novedades: ")]
        listed = sum(line.startswith("- ") for line in lines)
        if not copy.endswith("\n") or (counted and counted[0] != f"Clientes con novedades: {listed}."):
            return "una copia está cortada"
    return None


def check_report(tool_input):
    """Mira, sin tocarlo, si el reporte existe, si está entero y cuántas copias tiene."""
    path = tool_path(tool_input)
    try:
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return f"{tool_input['path']} no existe: {REPORT_MISSING}"
    except UnicodeDecodeError:
        text = "\0"  # bytes que no son texto: tan dañado como un archivo con nulos
    except OSError as err:
        raise os_failure("leer", tool_input, err) from None
    damage = report_damage(text)
    if damage:  # escribir encima de un reporte roto escondería el daño: que lo vea una persona
        return f"{tool_input['path']} existe pero {damage}: {REPORT_DAMAGED}"
    copies = text.count(REPORT_TITLE)
    if copies == 0:
        return f"{tool_input['path']} existe pero no contiene el reporte: {REPORT_MISSING}"
    return f"{tool_input['path']} existe y contiene el reporte {plural(copies, 'vez', 'veces')}"


TOOL_IMPLS = {
    "read_notes": read_notes,
    "count_words": count_words,
    "write_report": write_report,
    "check_report": check_report,
}


def rerunnable(name, keyed=False):
    """¿Se puede volver a ejecutar sin duplicar su efecto? Las de solo lectura siempre; las de
    ``KEYED``, solo si el agente escribe con clave (``keyed``)."""
    return name in READ_ONLY or (keyed and name in KEYED)


def rerun_reason(name):
    """Por qué reanudar puede volver a ejecutarla, en las palabras de la lección."""
    return READ_ONLY_REASON if name in READ_ONLY else KEYED_REASON


def run_tool(name, tool_input, key=None):
    """``TOOL_IMPLS[name](tool_input)``, con un error claro si la herramienta no existe. Con ``key`` (el
    ``tool_use_id``, si el agente eligió escribir con clave), las de ``KEYED`` no duplican su efecto."""
    if name not in TOOL_IMPLS:
        raise ToolError(f"no existe la herramienta {name}")
    jitter()  # solo con AGENT_JITTER_MS: reparte las muertes de la prueba de tortura
    try:
        if key is not None and name in KEYED:
            output = write_report_once(tool_input, key)
        else:
            output = TOOL_IMPLS[name](tool_input)
    except ToolOSError as err:
        err.tool = name
        failures_in_a_row[name] = failures_in_a_row.get(name, 0) + 1
        raise
    failures_in_a_row.pop(name, None)
    return output


# Fallas del entorno seguidas de cada herramienta en este proceso (``harness.defenses.guards.stop_if_lasting``).
failures_in_a_row = {}


def _tool(name, description, **properties):
    schema = {key: {"type": "string", "description": text} for key, text in properties.items()}
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": schema, "required": list(schema)},
    }


# Las definiciones en el formato ``tools`` de la API de mensajes.
TOOLS = [
    _tool("read_notes", "Lee un archivo de notas de ventas y devuelve su texto.", path="Ruta del archivo."),
    _tool("count_words", "Cuenta las palabras de un archivo de texto.", path="Ruta del archivo."),
    _tool(
        "write_report",
        "Agrega un reporte al final de un archivo. Tiene efectos secundarios: no la repitas sin verificar.",
        path="Ruta del reporte.",
        content="Texto del reporte.",
    ),
    _tool(
        "check_report",
        "Verifica, sin modificarlo, si un reporte existe y cuántas copias tiene.",
        path="Ruta del reporte.",
    ),
]


def report_copies(path=REPORT_PATH, title=REPORT_TITLE):
    """Cuántas veces se escribió el reporte en ``path`` (las veces que aparece ``title``, su primera
    línea: la de este modelo guionado, o la que pidió escribir el modelo de otro agente): 0 si no existe
    o si no es un archivo común (un enlace simbólico o una FIFO no son un reporte, y abrir una FIFO
    esperaría para siempre)."""
    try:
        data = read_present(path)
    except OSError as err:
        if err.errno in NOT_PLAIN:
            return 0
        raise
    return 0 if data is None else data.decode("utf-8", "replace").count(title)


def prepare_task_files():
    """Deja el directorio listo para una corrida nueva: sin reporte viejo, con las notas de ventas."""
    # Borrados en disco antes del primer punto A (con los recibos de las claves de idempotencia).
    remove_durably(REPORT_PATH, REPORT_PATH + TMP_SUFFIX, receipts_path(REPORT_PATH))
    if not os.path.exists(NOTES_PATH):
        with open(os.path.join(os.path.dirname(__file__), "data", NOTES_PATH), "rb") as src:
            notes = src.read()
        write_durable(NOTES_PATH, notes)  # una muerte a mitad no deja unas notas vacías que luego se lean

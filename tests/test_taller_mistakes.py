"""Cada error plausible de quien estudia da ✗ en la comprobación de su pieza, en el taller mismo: el taller
se llena con las celdas de la lección en un kernel de verdad (cada celda con su id, como la manda
JupyterLab), se escribe el error en la celda de su pieza como lo escribiría quien estudia, se ejecuta la
comprobación que sigue a esa celda (el agente corre como procesos de verdad) y su tabla tiene que mostrar
✗ en una fila de esa pieza, con una pista que nombra la causa (sin dar el código). Las mismas
comprobaciones con el código de la lección dan ✓ (``test_each_check_passes_with_the_lessons_code``), así
que cada ✗ es del error, no del taller."""

from typing import NamedTuple

import nbformat
import pytest

from harness.notebook.workbook import DECIDED_BY, PREVIEW_WAITS
from maintainer import taller
from maintainer.taller_kernel import filled_workbook, lesson

pytestmark = pytest.mark.slow


class Mistake(NamedTuple):
    name: str
    cell: str  # el id de la celda «tu turno» del taller donde se comete
    old: str  # el texto de la lección que cambia (una sola vez en esa celda)
    new: str
    check: str  # la celda de la comprobación que sigue a esa pieza
    row: str  # lo que dice la fila que tiene que fallar
    cause: str  # lo que tiene que decir su pista


POINT_A = (
    '        pending = {"id": call["id"], "name": call["name"], "input": call["input"]}\n'
    "        save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending))  # tu turno: punto_A\n"
    "        print(f\"[turn {turns}][save A] pending={pending['name']}\")\n"
    '        crash_point("after-save-a")\n'
)
PUSH = '        messages.append({"role": "assistant", "content": content})\n'
RUN_TOOLS = '        messages.append({"role": "user", "content": run_tool_uses(content)})\n'
RECORD = '            save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})\n'
FAILED = (
    "        except Exception as err:  # el modelo recibe el error y decide, como en el Curso 7\n"
    '            error = f"Error de ejecución de la herramienta: {err}"\n'
    "            results.append(\n"
    '                {"type": "tool_result", "tool_use_id": block["id"], "content": error, "is_error": True}\n'
    "            )\n"
    "            continue\n"
)
READ_ONLY_BRANCH = (
    '    if pending["name"] in READ_ONLY:\n'
    '        print(f"{where} fallo en el registro, herramienta de solo lectura, volviendo a ejecutar")\n'
    '        output = run_tool(pending["name"], pending["input"])\n'
    '        save_effect(pending["id"], {"name": pending["name"], "result": output, "at": now_ms()})\n'
    '        return {"type": "tool_result", "tool_use_id": pending["id"], "content": output}\n\n'
)

POINT_B = (
    "        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))  # tu turno: punto_B\n"
)
WITH_TMP = (
    '    with open(tmp, "w", encoding="utf-8") as f:\n'
    "        json.dump(data, f, ensure_ascii=False, indent=2)\n"
)
HIT_BRANCH = (
    "    if hit:\n"
    '        print(f"{where} acierto en el registro, reutilizando resultado, sin volver a ejecutar")\n'
    '        return {"type": "tool_result", "tool_use_id": pending["id"], "content": hit["result"]}\n\n'
)
CLEAN = "    for path in (CHECKPOINT_PATH, EFFECTS_PATH):\n        if os.path.exists(path):\n            os.remove(path)\n"


def parse_error(cell_id="taller-code-22"):
    """El «except» de la lección que lanza el error de «no se pudo parsear», entero."""
    code = taller.lesson_cells()[cell_id.removeprefix("taller-")]
    start = code.index("    except ValueError:\n")
    return code[start : code.index(") from None\n", start) + len(") from None\n")]


WRITING, READING, FRESH, POINTS = (
    'workbook.check("escritura")',
    'workbook.check("lectura")',
    'workbook.check("apertura")',
    'workbook.check("puntos")',
)
LEDGER, RECONCILE = 'workbook.check("registro", "falla", "aviso", "puntos")', 'workbook.check("reconcile")'
SIGKILL = "SIGKILL antes de cada llamada al sistema"

MISTAKES = [
    Mistake(
        "anota antes de ejecutar",
        "taller-code-38",
        "        try:\n            output = run_tool(",
        '        save_effect(block["id"], {"name": block["name"], "result": None, "at": now_ms()})\n'
        "        try:\n            output = run_tool(",
        LEDGER,
        "after-tool:1",
        "se anotó antes de ejecutar",
    ),
    Mistake(
        "guarda el punto A después de agregar el turno",
        "taller-code-28",
        POINT_A + PUSH,
        PUSH + POINT_A,
        POINTS,
        "after-save-a:",
        "antes de agregar el turno del asistente",
    ),
    Mistake(
        "guarda el punto A después de la herramienta",
        "taller-code-28",
        POINT_A + PUSH + RUN_TOOLS,
        PUSH + RUN_TOOLS + POINT_A,
        POINTS,
        "after-save-a:",
        "ya había corrido cuando se guardó el punto A",
    ),
    Mistake(
        "escribe directo, sin temporal",
        "taller-code-20",
        '    tmp = path + ".tmp"\n    with open(tmp, "w", encoding="utf-8") as f:\n'
        "        json.dump(data, f, ensure_ascii=False, indent=2)\n    os.replace(tmp, path)\n",
        '    with open(path, "w", encoding="utf-8") as f:\n'
        "        json.dump(data, f, ensure_ascii=False, indent=2)\n",
        WRITING,
        "un .tmp a medias",
        "temporal",
    ),
    Mistake(
        "un punto de control por defecto si no se puede parsear",
        "taller-code-22",
        parse_error(),
        "    except ValueError:  # a medias: se empieza de nuevo\n"
        '        return checkpoint(TASK, 0, 0, [{"role": "user", "content": TASK}], None)\n',
        READING,
        "cortado (el de la lección)",
        "nunca un valor por defecto",
    ),
    Mistake(
        "anota por el nombre de la herramienta",
        "taller-code-38",
        RECORD,
        RECORD.replace('save_effect(block["id"]', 'save_effect(block["name"]'),
        LEDGER,
        "after-effect-write:1",
        "no por su tool_use_id",
    ),
    Mistake(
        "deja la llamada colgante en el punto B",
        "taller-code-28",
        "save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))",
        "save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending))",
        POINTS,
        "after-save-b:1",
        "pendingToolUse en null",
    ),
    Mistake(
        "una corrida nueva conserva el registro",
        "taller-code-28a",
        "for path in (CHECKPOINT_PATH, EFFECTS_PATH):",
        "for path in (CHECKPOINT_PATH,):",
        FRESH,
        "una corrida nueva sobre los archivos de otra",
        "borra effects.json",
    ),
    Mistake(
        "contesta is_error a una de solo lectura sin anotación",
        "taller-code-46",
        READ_ONLY_BRANCH,
        "",
        RECONCILE,
        "after-save-a:1",
        "una herramienta de solo lectura sin anotación recibió is_error",
    ),
    Mistake(
        "anota una herramienta que falla como si hubiera andado",
        "taller-code-38",
        FAILED,
        "        except Exception as err:\n"
        '            output = f"Error de ejecución de la herramienta: {err}"\n',
        LEDGER,
        "count_words falla",
        "nunca como un resultado normal, y no se anota",
    ),
    Mistake(
        "el temporal en la carpeta temporal del sistema",
        "taller-code-20",
        '    tmp = path + ".tmp"\n',
        "    import tempfile\n\n    fd, tmp = tempfile.mkstemp()\n    os.close(fd)\n",
        WRITING,
        SIGKILL,
        "misma carpeta",
    ),
    Mistake(
        "cierra el temporal después del rename",
        "taller-code-20",
        WITH_TMP + "    os.replace(tmp, path)\n",
        '    f = open(tmp, "w", encoding="utf-8")\n'
        "    json.dump(data, f, ensure_ascii=False, indent=2)\n"
        "    os.replace(tmp, path)\n    f.close()\n",
        WRITING,
        SIGKILL,
        "antes de que sus datos lleguen al archivo",
    ),
    Mistake(
        "borra el anterior antes del rename",
        "taller-code-20",
        "    os.replace(tmp, path)\n",
        "    if os.path.exists(path):\n        os.remove(path)\n    os.replace(tmp, path)\n",
        WRITING,
        SIGKILL,
        "antes de poner el nuevo: os.replace ya reemplaza el anterior",
    ),
    Mistake(
        "copia el temporal en vez de renombrarlo",
        "taller-code-20",
        "    os.replace(tmp, path)\n",
        "    import shutil\n\n    shutil.copyfile(tmp, path)\n    os.remove(tmp)\n",
        WRITING,
        SIGKILL,
        "os.replace",
    ),
    Mistake(
        "acepta version true",
        "taller-code-22",
        "    if version != 1 or isinstance(version, bool):",
        "    if version != 1:",
        READING,
        "version=true",
        "true",
    ),
    Mistake(
        "no mira la versión",
        "taller-code-22",
        "    if version != 1 or isinstance(version, bool):",
        "    if version is None:",
        READING,
        "version=2",
        "se niega a cargarlo",
    ),
    Mistake(
        "borra el registro solo si hay punto de control",
        "taller-code-28a",
        CLEAN,
        "    if os.path.exists(CHECKPOINT_PATH):\n"
        "        os.remove(CHECKPOINT_PATH)\n"
        "        if os.path.exists(EFFECTS_PATH):\n"
        "            os.remove(EFFECTS_PATH)\n",
        FRESH,
        "sin checkpoint.json",
        "aunque no exista checkpoint.json",
    ),
    Mistake(
        "una corrida nueva conserva el reporte viejo",
        "taller-code-28a",
        "    prepare_task_files()",
        "    pass",
        FRESH,
        "",
        "el reporte",
    ),
    Mistake(
        "el punto A sin el input de la llamada",
        "taller-code-28",
        '        pending = {"id": call["id"], "name": call["name"], "input": call["input"]}\n',
        '        pending = {"id": call["id"], "name": call["name"]}\n',
        POINTS,
        "after-save-a:",
        "input",
    ),
    Mistake(
        "suma el turno después del punto A",
        "taller-code-28",
        "        turns += 1\n",
        "",
        POINTS,
        "after-save-a:",
        "turns cuenta los turnos del modelo",
    ),
    Mistake(
        "guarda el punto B antes de agregar el resultado",
        "taller-code-28",
        RUN_TOOLS
        + "        # —— Punto B: el resultado está en messages (y el registro en disco): colgante limpiada ——\n"
        + POINT_B,
        POINT_B + RUN_TOOLS,
        POINTS,
        "after-save-b:",
        "el punto B se guarda después de agregar el tool_result a messages",
    ),
    Mistake(
        "anota solo el resultado, sin el nombre",
        "taller-code-38",
        RECORD,
        RECORD.replace('{"name": block["name"], "result": output, "at": now_ms()}', "output"),
        LEDGER,
        "after-effect-write:1",
        "name",
    ),
    Mistake(
        "devuelve dentro del bucle: solo corre el primer tool_use",
        "taller-code-38",
        '        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})\n',
        '        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})\n'
        "        return results\n",
        LEDGER,
        "dos tool_use",
        "no solo el primero",
    ),
    Mistake(
        "no anota la re-ejecución de solo lectura",
        "taller-code-46",
        '        save_effect(pending["id"], {"name": pending["name"], "result": output, "at": now_ms()})\n',
        "",
        RECONCILE,
        "after-",
        "también anota lo que vuelve a ejecutar",
    ),
    Mistake(
        "las ramas de solo lectura, al revés",
        "taller-code-46",
        '    if pending["name"] in READ_ONLY:',
        '    if pending["name"] not in READ_ONLY:',
        RECONCILE,
        "after-save-a:3",
        "se volvió a ejecutar a ciegas",
    ),
    Mistake(
        "busca en el registro por el nombre",
        "taller-code-46",
        'load_effects().get(pending["id"])',
        'load_effects().get(pending["name"])',
        RECONCILE,
        "after-",
        "busca primero pendingToolUse.id",
    ),
    Mistake(
        "mira READ_ONLY antes que el registro",
        "taller-code-46",
        HIT_BRANCH + READ_ONLY_BRANCH,
        READ_ONLY_BRANCH + HIT_BRANCH,
        RECONCILE,
        "after-effect-write:1",
        "busca primero pendingToolUse.id",
    ),
    Mistake(
        "el acierto vuelve con is_error",
        "taller-code-46",
        '"content": hit["result"]}',
        '"content": hit["result"], "is_error": True}',
        RECONCILE,
        "after-effect-write:3",
        "sin is_error",
    ),
    Mistake(
        "el estado desconocido sin is_error",
        "taller-code-46",
        '"content": unknown, "is_error": True}',
        '"content": unknown}',
        RECONCILE,
        "after-save-a:3",
        "is_error: true",
    ),
]


# Los errores del aviso del registro (la escritura de effects.json falla: el efecto ya ocurrió) y los de las
# clases que los mutantes de la suite encontraron sin fila: tokensUsed, la versión, el contenido rellenado.
WARNING_PRINT = (
    "            print(\n"
    "                f\"[falló la escritura del registro] tool_use_id={block['id']}: el efecto secundario ya \"\n"
    '                "ocurrió, riesgo de ejecución duplicada al reanudar, por favor revisa a mano",\n'
    "                file=sys.stderr,\n"
    "            )\n"
)
LEDGER_TRY = (
    "        try:\n"
    + RECORD
    + "        except (OSError, CheckpointError):\n"
    + WARNING_PRINT
    + "        else:\n"
)
RESULT = '        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})\n'
FAILED_WRITES = "cada escritura de effects.json falla"
POINT_A_SAVE = (
    "        save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending))  # tu turno: punto_A\n"
)
MISTAKES += [
    Mistake(
        "le dice al modelo is_error si el registro no se escribe",
        "taller-code-38",
        WARNING_PRINT,
        WARNING_PRINT
        + '            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output, "is_error": True})\n'
        "            continue\n",
        LEDGER,
        FAILED_WRITES,
        "sin is_error",
    ),
    Mistake(
        "el aviso del registro va a stdout",
        "taller-code-38",
        WARNING_PRINT,
        WARNING_PRINT.replace("                file=sys.stderr,\n", ""),
        LEDGER,
        FAILED_WRITES,
        "imprime en stderr",
    ),
    Mistake(
        "no atrapa la falla del registro",
        "taller-code-38",
        LEDGER_TRY,
        RECORD.replace("            ", "        ", 1) + "        if True:\n",
        LEDGER,
        FAILED_WRITES,
        "atrápalo alrededor de save_effect",
    ),
    Mistake(
        "el aviso sin el tool_use_id",
        "taller-code-38",
        WARNING_PRINT,
        '            print("[falló la escritura del registro]", file=sys.stderr)\n',
        LEDGER,
        FAILED_WRITES,
        "tool_use_id=",
    ),
    Mistake(
        "anota solo cuando la herramienta falla",
        "taller-code-38",
        "            continue\n" + '        crash_point("after-tool")\n',
        '            save_effect(block["id"], {"name": block["name"], "result": error, "at": now_ms()})\n'
        "            continue\n" + '        crash_point("after-tool")\n',
        LEDGER,
        "count_words falla",
        "solo se anota lo que corrió con éxito",
    ),
    Mistake(
        "anota la entrada en vez del resultado",
        "taller-code-38",
        RECORD,
        RECORD.replace('"result": output', '"result": json.dumps(block["input"])'),
        LEDGER,
        "after-",
        "el resultado real",
    ),
    Mistake(
        "el punto A guarda tokensUsed en 0",
        "taller-code-28",
        POINT_A_SAVE,
        POINT_A_SAVE.replace("turns, tokens_used,", "turns, 0,"),
        POINTS,
        "after-save-a:1",
        "cada punto A guarda más",
    ),
    Mistake(
        "el punto B guarda tokensUsed en 0",
        "taller-code-28",
        POINT_B,
        POINT_B.replace("turns, tokens_used,", "turns, 0,"),
        POINTS,
        "after-save-b:",
        "guardan el mismo tokensUsed",
    ),
    Mistake(
        "acepta version 0",
        "taller-code-22",
        "    if version != 1 or isinstance(version, bool):",
        "    if version is None or version > 1 or isinstance(version, bool):",
        READING,
        "version=0",
        "solo version=1",
    ),
    Mistake(
        "la corrida nueva empieza en el turno 1",
        "taller-code-28a",
        '    return 0, 0, [{"role": "user", "content": task}]',
        '    return 1, 0, [{"role": "user", "content": task}]',
        FRESH,
        "",
        "turns y tokensUsed en 0",
    ),
    Mistake(
        "el rename del registro va a checkpoint.json",
        "taller-code-20",
        "    os.replace(tmp, path)\n",
        "    os.replace(tmp, CHECKPOINT_PATH)\n",
        WRITING,
        "una escritura del registro",
        "en el lugar de effects.json",
    ),
    Mistake(
        "el acierto devuelve la anotación entera",
        "taller-code-46",
        '"content": hit["result"]}',
        '"content": str(hit)}',
        RECONCILE,
        "after-effect-write:1",
        "lleva el resultado anotado",
    ),
    Mistake(
        "cuenta write_report como de solo lectura",
        "taller-code-46",
        '    if pending["name"] in READ_ONLY:',
        '    if pending["name"] in (*READ_ONLY, "write_report"):',
        RECONCILE,
        "after-save-a:3",
        "se volvió a ejecutar a ciegas",
    ),
    Mistake(
        "el acierto vuelve a ejecutar la herramienta",
        "taller-code-46",
        '        return {"type": "tool_result", "tool_use_id": pending["id"], "content": hit["result"]}\n',
        '        run_tool(pending["name"], pending["input"])\n'
        '        return {"type": "tool_result", "tool_use_id": pending["id"], "content": hit["result"]}\n',
        RECONCILE,
        "after-effect-write:3",
        "no se repite a ciegas",
    ),
]


@pytest.fixture(scope="module")
def workbook(tmp_path_factory):
    """El taller lleno en un kernel, hasta la última comprobación de una pieza (compartido)."""
    kernel, checks = filled_workbook(tmp_path_factory.mktemp("taller"))
    try:
        yield kernel, checks
    finally:
        kernel.stop()


def stored_cells():
    return nbformat.read(taller.WORKBOOK, as_version=4).cells


def rows(shown):
    """[(fila entera, resultado, pista)] de las tablas de una comprobación, en su texto plano."""
    found = []
    for line in shown.splitlines():
        parts = line.rsplit(" | ", 2)
        if len(parts) == 3 and parts[1] in ("✓", "✗", "todavía no", "no aplica"):
            found.append((line, parts[1], parts[2]))
    return found


@pytest.mark.parametrize("check", sorted({m.check for m in MISTAKES}))
def test_each_check_passes_with_the_lessons_code(workbook, check):
    kernel, checks = workbook
    shown = kernel.run(check, checks[check])
    statuses = {status for _, status, _ in rows(shown)}
    assert statuses == {"✓"}, shown[-3000:]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_mistake_fails_its_pieces_check_with_a_hint_that_names_it(workbook, mistake):
    kernel, checks = workbook
    right = lesson(mistake.cell)
    assert right.count(mistake.old) == 1, (
        f"{mistake.name}: el texto a cambiar ya no está (una vez) en la lección"
    )
    try:
        assert "Traceback" not in kernel.run(right.replace(mistake.old, mistake.new), mistake.cell)
        shown = kernel.run(mistake.check, checks[mistake.check])
    finally:
        kernel.run(right, mistake.cell)  # la siguiente prueba parte del taller bien escrito
    assert "Traceback" not in shown and "no corrió" not in shown, shown[-3000:]
    failed = [(line, hint) for line, status, hint in rows(shown) if status == "✗" and mistake.row in line]
    assert failed, f"ninguna fila ✗ con «{mistake.row}»:\n{shown[-4000:]}"
    assert all(mistake.cause in hint for _, hint in failed), failed


# Lo que corre la suite de verdad, dentro del kernel, sobre el agente que arma el taller (sin el atajo).
REAL_STATUSES = (
    "from harness.conformidad.processes import Context\n"
    "from harness.conformidad.suite import run_suite\n"
    "print(sorted({{r.status for _, rows in run_suite(Context(str(workbook.export()), {{}}), [{piece!r}]) for r in rows}}))"
)
SHORTCUTS = sorted((piece, blank) for piece, blank in DECIDED_BY.items() if blank) + [("caidas", "reconcile")]


@pytest.mark.parametrize("piece, blank", SHORTCUTS)
def test_a_check_that_waits_for_a_blank_piece_says_what_running_it_would(workbook, piece, blank):
    """El atajo del taller (no correr las filas de una pieza cuya parte sigue en blanco) muestra lo mismo
    que correrlas: todas «todavía no»."""
    kernel, _ = workbook
    cell = next(c for c in stored_cells() if f'raise not_yet("{blank}")' in c.source)
    try:
        kernel.run(cell.source, cell.id)  # la celda como viene en el taller, en blanco
        real = kernel.run(REAL_STATUSES.format(piece=piece), "medida")
        shown = kernel.run(f"workbook.check({piece!r})", "medida")
    finally:
        kernel.run(lesson(cell.id), cell.id)
    assert real.strip() == "['todavía no']", real
    assert f"falta escribir {blank}" in shown and "✓" not in shown and "✗" not in shown, shown


def test_the_preview_of_production_waits_for_the_lesson_tier(workbook):
    """Con un error que el nivel de la lección falla, el adelanto de producción lo dice en una línea y no
    muestra su tabla: cada fila fallaría por la lección, no por una defensa."""
    kernel, _ = workbook
    mistake = next(m for m in MISTAKES if m.name == "deja la llamada colgante en el punto B")
    right = lesson(mistake.cell)
    try:
        kernel.run(right.replace(mistake.old, mistake.new), mistake.cell)
        shown = kernel.run("workbook.production()", "t-23")
    finally:
        kernel.run(right, mistake.cell)
    (line,) = shown.strip().splitlines()  # una línea, sin la tabla de producción
    assert line.startswith(PREVIEW_WAITS) and "workbook.conformance()" in line, line

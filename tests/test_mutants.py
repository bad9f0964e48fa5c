"""Los mutantes mueren: cada uno es un cambio chico y plausible (un error que cometería quien estudia)
aplicado a una copia de ``solutions/agent.py``; ``python -m harness.conformidad`` tiene que fallarlo en
la fila nombrada, con una pista que nombra la causa (no la fila). El agente sin cambios pasa esas
mismas piezas (``test_the_reference_agent_passes_the_pieces_the_mutants_use``)."""

import re
import subprocess
import sys
from typing import NamedTuple

import pytest

from maintainer.paths import LESSON_AGENT, REFERENCE_AGENT

pytestmark = pytest.mark.slow


class Mutant(NamedTuple):
    name: str
    old: str | tuple  # el texto exacto del agente que se cambia (una sola vez); una tupla: varios cambios
    new: str | tuple
    piece: str  # la pieza que corre la suite (--solo)
    row: str  # lo que dice la fila que tiene que fallar
    cause: str  # lo que tiene que decir su pista
    production: bool = False
    agent: str = REFERENCE_AGENT  # el agente generado que se muta


RECONCILE_SAVE = RERUN_SAVE = (
    '        save_effect(pending["id"], {"name": pending["name"], "result": output, "at": now_ms()})\n'
)
REFILL = '        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))\n        print(f"[turn {turns}][save B] rellenado'
PUSH = '        messages.append({"role": "assistant", "content": content})\n'
RUN_TOOLS = '        messages.append({"role": "user", "content": run_tool_uses(content)})\n'
POINT_A_BLOCK = (
    "        if point_a and pending:  # «solo el punto B» se lo salta: la llamada colgante queda invisible\n"
    "            cp = checkpoint(task, turns, tokens_used, messages, pending)  # tu turno: punto_A\n"
    "            save_checkpoint(keep_assistant_turn(cp, content))  # tu turno: punto_A\n"
    "            print(f\"[turn {turns}][save A] pending={pending['name']}\")\n"
    '            crash_point("after-save-a")\n'
)
FAILED_TOOL = "            results.append(failed)\n"
RUN_ONE = '        output, failed = try_tool(block["name"], block["input"], block["id"])\n'

MUTANTS = [
    Mutant(
        "vuelve a ejecutar una de solo lectura que ya está anotada",
        "    if hit:\n",
        '    if hit and pending["name"] not in ("read_notes", "count_words"):\n',
        "reconcile",
        "after-effect-write:1",
        "reconcile la volvió a ejecutar",
    ),
    Mutant(
        "no anota la re-ejecución de solo lectura",
        RECONCILE_SAVE,
        "",
        "reconcile",
        "after-save-a:1",
        "falta la anotación de toolu_01",
    ),
    Mutant(
        "save_effect escribe solo la anotación nueva",
        "    effects = load_effects()\n    effects[tool_use_id] = entry\n",
        "    effects = {}\n    effects[tool_use_id] = entry\n",
        "puntos",
        "after-save-b:2",
        "solo con la anotación nueva",
    ),
    Mutant(
        "no guarda el punto B rellenado (pero lo anuncia)",
        REFILL,
        '        print(f"[turn {turns}][save B] rellenado',
        "reconcile",
        "after-tool:2",
        "el punto B rellenado no se guardó",
    ),
    Mutant(
        "anota una herramienta que falla como si hubiera andado",
        FAILED_TOOL,
        '            save_effect(block["id"], {"name": block["name"], "result": failed["content"], "at": now_ms()})\n'
        '            results.append(tool_result(block["id"], failed["content"]))\n',
        "falla",
        "count_words falla",
        "is_error",
    ),
    Mutant(
        "lee texto y atrapa solo JSONDecodeError",
        "        raw = read_bytes(CHECKPOINT_PATH)\n",
        '        raw = open(CHECKPOINT_PATH, encoding="utf-8").read()\n',
        "lectura",
        "cortado a mitad de un carácter UTF-8",
        "UnicodeDecodeError",
    ),
    Mutant(
        "guarda el punto A después de agregar el turno",
        POINT_A_BLOCK + PUSH,
        PUSH + POINT_A_BLOCK,
        "puntos",
        "after-save-a:2",
        "antes de agregar el turno del asistente",
    ),
    Mutant(
        "guarda el punto A después de la herramienta",
        POINT_A_BLOCK + PUSH + RUN_TOOLS,
        PUSH + RUN_TOOLS + POINT_A_BLOCK,
        "registro",
        "after-tool:2",
        "el punto A se guarda antes de ejecutar",
    ),
    Mutant(
        "anota antes de ejecutar",
        RUN_ONE,
        '        save_effect(block["id"], {"name": block["name"], "result": None, "at": now_ms()})\n'
        + RUN_ONE,
        "registro",
        "after-tool:1",
        "se anotó antes de ejecutar",
    ),
    Mutant(
        "deja la llamada colgante en el punto B",
        "save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))  # tu turno: punto_B",
        "save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending))  # tu turno: punto_B",
        "puntos",
        "after-save-b:1",
        "pendingToolUse en null",
    ),
    Mutant(
        "una corrida nueva conserva el registro",
        "remove_durably(CHECKPOINT_PATH, EFFECTS_PATH, ",
        "remove_durably(CHECKPOINT_PATH, ",
        "apertura",
        "una corrida nueva sobre los archivos de otra",
        "borra effects.json",
    ),
    Mutant(
        "contesta is_error a una de solo lectura sin anotación",
        '    if rerunnable(pending["name"], KEYED_WRITES):\n',
        '    if KEYED_WRITES and rerunnable(pending["name"], KEYED_WRITES):\n',
        "reconcile",
        "after-save-a:2",
        "una herramienta de solo lectura sin anotación recibió is_error",
    ),
    Mutant(
        "reconcile vuelve a ejecutar sin la clave",
        'try_tool(pending["name"], pending["input"], pending["id"])',
        'try_tool(pending["name"], pending["input"], None)',
        "clave",
        "AGENT_VARIANT=idempotente",
        "sin la clave",
        production=True,
    ),
    Mutant(
        "una señal sale con 1",
        "        print(err, file=sys.stderr)\n        return err.code\n",
        "        print(err, file=sys.stderr)\n        return 1\n",
        "senales",
        "SIGTERM mientras espera al modelo",
        "termina la corrida con código 143",
        production=True,
    ),
]


# —— Issue 44: cada idea de la lección en cada etiqueta. Cada mutante, en los agentes donde cabe: el de
# referencia y el de la lección (``lesson``: el mismo error escrito en su código) ——


def on_both(mutant, lesson_old=None, lesson_new=None):
    """El mutante en el agente de referencia y en el de la lección (con su texto, si es otro)."""
    lesson = mutant._replace(
        name=f"{mutant.name} (lección)",
        old=lesson_old or mutant.old,
        new=lesson_new if lesson_new is not None else mutant.new,
        agent=LESSON_AGENT,
    )
    return [mutant, lesson]


UNREADABLE_LEDGER = "    except ValueError:\n        # Tratarlo como vacío volvería a ejecutar efectos secundarios que ya ocurrieron.\n"
LESSON_FRESH = "    for path in (CHECKPOINT_PATH, EFFECTS_PATH):\n        if os.path.exists(path):\n            os.remove(path)\n"
LESSON_IDEAS = [
    *on_both(
        Mutant(
            "el punto B rellenado guarda turns - 1",
            REFILL,
            REFILL.replace("checkpoint(task, turns,", "checkpoint(task, turns - 1,"),
            "reconcile",
            "after-save-a:2",
            "el punto B rellenado guarda el turns que leyó",
        )
    ),
    *on_both(
        Mutant(
            "al reanudar, el turno vuelve a 0",
            "    return turns, tokens_used, messages\n",
            "    return 0, tokens_used, messages\n",
            "reconcile",
            "after-save-b:2",
            "no desde 0",
        )
    ),
    *on_both(
        Mutant(
            "una corrida nueva borra el registro solo si hay punto de control",
            '    remove_durably(CHECKPOINT_PATH, EFFECTS_PATH, CHECKPOINT_PATH + ".tmp", EFFECTS_PATH + ".tmp")\n',
            "    if os.path.exists(CHECKPOINT_PATH):\n        remove_durably(EFFECTS_PATH)\n"
            '    remove_durably(CHECKPOINT_PATH, CHECKPOINT_PATH + ".tmp", EFFECTS_PATH + ".tmp")\n',
            "apertura",
            "effects.json viejo y sin checkpoint.json",
            "aunque no exista checkpoint.json",
        ),
        LESSON_FRESH,
        "    if os.path.exists(CHECKPOINT_PATH):\n        os.remove(CHECKPOINT_PATH)\n"
        "        if os.path.exists(EFFECTS_PATH):\n            os.remove(EFFECTS_PATH)\n",
    ),
    *on_both(
        Mutant(
            "un acierto en el registro vuelve con is_error",
            '        return tool_result(pending["id"], hit["result"])\n',
            '        return tool_result(pending["id"], hit["result"], True)\n',
            "reconcile",
            "after-effect-write:1",
            "sin is_error",
        ),
        '"content": hit["result"]}\n',
        '"content": hit["result"], "is_error": True}\n',
    ),
    *on_both(
        Mutant(
            "acepta version: true",
            "if version != 1 or isinstance(version, bool):",
            "if version != 1:",
            "lectura",
            "version=true",
            "compara también el tipo",
        )
    ),
    *on_both(
        Mutant(
            "lee version de un JSON que no es un objeto",
            'version = cp.get("version") if isinstance(cp, dict) else None',
            'version = cp.get("version")',
            "lectura",
            "checkpoint.json = null",
            "no un objeto",
        )
    ),
    *on_both(
        Mutant(
            "un registro ilegible se trata como vacío",
            UNREADABLE_LEDGER,
            "    except ValueError:\n        return {}\n",
            "reconcile",
            "effects.json cortado",
            "no es un registro vacío",
        )
    ),
    *on_both(
        Mutant(
            "run_tool_uses corre solo el primer tool_use",
            "    for block in tool_uses(content):\n",
            "    for block in tool_uses(content)[:1]:\n",
            "registro",
            "dos tool_use",
            "no solo el primero",
        ),
        '    for block in (b for b in content if b["type"] == "tool_use"):\n',
        '    for block in [b for b in content if b["type"] == "tool_use"][:1]:\n',
    ),
]
# El nivel de producción (solo el agente de referencia: el de la lección no tiene estas defensas).
PRODUCTION_IDEAS = [
    Mutant(
        "guarda como colgante una herramienta que no existe",
        "        content, pending = checked_turn(response, messages)  # una respuesta inválida no toca el disco\n",
        "        content, pending = checked_turn(response, messages)\n"
        '        pending = {k: tool_uses(content)[0][k] for k in ("id", "name", "input")}\n',
        "herramienta-desconocida",
        "pide borrar_todo en el turno 1",
        "no se guarda como llamada colgante",
        production=True,
    ),
    Mutant(
        "el tope de turnos cuenta todas las corridas",
        "        if turns >= start[0] + MAX_TURNS:",
        "        if turns >= MAX_TURNS:",
        "tope",
        "una corrida que alcanza el tope",
        "el tope es de cada corrida",
        production=True,
    ),
]
MUTANTS += LESSON_IDEAS + PRODUCTION_IDEAS


# —— Issue 44, la escritura en cada llamada al sistema: la suite mata cada guardado antes de cada una de
# sus llamadas (escritura) y lee los fsync de la corrida grabada (fsync, producción) ——

DURABLE_WRITE = '    write_durable(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))\n'
LESSON_WRITE = (
    '    with open(tmp, "w", encoding="utf-8") as f:\n'
    "        json.dump(data, f, ensure_ascii=False, indent=2)\n"
    "    os.replace(tmp, path)\n"
)
# El temporal se renombra con los datos todavía en el búfer de Python: se escriben al cerrarlo.
RENAME_FIRST = (
    '    f = open(tmp, "w", encoding="utf-8")\n'
    "    json.dump(data, f, ensure_ascii=False, indent=2)\n"
    "    os.replace(tmp, path)\n"
    "    f.close()\n"
)
POINT_B = (
    "        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))  # tu turno: punto_B\n"
)
WRITING = [
    *on_both(
        Mutant(
            "renombra el temporal antes de escribir sus datos",
            DURABLE_WRITE,
            '    tmp = path + ".tmp"\n' + RENAME_FIRST,
            "escritura",
            "llamada al sistema de un guardado del punto A",
            "antes de que sus datos lleguen al archivo",
        ),
        LESSON_WRITE,
        RENAME_FIRST,
    ),
    *on_both(
        Mutant(
            "escribe el punto B directo, sin temporal ni rename",
            POINT_B,
            '        with open(CHECKPOINT_PATH, "w", encoding="utf-8") as f:  # tu turno: punto_B\n'
            "            json.dump(checkpoint(task, turns, tokens_used, messages, None), f)\n",
            "escritura",
            "llamada al sistema de un guardado del punto B ·",
            "sin temporal ni rename",
        )
    ),
    Mutant(
        "sin fsync",
        DURABLE_WRITE,
        '    tmp = path + ".tmp"\n' + LESSON_WRITE,
        "fsync",
        "Un corte de luz entre la escritura y el rename",
        "os.fsync del temporal",
        production=True,
    ),
    Mutant(
        "sin fsync de la carpeta",
        DURABLE_WRITE,
        '    tmp = path + ".tmp"\n'
        '    with open(tmp, "w", encoding="utf-8") as f:\n'
        "        json.dump(data, f, ensure_ascii=False, indent=2)\n"
        "        f.flush()\n"
        "        os.fsync(f.fileno())\n"
        "    os.replace(tmp, path)\n",
        "fsync",
        "Un corte de luz entre la escritura y el rename",
        "hazle os.fsync después de os.replace",
        production=True,
    ),
]
MUTANTS += WRITING


# —— Issue 44, los casos que no se ven: un mutante por clase de error de cada idea de la lección, en los dos
# agentes. Los que escapaban (versión 0, tokensUsed, el input del turno rellenado) hicieron crecer su fila ——

SAVE_OK = '            save_effect(block["id"], {"name": block["name"], "result": output, "at": now_ms()})\n'
SAVE_ON_ERROR = '            save_effect(block["id"], {"name": block["name"], "result": failed["content"], "at": now_ms()})\n'
LESSON_SAVE_ON_ERROR = (
    '            save_effect(block["id"], {"name": block["name"], "result": error, "at": now_ms()})\n'
)
AFTER_TOOL = '            continue\n        crash_point("after-tool")\n'
READ_ONLY_BRANCH = '    if rerunnable(pending["name"], KEYED_WRITES):\n'
LESSON_READ_ONLY_BRANCH = '    if pending["name"] in READ_ONLY:\n'
REFILL_PAIR = (
    '        messages.append({"role": "user", "content": [result]})\n'
    "        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))\n"
)
ASSISTANT_REFILL = '        messages.append({"role": "assistant", "content": assistant_turn(cp)})\n'
LESSON_ASSISTANT_REFILL = (
    '        messages.append({"role": "assistant", "content": [{"type": "tool_use", **pending}]})\n'
)
HIT_RETURN = '        return tool_result(pending["id"], hit["result"])\n'
LESSON_HIT_RETURN = (
    '        return {"type": "tool_result", "tool_use_id": pending["id"], "content": hit["result"]}\n'
)
POINT_A_SAVE = (
    "            cp = checkpoint(task, turns, tokens_used, messages, pending)  # tu turno: punto_A\n"
)
LESSON_POINT_A_SAVE = (
    "        save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending))  # tu turno: punto_A\n"
)
SAVE_B_CRASH = '        print(f"[turn {turns}][save B]")\n        crash_point("after-save-b")\n'
RERUN = (
    '        output, failed = try_tool(pending["name"], pending["input"], pending["id"])\n'
    "        if failed:\n"
    "            return failed\n"
)
LESSON_RERUN = '        output = run_tool(pending["name"], pending["input"])\n'
LESSON_RUN_ONE = "        try:\n            output = run_tool("
HIDDEN = [
    *on_both(
        Mutant(
            "anota solo cuando la herramienta falla",
            (AFTER_TOOL, SAVE_OK),
            (SAVE_ON_ERROR + AFTER_TOOL, "            pass\n"),
            "falla",
            "count_words falla",
            "solo se anota lo que corrió con éxito",
        ),
        (AFTER_TOOL, SAVE_OK),
        (LESSON_SAVE_ON_ERROR + AFTER_TOOL, "            pass\n"),
    ),
    *on_both(
        Mutant(
            "reconcile cambia la rama de solo lectura por la de is_error",
            READ_ONLY_BRANCH,
            READ_ONLY_BRANCH.replace("if rerunnable", "if not rerunnable"),
            "reconcile",
            "after-save-a:1",
            "recibió is_error",
        ),
        LESSON_READ_ONLY_BRANCH,
        LESSON_READ_ONLY_BRANCH.replace(" in ", " not in "),
    ),
    *on_both(
        Mutant(
            "reconcile cuenta write_report como de solo lectura",
            READ_ONLY_BRANCH,
            READ_ONLY_BRANCH.replace(":\n", ' or pending["name"] == "write_report":\n'),
            "reconcile",
            "after-save-a:3",
            "se volvió a ejecutar a ciegas",
        ),
        LESSON_READ_ONLY_BRANCH,
        '    if pending["name"] in (*READ_ONLY, "write_report"):\n',
    ),
    *on_both(
        Mutant(
            "el rellenado se guarda antes de agregar el tool_result",
            REFILL_PAIR,
            "".join(reversed(REFILL_PAIR.splitlines(keepends=True))),
            "reconcile",
            "after-save-a:1",
            "agrega el turno del asistente y el tool_result",
        )
    ),
    *on_both(
        Mutant(
            "el rellenado deja la colgante",
            REFILL_PAIR,
            REFILL_PAIR.replace("messages, None)", "messages, pending)"),
            "reconcile",
            "after-save-a:1",
            "el punto B rellenado no se guardó",
        )
    ),
    *on_both(
        Mutant(
            "limpia la colgante antes de ejecutar la herramienta",
            RUN_TOOLS,
            "        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))\n" + RUN_TOOLS,
            "registro",
            "after-tool:1",
            "se guardó antes de ejecutar la herramienta",
        )
    ),
    *on_both(
        Mutant(
            "al reanudar agrega dos veces el turno del asistente",
            ASSISTANT_REFILL,
            ASSISTANT_REFILL * 2,
            "reconcile",
            "after-save-a:1",
            "la API rechazaría",
        ),
        LESSON_ASSISTANT_REFILL,
        LESSON_ASSISTANT_REFILL * 2,
    ),
    *on_both(
        Mutant(
            "rellena el turno del asistente sin el input de la llamada",
            ASSISTANT_REFILL,
            '        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": pending["id"], "name": pending["name"], "input": {}}]})\n',
            "reconcile",
            "after-save-a:1",
            "la llamada colgante entera",
        ),
        LESSON_ASSISTANT_REFILL,
    ),
    *on_both(
        Mutant(
            "el registro se anota por nombre",
            SAVE_OK,
            SAVE_OK.replace('save_effect(block["id"]', 'save_effect(block["name"]'),
            "puntos",
            "after-save-b:1",
            "no por su tool_use_id",
        )
    ),
    *on_both(
        Mutant(
            "el registro se anota y se busca por nombre",
            (SAVE_OK, '    hit = load_effects().get(pending["id"])\n'),
            (
                SAVE_OK.replace('save_effect(block["id"]', 'save_effect(block["name"]'),
                '    hit = load_effects().get(pending["name"])\n',
            ),
            "puntos",
            "after-save-b:2",
            "no por su tool_use_id",
        )
    ),
    *on_both(
        Mutant(
            "el registro guarda la entrada en vez del resultado",
            SAVE_OK,
            SAVE_OK.replace('"result": output', '"result": json.dumps(block["input"])'),
            "puntos",
            "after-save-b:1",
            "se anota el resultado real",
        )
    ),
    *on_both(
        Mutant(
            "el acierto devuelve la anotación entera",
            HIT_RETURN,
            HIT_RETURN.replace('hit["result"]', "json.dumps(hit)"),
            "reconcile",
            "after-effect-write:1",
            "lleva el resultado anotado",
        ),
        LESSON_HIT_RETURN,
        LESSON_HIT_RETURN.replace('hit["result"]', "json.dumps(hit)"),
    ),
    *on_both(
        Mutant(
            "el acierto vuelve a ejecutar igual",
            HIT_RETURN,
            '        run_tool(pending["name"], pending["input"])\n' + HIT_RETURN,
            "reconcile",
            "after-effect-write:3",
            "no se repite a ciegas",
        ),
        LESSON_HIT_RETURN,
        '        run_tool(pending["name"], pending["input"])\n' + LESSON_HIT_RETURN,
    ),
    *on_both(
        Mutant(
            "ignora el acierto de write_report",
            "    if hit:\n",
            '    if hit and pending["name"] != "write_report":\n',
            "reconcile",
            "after-effect-write:3",
            "no la encontró",
        )
    ),
    *on_both(
        Mutant(
            "la rama sin anotación no marca is_error",
            '        "ejecutar. Por favor verifica por tu cuenta si se completó.",\n        True,\n',
            '        "ejecutar. Por favor verifica por tu cuenta si se completó.",\n',
            "reconcile",
            "after-save-a:3",
            "is_error: true",
        ),
        '"content": unknown, "is_error": True}\n',
        '"content": unknown}\n',
    ),
    *on_both(
        Mutant(
            "anota la re-ejecución antes de ejecutarla",
            RERUN + RERUN_SAVE,
            RERUN_SAVE.replace('"result": output', '"result": None') + RERUN,
            "reconcile",
            "after-save-a:1",
            "se anotó antes de ejecutar",
        ),
        LESSON_RERUN + RERUN_SAVE,
        RERUN_SAVE.replace('"result": output', '"result": None') + LESSON_RERUN,
    ),
    *on_both(
        Mutant(
            "acepta version 0",
            "if version != 1 or isinstance(version, bool):",
            "if version is None or version > 1 or isinstance(version, bool):",
            "lectura",
            "version=0",
            "solo version=1",
        )
    ),
    *on_both(
        Mutant(
            "sin punto A en el turno 3",
            "        if point_a and pending:",
            "        if point_a and pending and turns < 3:",
            "registro",
            "after-tool:3",
            "el punto A se guarda antes de ejecutar",
        ),
        LESSON_POINT_A_SAVE,
        "        if turns < 3:\n    " + LESSON_POINT_A_SAVE,
    ),
    *on_both(
        Mutant(
            "after-tool antes de ejecutar la herramienta",
            ('        crash_point("after-tool")\n', RUN_ONE),
            ("", '        crash_point("after-tool")\n' + RUN_ONE),
            "registro",
            "after-tool:3",
            "crash_point('after-tool') va justo después",
        ),
        ('        crash_point("after-tool")\n', LESSON_RUN_ONE),
        ("", '        crash_point("after-tool")\n' + LESSON_RUN_ONE),
    ),
    *on_both(
        Mutant(
            "after-effect-write antes de anotar",
            ('        else:\n            crash_point("after-effect-write")\n', "        try:\n" + SAVE_OK),
            ("", '        crash_point("after-effect-write")\n        try:\n' + SAVE_OK),
            "registro",
            "after-effect-write:1",
            "va justo después, nunca antes",
        )
    ),
    *on_both(
        Mutant(
            "after-save-b antes de guardar el punto B",
            POINT_B + SAVE_B_CRASH,
            SAVE_B_CRASH + POINT_B,
            "puntos",
            "after-save-b:1",
            "crash_point('after-save-b') va justo después",
        )
    ),
    *on_both(
        Mutant(
            "el rename siempre va a checkpoint.json",
            "    write_durable(path, json.dumps(",
            "    write_durable(CHECKPOINT_PATH, json.dumps(",
            "escritura",
            "una escritura del registro",
            "en el lugar de effects.json",
        ),
        "    os.replace(tmp, path)\n",
        "    os.replace(tmp, CHECKPOINT_PATH)\n",
    ),
    *on_both(
        Mutant(
            "copia el temporal en vez de renombrarlo",
            DURABLE_WRITE,
            '    import shutil\n    tmp = path + ".tmp"\n'
            + LESSON_WRITE.replace("os.replace(tmp, path)", "shutil.copyfile(tmp, path)"),
            "escritura",
            "un guardado del punto B ·",
            "shutil.copyfile",
        ),
        "    os.replace(tmp, path)\n",
        "    import shutil\n    shutil.copyfile(tmp, path)\n",
    ),
    *on_both(
        Mutant(
            "la caída simulada sale con 1",
            "        return 137\n",
            "        return 1\n",
            "puntos",
            "after-save-b:1",
            "una caída simulada sale con 137",
        )
    ),
    *on_both(
        Mutant(
            "el [done] sale con 1",
            '    return print_final(f"[done] {result}")',
            '    print_final(f"[done] {result}")\n    return 1',
            "reconcile",
            "after-save-b:1",
            "imprimió [done] pero salió",
        ),
        '    print(f"[done] {result}")\n    return 0\n',
        '    print(f"[done] {result}")\n    return 1\n',
    ),
    *on_both(
        Mutant(
            "un argumento desconocido sale con 1",
            "        return 2\n",
            "        return 1\n",
            "terminal",
            "--reanudar",
            "se rechaza antes de tocar nada",
        )
    ),
    *on_both(
        Mutant(
            "al reanudar el turno avanza uno",
            "    return turns, tokens_used, messages\n",
            "    return turns + 1, tokens_used, messages\n",
            "reconcile",
            "after-save-b:1",
            "sigue desde el turns del punto de control",
        )
    ),
    *on_both(
        Mutant(
            "al reanudar tokensUsed vuelve a 0",
            '    turns, tokens_used, messages = cp["turns"], cp["tokensUsed"], cp["messages"]\n',
            '    turns, tokens_used, messages = cp["turns"], 0, cp["messages"]\n',
            "reconcile",
            "after-save-b:1",
            "tokensUsed es de toda la tarea",
        )
    ),
    *on_both(
        Mutant(
            "el punto A guarda tokensUsed 0",
            POINT_A_SAVE,
            POINT_A_SAVE.replace("turns, tokens_used,", "turns, 0,"),
            "puntos",
            "after-save-a:1",
            "cada punto A guarda más",
        ),
        LESSON_POINT_A_SAVE,
        LESSON_POINT_A_SAVE.replace("turns, tokens_used,", "turns, 0,"),
    ),
    *on_both(
        Mutant(
            "el punto B no suma los tokens",
            POINT_B,
            POINT_B.replace("turns, tokens_used,", "turns, 0,"),
            "puntos",
            "after-save-b:1",
            "guardan el mismo tokensUsed",
        )
    ),
]
MUTANTS += HIDDEN


def conformidad(agent, *args):
    return subprocess.run(
        [sys.executable, "-m", "harness.conformidad", str(agent), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )


def mutate(source, mutant):
    """El agente con el cambio del mutante (``old``/``new``, o tuplas de cambios que van juntos)."""
    olds, news = (mutant.old, mutant.new) if isinstance(mutant.old, tuple) else ((mutant.old,), (mutant.new,))
    for old, new in zip(olds, news, strict=True):
        assert source.count(old) == 1, f"{mutant.name}: el texto a cambiar ya no está (una vez) en el agente"
        source = source.replace(old, new)
    return source


def failed_rows(stdout):
    """{línea de la fila ✗: su pista}."""
    rows, lines = {}, stdout.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("✗"):
            hint = next((n.strip() for n in lines[i + 1 : i + 3] if n.strip().startswith("pista:")), "")
            rows[line] = hint
    return rows


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_suite_fails_the_mutant_in_its_row_with_its_cause(tmp_path, mutant):
    agent = tmp_path / "agent.py"
    agent.write_text(mutate(open(mutant.agent, encoding="utf-8").read(), mutant), encoding="utf-8")
    done = conformidad(agent, "--solo", mutant.piece)
    assert done.returncode == 1 and "Traceback" not in done.stdout, done.stdout[-3000:] + done.stderr
    rows = {line: hint for line, hint in failed_rows(done.stdout).items() if mutant.row in line}
    assert rows, f"ninguna fila ✗ con «{mutant.row}»:\n{done.stdout[-4000:]}"
    assert any(mutant.cause in hint for hint in rows.values()), rows
    for line in done.stdout.splitlines():
        # Un texto acotado termina en «…» después de un espacio, nunca pegado a media palabra.
        assert not re.search(r"\w…$", line) and not re.search(r"«\w+$", line), line


@pytest.mark.parametrize("source", sorted({m.agent for m in MUTANTS}))
def test_the_reference_agent_passes_the_pieces_the_mutants_use(source):
    pieces = sorted({m.piece for m in MUTANTS if m.agent == source})
    done = conformidad(source, *[a for p in pieces for a in ("--solo", p)])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr

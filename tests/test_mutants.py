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
    old: str  # el texto exacto del agente que se cambia (tiene que estar una sola vez)
    new: str
    piece: str  # la pieza que corre la suite (--solo)
    row: str  # lo que dice la fila que tiene que fallar
    cause: str  # lo que tiene que decir su pista
    production: bool = False
    agent: str = REFERENCE_AGENT  # el agente generado que se muta


RECONCILE_SAVE = (
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
FAILED_TOOL = '            results.append(tool_result(block["id"], f"Error de ejecución de la herramienta: {err}", True))\n'

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
        '            save_effect(block["id"], {"name": block["name"], "result": str(err), "at": now_ms()})\n'
        '            results.append(tool_result(block["id"], f"Error de ejecución de la herramienta: {err}"))\n',
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
        "        try:\n            output = run_tool(",
        '        save_effect(block["id"], {"name": block["name"], "result": None, "at": now_ms()})\n'
        "        try:\n            output = run_tool(",
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
        '        output = run_tool(pending["name"], pending["input"], key=pending["id"] if KEYED_WRITES else None)\n',
        '        output = run_tool(pending["name"], pending["input"])\n',
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
            "    except ValueError:\n        effects = None\n",
            "    except ValueError:\n        effects = {}\n",
            "reconcile",
            "effects.json cortado",
            "no es un registro vacío",
        ),
        "        return json.loads(raw)\n    except ValueError:\n",
        "        return json.loads(raw)\n    except ValueError:\n        return {}\n",
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


def conformidad(agent, *args):
    return subprocess.run(
        [sys.executable, "-m", "harness.conformidad", str(agent), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )


def mutate(source, mutant):
    assert source.count(mutant.old) == 1, (
        f"{mutant.name}: el texto a cambiar ya no está (una vez) en el agente"
    )
    return source.replace(mutant.old, mutant.new)


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

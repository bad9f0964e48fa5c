"""Los mutantes mueren: cada uno es un cambio chico y plausible (un error que cometería quien estudia)
aplicado a una copia de ``solutions/agent.py``; ``python -m harness.conformidad`` tiene que fallarlo en
la fila nombrada, con una pista que nombra la causa (no la fila). El agente sin cambios pasa esas
mismas piezas (``test_the_reference_agent_passes_the_pieces_the_mutants_use``)."""

import re
import subprocess
import sys
from typing import NamedTuple

import pytest

from maintainer.paths import REFERENCE_AGENT

pytestmark = pytest.mark.slow


class Mutant(NamedTuple):
    name: str
    old: str  # el texto exacto del agente que se cambia (tiene que estar una sola vez)
    new: str
    piece: str  # la pieza que corre la suite (--solo)
    row: str  # lo que dice la fila que tiene que fallar
    cause: str  # lo que tiene que decir su pista
    production: bool = False


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
    agent.write_text(mutate(open(REFERENCE_AGENT, encoding="utf-8").read(), mutant), encoding="utf-8")
    done = conformidad(agent, "--solo", mutant.piece)
    assert done.returncode == 1 and "Traceback" not in done.stdout, done.stdout[-3000:] + done.stderr
    rows = {line: hint for line, hint in failed_rows(done.stdout).items() if mutant.row in line}
    assert rows, f"ninguna fila ✗ con «{mutant.row}»:\n{done.stdout[-4000:]}"
    assert any(mutant.cause in hint for hint in rows.values()), rows
    for line in done.stdout.splitlines():
        # Un texto acotado termina en «…» después de un espacio, nunca pegado a media palabra.
        assert not re.search(r"\w…$", line) and not re.search(r"«\w+$", line), line


def test_the_reference_agent_passes_the_pieces_the_mutants_use():
    pieces = sorted({m.piece for m in MUTANTS})
    done = conformidad(REFERENCE_AGENT, *[a for p in pieces for a in ("--solo", p)])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr

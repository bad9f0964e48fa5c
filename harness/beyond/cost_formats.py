"""Cuánto cuesta guardar un turno cuando la tarea crece: tiempo y bytes escritos por turno.

Tres formatos guardan la misma tarea sintética (cada turno: el modelo pide ``read_notes`` y la
herramienta devuelve las notas de ventas):

- ``json``: el de la lección. Punto A, registro y punto B reescriben cada uno su archivo entero
  (temporal + fsync + rename): el turno n escribe O(n) bytes, la tarea O(n²).
- ``jsonl``: un registro que solo crece (JSON lines): punto A, efecto y punto B son una línea cada
  uno, con fsync por línea. Cada turno escribe lo mismo, O(1).
- ``dbos``: el motor con su SQLite: el turno son dos pasos (modelo y herramienta), y el motor anota
  la salida de cada uno.

Los bytes son los que el proceso entrega al sistema operativo (``wchar`` de ``/proc/self/io``, así
que solo en Linux): la misma vara para los tres formatos, páginas de SQLite y su diario incluidos.
"""

import json
import os
import sys
import time

from harness.beyond.file_types import Checkpoint, LedgerEntry
from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE, VERSION
from harness.defenses.durable import write_durable
from harness.errors import HarnessError
from harness.tools import NOTES_PATH

if __name__ == "__main__":  # con un servidor que ya importó DBOS, la medición nace de él (preload)
    from harness.beyond.preload import relay_if_preloaded

    relay_if_preloaded("harness.beyond.cost_formats")

FORMATS = ("json", "jsonl", "dbos")
_NOTES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", NOTES_PATH)


def written_bytes():
    """Bytes que este proceso lleva escritos con write() (cualquier archivo)."""
    try:
        with open("/proc/self/io", encoding="ascii") as f:
            fields = dict(line.split(": ") for line in f.read().splitlines())
    except OSError:
        raise HarnessError("Esta medición lee /proc/self/io, que solo existe en Linux.") from None
    return int(fields["wchar"])


def turn_messages(n):
    """El turno n de la tarea sintética: (llamada, turno del asistente, turno de usuario)."""
    with open(_NOTES, encoding="utf-8") as f:
        notes = f.read()
    call = {"id": f"toolu_{n:04d}", "name": "read_notes", "input": {"path": NOTES_PATH}}
    assistant = {"role": "assistant", "content": [{"type": "tool_use", **call}]}
    user = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": notes}]}
    return call, assistant, user


def _dump(data):
    return json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")


def _append_line(f, record):
    f.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
    f.flush()
    os.fsync(f.fileno())


def _measure(turns, save_turn):
    """[(segundos, bytes)] de cada turno guardado con ``save_turn(n)``."""
    out = []
    for n in range(1, turns + 1):
        start, before = time.perf_counter(), written_bytes()
        save_turn(n)
        out.append((time.perf_counter() - start, written_bytes() - before))
    return out


def measure_json(turns, workdir):
    """El formato de la lección: tres archivos enteros reescritos por turno."""
    messages, effects = [{"role": "user", "content": "tarea"}], {}

    def save_turn(n):
        call, assistant, user = turn_messages(n)
        cp = Checkpoint(
            version=VERSION, task="tarea", turns=n, tokensUsed=0, messages=messages, pendingToolUse=call
        )
        write_durable(os.path.join(workdir, CHECKPOINT_FILE), _dump(cp))
        effects[call["id"]] = LedgerEntry(name=call["name"], result=user["content"][0]["content"], at=0)
        write_durable(os.path.join(workdir, EFFECTS_FILE), _dump(effects))
        messages.extend([assistant, user])
        write_durable(os.path.join(workdir, CHECKPOINT_FILE), _dump({**cp, "pendingToolUse": None}))

    return _measure(turns, save_turn)


def measure_jsonl(turns, workdir):
    """Un registro que solo crece: tres líneas por turno, fsync por línea."""
    with open(os.path.join(workdir, "log.jsonl"), "ab") as f:

        def save_turn(n):
            call, assistant, user = turn_messages(n)
            _append_line(f, {"kind": "A", "turn": n, "pendingToolUse": call})
            _append_line(f, {"kind": "effect", "id": call["id"], "result": user["content"][0]["content"]})
            _append_line(f, {"kind": "B", "turn": n, "messages": [assistant, user]})

        return _measure(turns, save_turn)


def measure_dbos(turns, workdir):
    """El motor con su SQLite: la tarea de ``turns`` turnos como flujo, medida turno a turno."""
    from dbos import DBOS

    @DBOS.step()
    def model_step(n):
        return turn_messages(n)[1]["content"]

    @DBOS.step()
    def tool_step(n):
        return turn_messages(n)[2]["content"][0]["content"]

    @DBOS.workflow()
    def task(turns):
        return _measure(turns, lambda n: (model_step(n), tool_step(n)))

    path = os.path.join(os.path.abspath(workdir), "costo.sqlite")
    if os.path.exists(path):
        os.remove(path)
    DBOS(
        config={"name": "costo-por-turno", "system_database_url": f"sqlite:///{path}", "log_level": "WARNING"}
    )
    DBOS.launch()
    try:
        return task(turns)
    finally:
        DBOS.destroy()


MEASURES = {"json": measure_json, "jsonl": measure_jsonl, "dbos": measure_dbos}


def measure(fmt, turns, workdir):
    """[(segundos, bytes)] por turno del formato ``fmt`` en ``workdir`` (que se crea si falta).

    Cada medición corre en un proceso aparte: ``wchar`` cuenta todo lo que el proceso escribe (un
    kernel de Jupyter escribe en sus sockets a la vez), y el motor es uno por proceso."""
    return _collect(fmt, _start(fmt, turns, workdir))


def measure_all(turns, folder, formats=FORMATS):
    """{formato: [(segundos, bytes)] por turno}, cada uno en ``folder``/formato. Los procesos corren a la
    vez: cada uno cuenta solo sus propios bytes, así que las cifras de bytes son las mismas que una por
    una (los segundos no: se reparten el disco)."""
    started = {fmt: _start(fmt, turns, os.path.join(folder, fmt)) for fmt in formats}
    return {fmt: _collect(fmt, process) for fmt, process in started.items()}


def _start(fmt, turns, workdir):
    os.makedirs(workdir, exist_ok=True)
    args = [sys.executable, "-m", "harness.beyond.cost_formats", fmt, str(turns), os.fspath(workdir)]
    # Se importa aquí: el proceso medido también carga este módulo, no lanza nada y no paga ese import.
    from harness.runs.launcher import start  # noqa: PLC0415

    # Con el preload (harness.beyond.preload), el proceso nace de uno que ya importó DBOS.
    return start(args, new_session=False)


def _collect(fmt, process):
    out, err = process.communicate()
    if process.returncode:
        raise HarnessError(f"La medición de {fmt} falló: {err.strip().splitlines()[-1:]}")
    return [tuple(row) for row in json.loads(out)]


def main(argv=None):
    """``python -m harness.beyond.cost_formats FORMATO TURNOS CARPETA``: la medición, en JSON."""
    fmt, turns, workdir = sys.argv[1:] if argv is None else argv
    print(json.dumps(MEASURES[fmt](int(turns), workdir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Lo que un corte de luz puede dejar de un guardado de verdad («Un corte de luz entre la escritura y
el rename», en «De la lección a producción»).

Graba con strace un proceso nuevo que llama a una función de guardado del agente, pasa sus llamadas
al modelo de corte de luz (``harness.runs.power_cut``) y carga cada estado posible con el
``load_checkpoint`` del mismo agente.
"""

import json
import sys

from harness.contract import CHECKPOINT_FILE
from harness.defenses.workdir import inside
from harness.runs import power_cut, strace_log
from harness.runs.launcher import launch, load_agent


def traced_save(agent, workdir, function, args):
    """Las llamadas al sistema de ``function(*args)`` del agente, corrida en un proceso nuevo en
    ``workdir``, y el contenido de ``workdir`` antes ({nombre: bytes})."""
    initial = {path.name: path.read_bytes() for path in workdir.iterdir()}
    log = (workdir.parent / f"{workdir.name}.strace").resolve()  # strace corre en workdir
    spec = json.dumps({"agent": str(agent.resolve()), "function": function, "args": args})
    options = strace_log.recording_options(log, ["-e", f"trace={strace_log.TRACED}"])
    done = launch([sys.executable, "-m", "harness.conformidad.driver", spec], cwd=workdir, strace=options)
    if done.returncode != 0:
        raise RuntimeError(f"el guardado grabado terminó con el código {done.returncode}: {done.stderr}")
    return power_cut.operations(strace_log.parse_log(log), workdir, initial), initial


def after_a_cut(agent, fresh, before, after):
    """{lo que lee ``load_checkpoint``: [carpetas]} de cada estado que puede dejar un corte de luz
    durante ``save_checkpoint(after)`` sobre un ``checkpoint.json`` con ``before``. ``fresh(nombre)``
    da una carpeta de trabajo vacía (``Workspace.fresh``); imprime las llamadas del guardado."""
    workdir = fresh(f"corte-{agent.stem}")
    (workdir / CHECKPOINT_FILE).write_text(json.dumps(before), encoding="utf-8")
    calls, initial = traced_save(agent, workdir, "save_checkpoint", [after])
    states, _ = power_cut.crash_states(calls, initial)
    loader, found = load_agent(agent).load_checkpoint, {}
    for i, state in enumerate(states):
        folder = fresh(f"corte-{agent.stem}-{i}")
        power_cut.write_state(state, folder)
        found.setdefault(_read(loader, folder), []).append(folder)
    print("llamadas del guardado:", ", ".join(op.kind for op in calls))
    return found


def _read(loader, folder):
    """«el turno N» si ``loader`` carga el estado de ``folder``; «no carga» si falla de cualquier modo."""
    with inside(folder):
        try:
            return f"el turno {loader()['turns']}"
        except Exception:  # noqa: BLE001 (cualquier error de carga es «no carga»)
            return "no carga"

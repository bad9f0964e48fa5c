"""El modelo de corte de luz (``harness.runs.power_cut``) sobre los escenarios del barrido de fallas: los
estados que un corte puede dejar durante la corrida de un escenario, y lo que queda mal en cada uno.

Lo usan ``benchmarks/power_cut.py`` y sus pruebas en ``tests/conformance/``.
"""

import os
import tempfile

from harness.runs.power_cut import crash_states, operations, write_state
from maintainer.faults import check_outcome, copy_dir, record


def scenario_states(scenario, template, agent):
    """(estados distintos, recorridos, operaciones) de un corte durante la corrida del escenario."""
    with tempfile.TemporaryDirectory(prefix="corte-") as base:
        workdir = os.path.join(base, "trabajo")
        os.mkdir(workdir)
        copy_dir(template, workdir)
        initial = {}
        for name in os.listdir(workdir):
            with open(os.path.join(workdir, name), "rb") as f:
                initial[name] = f.read()
        _, calls = record(scenario, agent, workdir, os.path.join(base, "grabado.strace"))
        ops = operations(calls, workdir, initial)
    states, walked = crash_states(ops, initial)
    return states, walked, ops


def check_state(state, agent, expected):
    """Los problemas de un estado tras el corte: que cargue y que reanudar deje una sola copia."""
    with tempfile.TemporaryDirectory(prefix="corte-") as base:
        workdir = os.path.join(base, "trabajo")
        os.mkdir(workdir)
        write_state(state, workdir)
        return check_outcome(workdir, agent, expected, os.path.join(base, "modelo.jsonl"))

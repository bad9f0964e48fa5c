"""Una fila que en esta máquina no puede correr la devuelve su comprobación misma como «sin comprobar»,
con su porqué: nunca «no aplica», nunca un pase. (Sin strace: ``tests/test_conformidad_cli.py``; aquí,
sin la FIFO con tope de Linux que deja al agente esperando al modelo.)"""

from harness.conformidad.checks import waiting
from harness.conformidad.processes import Context
from harness.conformidad.report import all_passed
from harness.conformidad.rows import ON_THIS_MACHINE, UNCHECKED
from harness.conformidad.suite import run_suite


def test_without_a_bounded_fifo_the_rows_that_wait_for_the_model_are_unchecked(agent, monkeypatch):
    monkeypatch.setattr(waiting, "fcntl", None)  # como en Windows: sin F_SETPIPE_SZ
    results = run_suite(Context(str(agent), {}), ["senales", "aviso-sigkill"])
    rows = [row for _, piece_rows in results for row in piece_rows]
    assert rows and all(row.status == UNCHECKED for row in rows), rows
    assert all(f"{ON_THIS_MACHINE}: hace falta Linux" in row.got for row in rows), rows
    assert not all_passed(rows)

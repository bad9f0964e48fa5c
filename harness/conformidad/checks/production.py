"""El nivel de producción: una capacidad por defensa del notebook «De la lección a producción»; cada
fila lleva el título de su sección."""

from . import assistant_turn, idempotency, lasting_faults, links, lock, sigkill_warning, signals, unknown_tool

MODULES = (signals, assistant_turn, unknown_tool, idempotency, lock, lasting_faults, links, sigkill_warning)
CAPABILITIES = [(m.PIECE, f"{m.TITLE} · «{m.SECTION}»", m.ROWS, m.CHECKS) for m in MODULES]

"""El nivel de producción: una capacidad por defensa del notebook «De la lección a producción»; cada
fila lleva el título de su sección."""

from . import (
    assistant_turn,
    fsync,
    idempotency,
    lasting_faults,
    links,
    lock,
    sigkill_warning,
    signals,
    turn_cap,
    unknown_tool,
)

# Las secciones de «De la lección a producción», en su orden: cada fila de este nivel nombra una.
SECTIONS = (
    "Un corte de luz entre la escritura y el rename",
    "Un disco que falla y sigue fallando",
    "Un registro que no se puede leer",
    "Un punto de control con otra forma",
    "Un enlace donde debería haber un archivo",
    "Dos agentes en la misma carpeta",
    "Texto antes del tool_use",
    "Dos tool_use en un turno",
    "El tope de turnos",
    "Ctrl-C o SIGTERM mientras espera al modelo",
    "Una tarea que ya terminó",
    "La clave de idempotencia, una opción",
)
MODULES = (
    fsync,
    signals,
    assistant_turn,
    unknown_tool,
    turn_cap,
    idempotency,
    lock,
    lasting_faults,
    links,
    sigkill_warning,
)
CAPABILITIES = [(m.PIECE, f"{m.TITLE} · «{m.SECTION}»", m.ROWS, m.CHECKS) for m in MODULES]

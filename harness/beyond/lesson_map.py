"""La lección en DBOS: cada pieza de la lección y lo que hace sus veces en el motor («Más allá»).

Las dos primeras columnas de la tabla de «Más allá» son texto fijo; la tercera, lo medido, la arma el
notebook con sus corridas, fila por fila en este mismo orden.
"""

from harness.contract import BRANCH_MARKERS, CHECKPOINT_FILE, EFFECTS_FILE, HIT

LESSON_IN_DBOS = [
    (
        f"{CHECKPOINT_FILE}: task, turns, messages",
        "estado del flujo (PENDING/SUCCESS) y sus entradas (task); messages se rehace al volver a correr el flujo",
    ),
    ("punto A: pendingToolUse", "salida anotada del paso del modelo (nombra la herramienta)"),
    ("ventana ②: herramienta hecha, registro sin escribir", "paso de herramienta sin salida anotada"),
    (
        f"registro {EFFECTS_FILE} (tool_use_id → result)",
        "salida anotada del paso de herramienta (id de paso → salida)",
    ),
    ("punto B: pendingToolUse = null", "la misma salida de paso: no hay una segunda escritura"),
    (f"reconcile · {BRANCH_MARKERS[HIT]}", "recuperación: el paso devuelve su salida anotada sin ejecutarse"),
    (
        "reconcile · solo lectura, volver a ejecutar",
        "recuperación: el paso sin salida se ejecuta de nuevo (cualquier herramienta)",
    ),
    (
        "reconcile · efectos secundarios, is_error",
        "no existe: el motor vuelve a ejecutar (al menos una vez); la clave de idempotencia lo hace seguro",
    ),
    ("--resume", "DBOS.launch() recupera los flujos PENDING de su executor_id"),
]

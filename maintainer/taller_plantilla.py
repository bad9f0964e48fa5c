"""La plantilla del taller (``maintainer.taller``): el texto, las predicciones y las comprobaciones, en
orden; ``("leccion", ID, None)`` es el lugar de la celda ``#| export`` de la lección con ese id."""

PLANTILLA = [
    (
        "md",
        "t-01",
        """# Taller: tu agente

*Gestión de estado y persistencia · Lección 6 · después de la lección, antes de los ejercicios*

En la [lección](leccion_6_puntos_de_control.ipynb) leíste el agente bloque por bloque. Aquí lo escribes tú: las celdas marcadas **tu turno** traen solo `# TU CÓDIGO AQUÍ` donde va el corazón de la lección (guardar y leer el punto de control, empezar de cero, los puntos A y B, el registro, `reconcile`); el resto del agente viene armado, bloqueado, tal como está en la lección.

Cómo se trabaja:

1. Ejecuta las celdas en orden, de arriba abajo (la primera prepara el taller).
2. En cada celda **tu turno**, reemplaza las dos líneas `# TU CÓDIGO AQUÍ` / `raise todavia_no(...)` por tu código y ejecuta la celda.
3. Ejecuta la comprobación que la sigue. Arma `_trabajo/taller/agent.py` con las celdas que ejecutaste (no hace falta guardar el notebook), lo corre como un proceso de verdad, lo mata donde la pieza importa y muestra una tabla: qué se esperaba, qué pasó, ✓ o ✗ y una pista que nombra el momento. Lo que todavía no escribiste aparece como **todavía no**.

Al final, tu agente contra la suite de conformidad entera, y en el laboratorio de caídas.""",
    ),
    (
        "code",
        "t-02",
        """from harness.taller import Taller

taller = Taller("taller_tu_agente.ipynb")  # desde aquí, anota cada celda «#| export» que ejecutas""",
    ),
    (
        "md",
        "t-03",
        """## El agente, hasta ahora

Lo que importa el agente y sus constantes, y la escena que se guarda (`checkpoint`, con las claves de la lección). Ejecútalas: son parte de tu agente.""",
    ),
    ("leccion", "code-03", None),
    ("leccion", "code-18", None),
    (
        "md",
        "t-04",
        """## 1. Guardar sin corromper: `write_json_atomic`

`save_checkpoint(cp)` llama a `write_json_atomic(CHECKPOINT_PATH, cp)`, y el registro de más abajo también la usa. Tu turno: que `write_json_atomic(path, data)` escriba el JSON de `data` (con `ensure_ascii=False, indent=2`) **primero en un archivo temporal** (`path + ".tmp"`) y que después lo ponga en el lugar de `path` **de una vez**, con `os.replace` (el rename atómico de la lección). Nunca se escribe directo sobre `path`: quien lea el archivo ve el viejo o el nuevo, nunca uno a medias.

**Antes de comprobar:** la comprobación deja un `checkpoint.json` anterior que tiene otro nombre más (un enlace duro) y un `.tmp` a medio escribir de una muerte anterior. Si escribieras directo sobre `checkpoint.json`, ¿qué vería ese otro nombre después de guardar?""",
    ),
    ("leccion", "code-20", None),
    ("code", "t-05", 'taller.comprobar("escritura")'),
    (
        "md",
        "t-06",
        """## 2. Leer sin adivinar: `load_checkpoint`

Tu turno: `load_checkpoint()` lee `CHECKPOINT_PATH` **en bytes** (`read_bytes`) y devuelve el punto de control, o lanza un `CheckpointError` con el texto exacto de la lección en cada uno de sus tres casos:

- si no existe: `No se encuentra checkpoint.json; no hay nada desde donde hacer --resume` (con `{CHECKPOINT_PATH}` en lugar del nombre);
- si no se puede parsear: `No se pudo parsear checkpoint.json; puede que el archivo haya quedado interrumpido a mitad de escritura. Bórralo y empieza de nuevo sin --resume en vez de seguir usándolo: un punto de control escrito a medias no se puede adivinar de vuelta a su forma.`;
- si `version` no es 1: `checkpoint.json tiene version=2; este programa solo acepta version=1 y se niega a cargarlo.` (con la versión que trae, en JSON).

Nunca un valor por defecto «que parece razonable». Las defensas de una línea (`unreadable`, `require_checkpoint_shape`) ya están importadas: úsalas si quieres, la comprobación no las exige.

**Antes de comprobar:** ¿qué error lanza tu función con el `{"version":1,"turns":3,"pendingT` cortado de la lección, y por qué no el de «no se encuentra»?""",
    ),
    ("leccion", "code-22", None),
    ("code", "t-07", 'taller.comprobar("lectura")'),
    (
        "md",
        "t-08",
        """## 3. Empezar de cero: `fresh_scene`

Una corrida sin `--resume` no hereda nada de la anterior. Tu turno: `fresh_scene(task)` borra `checkpoint.json`, `effects.json` y sus `.tmp` (`remove_durably`, importada arriba, borra los que existan y fija el borrado en disco), deja listos los archivos de la tarea (`prepare_task_files()`: borra el reporte viejo y crea las notas si faltan) y devuelve la escena de una conversación nueva: `(0, 0, [{"role": "user", "content": task}])`.

**Antes de comprobar:** si te olvidaras de borrar `effects.json`, ¿qué haría mal el `--resume` de una corrida nueva que muere en su turno 3?""",
    ),
    ("leccion", "code-28a", None),
    ("code", "t-09", 'taller.comprobar("apertura")'),
    (
        "md",
        "t-10",
        """## 4. El punto A y el punto B

Dos guardados por turno, y dónde van es lo esencial de la lección. Tu turno, dentro de `run_agent`:

- **punto A**, apenas llega la respuesta y antes de ejecutar nada: guarda la escena con `pendingToolUse` = la llamada de este turno (`pending`), pasándola por `keep_assistant_turn` (que conserva el turno del asistente si trae más que su `tool_use`);
- **punto B**, cuando el `tool_result` ya está en `messages`: guarda la escena con `pendingToolUse` en `None`.

Las líneas de log y los `crash_point` de cada punto ya están: no los muevas.

**Antes de comprobar:** las filas del turno 3 y las del punto B necesitan que `run_tool_uses` exista (el punto 5). ¿Qué filas de la tabla crees que van a decir «todavía no», y cuál ya puede dar ✓?""",
    ),
    ("leccion", "code-28c", None),
    ("leccion", "code-28", None),
    ("code", "t-11", 'taller.comprobar("puntos")'),
    (
        "md",
        "t-12",
        """## 5. El registro: `run_tool_uses`

El registro (`load_effects`, `save_effect`) viene armado: ejecútalo. Tu turno: `run_tool_uses(content)`, el del Curso 7 más el registro. Para cada bloque de `tool_uses(content)`:

1. ejecuta la herramienta: `run_tool(block["name"], block["input"], key=block["id"] if KEYED_WRITES else None)`; si lanza una excepción, primero `stop_if_lasting(err)` (una falla del entorno que dura detiene la corrida con una línea, retomable) y, si sigue, el resultado es `tool_result(block["id"], f"Error de ejecución de la herramienta: {err}", True)` y se pasa al siguiente;
2. `crash_point("after-tool")`: el momento ② de la lección;
3. anota el resultado real: `save_effect(block["id"], {"name": …, "result": output, "at": now_ms()})`; si esa escritura falla (`OSError` o `LedgerError`), no mientas con `is_error`: avisa con `warn(...)` y la línea `[falló la escritura del registro] …` de la lección (sale al final, o dentro del error final: una falla, una línea); si no falla, `crash_point("after-effect-write")`;
4. agrega `tool_result(block["id"], output)`.

**Antes de comprobar:** si anotaras antes de ejecutar, ¿qué encontraría la comprobación en `effects.json` justo en el momento ②?""",
    ),
    ("leccion", "code-34", None),
    ("leccion", "code-38", None),
    ("code", "t-13", 'taller.comprobar("registro", "puntos")'),
    (
        "md",
        "t-14",
        """## 6. `reconcile`: las tres ramas

Al reanudar, `reconcile(cp)` decide qué hacer con la llamada colgante, `cp["pendingToolUse"]`. Tu turno: si no hay ninguna, devuelve `None` (no hay nada que conciliar); si hay, consulta el registro (`load_effects()`) por su `id` y toma una de las tres ramas, con las líneas de log de la lección (`where` = `[resume][reconcile] tool_use_id=… name=…`):

- **acierto en el registro**: `{where} acierto en el registro, reutilizando resultado, sin volver a ejecutar`, y el `tool_result` con el resultado anotado, sin ejecutar nada;
- **fallo en el registro, se puede repetir** (`rerunnable(name, KEYED_WRITES)`: solo lectura): `{where} fallo en el registro, {rerun_reason(name)}, volviendo a ejecutar`; ejecuta, anota y devuelve el resultado;
- **fallo en el registro con efectos secundarios**: `{where} fallo en el registro con efectos secundarios, no resoluble, agregando is_error`, y un `tool_result` con `is_error` y el texto de la lección: `Se desconoce el estado de ejecución previo a la reanudación de esta llamada a {name}: no hay anotación en el registro y, para evitar un efecto secundario duplicado, no se volvió a ejecutar. Por favor verifica por tu cuenta si se completó.`

**Antes de comprobar:** en ② del turno 3 el reporte ya está escrito, pero no anotado. ¿Qué rama toma tu `reconcile`, y cuántas copias del reporte quedan al final?""",
    ),
    ("leccion", "code-46", None),
    ("code", "t-15", 'taller.comprobar("reconcile")'),
    (
        "md",
        "t-16",
        """## 7. El punto de entrada

`resume_scene` y `main` vienen armados, como en la lección: ejecútalos. Con ellos tu agente corre en la terminal, así que ya se puede matar en cada uno de los doce puntos de caída y reanudar.""",
    ),
    ("leccion", "code-61", None),
    ("leccion", "code-63", None),
    ("code", "t-17", 'taller.comprobar("caidas", "terminal")'),
    (
        "md",
        "t-18",
        """## Tu agente contra la suite entera

La misma suite de conformidad que pasa el agente de referencia, sobre el tuyo. En una terminal, desde `notebooks/`, es `python -m harness.conformidad _trabajo/taller/agent.py` (sale con 0 solo si pasa todo).""",
    ),
    ("code", "t-19", "taller.conformidad()"),
    (
        "md",
        "t-20",
        """## Tu agente en el laboratorio de caídas

El laboratorio de la lección, con tu agente: elige dónde muere, ejecútalo, mira el disco y reanuda. Si alguna fila de arriba no dio ✓, prueba ese momento aquí.""",
    ),
    (
        "code",
        "t-21",
        """from harness.crash_lab import CrashLab

lab = CrashLab(workdir="_trabajo/taller/laboratorio", agent=taller.agent)
lab""",
    ),
]

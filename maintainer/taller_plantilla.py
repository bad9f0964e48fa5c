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
3. Ejecuta la comprobación que la sigue. Arma `_trabajo/taller/agent.py` con las celdas que ejecutaste (no hace falta guardar el notebook), lo corre como un proceso de verdad, lo mata donde la pieza importa y muestra una tabla: qué se esperaba, qué pasó, ✓ o ✗ y una pista que nombra el momento. Lo que todavía no escribiste aparece como **todavía no** (mientras la celda de la pieza siga en blanco, la comprobación lo dice sin correr nada).

Al final, tu agente contra la suite de conformidad entera, y en el laboratorio de caídas.""",
    ),
    (
        "code",
        "t-02",
        """from harness.notebook.workbook import Taller

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

`save_checkpoint(cp)` guarda con `write_json_atomic(CHECKPOINT_PATH, cp)`, y el registro de más abajo también la usa. Tu turno. Lo que tiene que valer, con las palabras de la lección: «escribe primero en un archivo temporal y después ponlo en su lugar de forma atómica»; el cambio de nombre es indivisible dentro del mismo sistema de archivos, así que quien lea `path` encuentra siempre el archivo viejo entero o el nuevo entero, nunca uno a medias, aunque el proceso muera a mitad del guardado. El JSON es el de la lección (`ensure_ascii=False, indent=2`), y lo que quede de un temporal anterior no estorba.

**Antes de comprobar:** la comprobación mata tu agente con SIGKILL a mitad de un guardado. Si escribieras directo sobre `checkpoint.json`, ¿qué leería el `--resume` siguiente?""",
    ),
    ("leccion", "code-20", None),
    ("code", "t-05", 'taller.comprobar("escritura")'),
    (
        "md",
        "t-06",
        """## 2. Leer sin adivinar: `load_checkpoint`

Tu turno. `load_checkpoint()` devuelve el punto de control guardado, o lanza un `CheckpointError` (la clase está arriba, en la misma celda) con el texto exacto de la lección en cada uno de sus tres casos: que no exista (`No se encuentra checkpoint.json; no hay nada desde donde hacer --resume`), que no se pueda parsear (`No se pudo parsear checkpoint.json; …`, entero como en la lección) y que su `version` no sea 1 (`checkpoint.json tiene version=2; …`). «Jamás hay que reiniciar el estado a vacío calladamente»: ningún valor por defecto de apariencia plausible, y un archivo cortado en cualquier byte —también a mitad de un carácter UTF-8— es «no se pudo parsear», nunca una traza.

**Antes de comprobar:** ¿qué error lanza tu función con el `{"version":1,"turns":3,"pendingT` cortado de la lección, y por qué no el de «no se encuentra»?""",
    ),
    ("leccion", "code-22", None),
    ("code", "t-07", 'taller.comprobar("lectura")'),
    (
        "md",
        "t-08",
        """## 3. Empezar de cero: `fresh_scene`

Tu turno. Una corrida sin `--resume` es «siempre una apertura limpia, nunca contaminada por una escena a medio terminar de una corrida previa»: no queda nada del punto de control ni del registro de antes, la carpeta queda lista para la tarea (`prepare_task_files()`), y la escena que devuelve es la de una conversación nueva, con la forma `(turns, tokens_used, messages)` que espera `run_agent`.

**Antes de comprobar:** si te olvidaras de borrar `effects.json`, ¿qué haría mal el `--resume` de una corrida nueva que muere en su turno 3?""",
    ),
    ("leccion", "code-28a", None),
    ("code", "t-09", 'taller.comprobar("apertura")'),
    (
        "md",
        "t-10",
        """## 4. El punto A y el punto B

Dos guardados por turno, y dónde van es lo esencial de la lección. Tu turno, dentro de `run_agent`:

- el **punto A** anota la llamada colgante de este turno en `pendingToolUse` «apenas llega la respuesta del modelo», antes de que la herramienta se ejecute: si el proceso muere mientras la herramienta corre, el disco tiene que decir qué llamada quedó colgando;
- el **punto B** guarda la escena con el turno cerrado: el `tool_result` ya está en `messages` y `pendingToolUse` es `null`.

Las líneas de log y los `crash_point` de cada punto ya están: no los muevas.

**Antes de comprobar:** las filas del turno 3 y las del punto B necesitan que `run_tool_uses` exista (el punto 5). ¿Qué filas de la tabla crees que van a decir «todavía no», y cuál ya puede dar ✓?""",
    ),
    ("leccion", "code-28", None),
    ("code", "t-11", 'taller.comprobar("puntos")'),
    (
        "md",
        "t-12",
        """## 5. El registro: `run_tool_uses`

El registro (`load_effects`, `save_effect`) viene armado: ejecútalo. Tu turno: `run_tool_uses(content)`, el del Curso 7 más el registro. Lo que tiene que valer, con la lección: «ejecutar primero, anotar después». Una herramienta que tuvo éxito queda anotada en `effects.json` por su `tool_use_id`, con su resultado real, en cuanto termina; una que falla le llega al modelo como `Error de ejecución de la herramienta: …` con `is_error`, y no se anota (no ocurrió). Si lo que falla es la escritura del registro, el efecto ya ocurrió: el modelo recibe el resultado real, sin `is_error`, y una persona lee en el acto, por stderr, la línea `[falló la escritura del registro] …` de la lección. Los dos momentos de caída del registro son `after-tool` (ejecutada, sin anotar) y `after-effect-write` (anotada).

**Antes de comprobar:** si anotaras antes de ejecutar, ¿qué encontraría la comprobación en `effects.json` justo en el momento ②?""",
    ),
    ("leccion", "code-34", None),
    ("leccion", "code-38", None),
    ("code", "t-13", 'taller.comprobar("registro", "falla", "puntos")'),
    (
        "md",
        "t-14",
        """## 6. `reconcile`: las tres ramas

Tu turno. Al reanudar, `reconcile(cp)` decide qué hacer con la llamada colgante del punto de control: si no hay, no hay nada que conciliar (`None`). Si hay, el registro decide, con las tres líneas de log de la lección:

- **acierto en el registro**: la llamada ya se ejecutó y quedó anotada; se reutiliza su resultado, sin volver a ejecutar nada;
- **fallo en el registro, herramienta de solo lectura** (las de `READ_ONLY`): se vuelve a ejecutar, y esa corrida también queda anotada;
- **fallo en el registro con efectos secundarios**: no se adivina; el modelo recibe un `tool_result` con `is_error` y el texto de la lección, «Se desconoce el estado de ejecución previo a la reanudación…».

Cada rama devuelve el `tool_result` de la llamada colgante, emparejado por su `tool_use_id`.

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
        "t-22",
        """## Tu agente contra producción

El agente de la lección es el de la lección: le faltan las defensas que un agente de verdad necesita (un corte de luz, un disco que falla, dos agentes en la misma carpeta, un modelo real…). El nivel de producción de la suite las prueba; con tu agente, cada fila que falla nombra la sección de [«De la lección a producción»](de_la_leccion_a_produccion.ipynb) que agrega esa defensa. Es un adelanto de lo que viene, no una nota, y corre cuando tu agente pasa el nivel de la lección entero (arriba): antes, cada fila fallaría por una pieza de la lección, no por una defensa.

**Antes de ejecutar:** ¿cuál de estas fallas crees que le pasaría primero a tu agente en tu propia máquina?""",
    ),
    (
        "code",
        "t-23",
        "taller.produccion()",
    ),
    (
        "md",
        "t-24",
        """## Desafío (opcional): varias llamadas por turno

Nadie lo califica. La lección deja fuera, a propósito, los turnos con varias llamadas («Proporción»). Aquí el modelo pide dos herramientas a la vez (y la tarea escribe también un resumen), y tu agente tiene que sostener lo mismo que con una:

- el punto A anota **todas** las llamadas del turno (`pendingToolUse` pasa a ser una lista), y su línea las nombra separadas por comas: `[turn 1][save A] pending=read_notes,count_words`;
- al reanudar, **cada** llamada colgante pasa por las tres ramas de `reconcile`, y el turno se rellena con un `tool_result` por llamada, en el orden de las llamadas, antes del punto B;
- en cada punto de caída, `--resume` termina la tarea con cada archivo escrito una sola vez.

Escribe en la celda `#| desafio` las funciones que cambian; las demás siguen siendo las tuyas (una definición nueva reemplaza a la anterior, como en «De la lección a producción»). `taller.desafio()` arma tu agente con ellas en `_trabajo/taller/agent_varias.py` y lo mata en cada punto de caída de su propio guion.

**Antes de ejecutar:** en `after-tool:4`, con dos `write_report` en el mismo turno y la segunda sin anotar, ¿qué rama toma cada una al reanudar?""",
    ),
    (
        "code",
        "t-25",
        """#| desafio
# El modelo del desafío pide dos herramientas a la vez; la tarea escribe un reporte y un resumen.
from harness.beyond.parallel_model import ParallelScriptedModel as ScriptedModel

TASK = "Convierte sales-notes.txt en un reporte breve y un resumen; escríbelos en report.txt y resumen.txt."

# TU CÓDIGO AQUÍ: las funciones que cambian cuando el punto A anota varias llamadas""",
    ),
    ("code", "t-26", "taller.desafio()"),
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

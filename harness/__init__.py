"""Paquete compartido del curso «Gestión de estado y persistencia», Lección 6.

Cada módulo hace una sola cosa y se importa por su nombre (``from harness.tools import ...``):
este archivo no importa nada a propósito, para que el agente guionado arranque rápido.

- ``contract``: el contrato del agente: nombres de sus archivos, formas de lo que guarda, gramática de
  su log (escribir y leer cada línea), banderas y códigos de salida. No importa nada del paquete.
- ``scripted_model``: el modelo guionado, con la forma de respuesta del SDK de anthropic.
- ``clients`` / ``live_model``: elegir el cliente; el SDK real envuelto (--live), errores en español.
- ``tools``: las herramientas de la tarea (read_notes, count_words, write_report, check_report);
  ``tool_input``, sus argumentos y rutas; ``idempotent``, write_report con clave de idempotencia.
- ``escenario``: la tabla del escenario: tipos de caída, las 12 etiquetas, las herramientas de cada
  turno y lo que se espera en cada etiqueta (la suite, el modelo y las pruebas la importan).
- ``crash``: los puntos de caída simulada (``crash_point``, ``SimulatedCrash``, ``CRASH_AFTER``) y
  ``crash_at``, la misma caída dentro de un kernel.
- ``early_signals``: la primera línea de un agente: una señal durante sus imports espera a la sesión.
- ``protocol``: las reglas de la API de mensajes (emparejar tool_use con tool_result).
- ``base_loop``: el bucle del Curso 7, sin puntos de control, del que parte la lección.
- ``disk_state``: una vista legible de lo que hay en disco (punto de control, registro, reporte).
- ``runner``: lanzar un agente en un proceso aparte (``run_agent_process``, la rama que tomó).
- ``export``: armar un agente desde las celdas ``#| export`` de uno o más notebooks (al estilo de nbdev;
  una definición posterior reemplaza a la anterior en su lugar).
- ``workspace`` / ``display`` / ``kill_scripts`` (y ``lesson``, que los junta en una línea): las
  carpetas de una demostración y el agente mostrado como en la terminal; tablas, archivos y código con
  versión en texto; procesos que mueren con SIGKILL en un momento exacto.
- ``injected``: un agente de verdad con un modelo que responde lo que el guion no, o bajo strace
  (las fallas de «De la lección a producción»).
- ``conformidad`` (subpaquete): la suite de conformidad, en dos niveles (lección y producción),
  contenida y acotada contra cualquier agente; ``taller``, las comprobaciones del taller sobre ella.
- ``durable`` / ``shapes`` / ``lock`` / ``workdir`` / ``errors``: escrituras que sobreviven a un
  corte de luz, la forma esperada de los archivos, un agente por directorio, errores en español.
- ``jitter``: demoras al azar, para que un SIGKILL real caiga en cualquier ventana del turno.
- ``crash_lab`` (subpaquete: ``widget``, ``view``, ``variants``…): el laboratorio de caídas y lo que
  dibuja; conoce sus variantes por un registro. El agente nunca lo importa (ipywidgets queda fuera).
- ``beyond`` (subpaquete): «Más allá» de la lección; registra en el laboratorio las variantes del motor.

Lo que no está aquí, a propósito: las respuestas y las pruebas ocultas de los ejercicios (solo para
instructores) y las herramientas de mantenimiento; ninguna de las dos se instala con este paquete.
"""

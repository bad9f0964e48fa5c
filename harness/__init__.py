"""Paquete compartido del curso «Gestión de estado y persistencia», Lección 6.

Cada módulo hace una sola cosa y se importa por su nombre (``from harness.tools import ...``):
este archivo no importa nada a propósito, para que el agente guionado arranque rápido.

- ``contract``: el contrato del agente: nombres de sus archivos, formas de lo que guarda, gramática de
  su log (escribir y leer cada línea), banderas y códigos de salida. No importa nada del paquete.
- ``scripted_model``: el modelo guionado, con la forma de respuesta del SDK de anthropic.
- ``clients`` / ``live_model``: elegir el cliente; el SDK real envuelto (--live), errores en español.
- ``tools``: las herramientas de la tarea (read_notes, count_words, write_report, check_report);
  ``tool_input``, sus argumentos y rutas; ``idempotent``, write_report con clave de idempotencia.
- ``crash``: los puntos de caída simulada (``crash_point``, ``SimulatedCrash``, ``CRASH_AFTER``).
- ``protocol``: las reglas de la API de mensajes (emparejar tool_use con tool_result).
- ``base_loop``: el bucle del Curso 7, sin puntos de control, del que parte la lección.
- ``disk_state``: una vista legible de lo que hay en disco (punto de control, registro, reporte).
- ``runner``: lanzar un agente en un proceso aparte (``run_agent_process``, la rama que tomó).
- ``export``: armar ``agent.py`` desde las celdas ``#| export`` del notebook (al estilo de nbdev).
- ``durable`` / ``shapes`` / ``lock`` / ``workdir`` / ``errors``: escrituras que sobreviven a un
  corte de luz, la forma esperada de los archivos, un agente por directorio, errores en español.
- ``jitter``: demoras al azar, para que un SIGKILL real caiga en cualquier ventana del turno.
- ``crash_lab`` (subpaquete: ``widget``, ``view``, ``variants``…): el laboratorio de caídas y lo que
  dibuja; conoce sus variantes por un registro. El agente nunca lo importa (ipywidgets queda fuera).
- ``beyond`` (subpaquete): «Más allá» de la lección; registra en el laboratorio las variantes del motor.

Lo que no está aquí, a propósito: las respuestas y las pruebas ocultas de los ejercicios (solo para
instructores) y las herramientas de mantenimiento; ninguna de las dos se instala con este paquete.
"""

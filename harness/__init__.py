"""Paquete compartido del curso «Gestión de estado y persistencia», Lección 6.

Cada módulo hace una sola cosa y se importa por su nombre (``from harness.tools import ...``):
este archivo no importa nada a propósito, para que el agente guionado arranque rápido.

- ``scripted_model``: el modelo guionado, con la forma de respuesta del SDK de anthropic.
- ``clients`` / ``live_model``: elegir el cliente; el SDK real envuelto (--live), errores en español.
- ``tools``: las herramientas de la tarea (read_notes, count_words, write_report, check_report).
- ``crash``: los puntos de caída simulada (``crash_point``, ``SimulatedCrash``, ``CRASH_AFTER``).
- ``protocol``: las reglas de la API de mensajes (emparejar tool_use con tool_result).
- ``base_loop``: el bucle del Curso 7, sin puntos de control, del que parte la lección.
- ``disk_state``: una vista legible de lo que hay en disco (punto de control, registro, reporte).
- ``runner``: lanzar un agente en un proceso aparte (``run_agent_process``, la rama que tomó).
- ``export``: armar ``agent.py`` desde las celdas ``#| export`` del notebook (al estilo de nbdev).
- ``durable`` / ``shapes`` / ``lock`` / ``workdir`` / ``errors``: escrituras que sobreviven a un
  corte de luz, la forma esperada de los archivos, un agente por directorio, errores en español.
- ``jitter`` / ``torture``: demoras al azar y la tortura con SIGKILL reales (pruebas y benchmarks).
- ``crash_lab`` / ``crash_lab_view``: el laboratorio de caídas (widget y API) y lo que muestra;
  el agente nunca los importa, así que ipywidgets queda fuera de su camino.
- ``drill`` / ``ledger_order``: los ejercicios de Nivel 1 y Nivel 2, medidos con caídas reales; los
  usan el marcado local de cada estudiante y las pruebas ocultas de nbgrader.
"""

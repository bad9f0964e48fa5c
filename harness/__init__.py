"""Paquete compartido del curso «Gestión de estado y persistencia», Lección 6.

Cada módulo hace una sola cosa y se importa por su nombre (``from harness.tools import ...``):
este archivo no importa nada a propósito, para que el agente guionado arranque rápido.

- ``scripted_model``: el modelo guionado, con la forma de respuesta del SDK de anthropic.
- ``tools``: las herramientas de la tarea (read_notes, count_words, write_report, check_report).
- ``crash``: los puntos de caída simulada (``crash_point``, ``SimulatedCrash``, ``CRASH_AFTER``).
- ``protocol``: las reglas de la API de mensajes (emparejar tool_use con tool_result).
- ``base_loop``: el bucle del Curso 7, sin puntos de control, del que parte la lección.
- ``disk_state``: una vista legible de lo que hay en disco (punto de control, registro, reporte).
"""

"""Lo que usa el agente de la lección: el arnés de la Lección 6 del curso «Gestión de estado y persistencia».

Las carpetas dicen quién usa qué; cada módulo hace una sola cosa y se importa por su nombre. Este
archivo no importa nada a propósito, para que el agente guionado arranque rápido.

Arriba, aquello sobre lo que se para el agente de la lección:

- ``contract``: el contrato del agente: nombres de archivos y variables de entorno, formas de lo que
  guarda, gramática de su log, banderas y códigos de salida. No importa nada del paquete.
- ``scenario``: la tabla del escenario: tipos de caída, las 12 etiquetas, la tarea y las herramientas
  de cada turno, lo que se espera en cada etiqueta.
- ``scripted_model``: el modelo guionado, con la forma de respuesta del SDK de anthropic.
- ``tools`` / ``tool_input``: las herramientas de la tarea; sus argumentos y rutas.
- ``crash``: los puntos de caída simulada (``crash_point``, ``SimulatedCrash``) y ``crash_at``.
- ``base_loop`` / ``protocol``: el bucle del Curso 7 y las reglas de la API de mensajes.
- ``errors`` / ``jitter``: errores en español; demoras al azar para que un SIGKILL caiga en cualquier ventana.
- ``text``: el plural de una cuenta y una línea acotada, escritos una vez para todo el paquete.

Las carpetas:

- ``defenses/``: para el agente de referencia, las defensas de «De la lección a producción».
- ``runs/``: para quien lanza agentes: el lanzador, el servidor de corridas, la contención, las
  muertes con SIGKILL, strace y el modelo del corte de luz.
- ``notebook/``: para los notebooks: lo que muestran, las comprobaciones del taller y de los
  ejercicios, el armado de los agentes desde sus celdas.
- ``conformidad/``: la suite de conformidad (``python -m harness.conformidad``).
- ``crash_lab/``: el laboratorio de caídas (el agente nunca lo importa: ipywidgets queda fuera).
- ``beyond/``: «Más allá» de la lección.

Lo que no está aquí, a propósito: las respuestas y las pruebas ocultas de los ejercicios (solo para
instructores) y las herramientas de mantenimiento; ninguna de las dos se instala con este paquete.
"""

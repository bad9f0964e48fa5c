"""«Más allá» de la Lección 6: el mismo agente sobre un motor de ejecución durable, varias llamadas por
turno y lo que cuesta guardar cuando la tarea crece. Lo usa ``notebooks/mas_alla_motor_durable.ipynb``.

Cada módulo hace una sola cosa (la escritura con clave de idempotencia está en ``harness.defenses.idempotent``):

- ``command_line``: el ``main`` de los dos agentes de aquí, con el contrato de línea de comandos de la lección.
- ``engine_view``: lo que el motor tiene anotado en su SQLite, y los nombres que el laboratorio lee del agente.
- ``engine_timeline`` / ``lab_variants``: la historia de una corrida del motor, y las variantes «dbos» y
  «dbos-idempotente» que se registran en el laboratorio de caídas al importar ``lab_variants``.
- ``process_death``: morir de verdad (``os._exit(137)``) en un punto de caída, también dentro de un paso;
  o detenerse con una línea y salida 1 sin que el motor anote el flujo como terminado.
- ``dbos_agent``: la tarea como flujo de DBOS (cada llamada al modelo y cada herramienta, un paso);
  ``python -m harness.beyond.dbos_agent [--resume]``, con el contrato de línea de comandos de la lección.
- ``preload``: un servidor que ya importó DBOS y hace nacer (fork) cada proceso de los programas de aquí
  (el agente de DBOS, los trabajadores de la cola, la medición de costos, el agente de lotes): el
  notebook no paga el import en cada proceso.
- ``parallel_model``: un modelo guionado que pide varias herramientas en un mismo turno.
- ``batch_agent``: el agente de la lección con ``pendingToolUse`` como lista, registro y ``reconcile``
  por llamada; ``python -m harness.beyond.batch_agent [--resume]``.
- ``cost_formats``: tiempo y bytes escritos por turno en tres formatos (JSON entero, JSON lines, DBOS).
- ``queue_worker`` / ``two_workers``: trabajadores de DBOS que toman tareas de una cola, y la corrida de
  dos trabajadores donde uno muere con SIGKILL y el otro recupera sus flujos.
- ``postgres``: el PostgreSQL desechable de esa corrida (solo en 127.0.0.1, en una carpeta temporal),
  nacido de una plantilla preparada en segundo plano si se pidió (``prepare_template``).
"""

"""La suite de conformidad del agente de la lección, para cualquier ``agent.py`` (como la que LangGraph
entrega para sus checkpointers): lo que se prueba es una ruta, y el agente corre siempre en procesos
nuevos, nunca importado en el proceso que juzga.

    python -m harness.conformidad RUTA/agent.py           # todas las comprobaciones
    python -m harness.conformidad RUTA/agent.py --solo reconcile

- ``rows``: una fila de resultado (escenario, lo esperado, lo que pasó, ✓ / ✗ / todavía no / no aplica).
- ``processes``: correr el agente, o una función suya en un proceso aparte (``driver``).
- ``checks``: las comprobaciones, agrupadas por pieza de la lección (escritura, lectura, apertura,
  puntos A y B, registro, reconcile, caídas, línea de comandos).
- ``report``: la tabla en español y el resumen.
El taller (``harness.notebook.workbook``) corre las piezas de a una; las pruebas del curso, todas.
"""

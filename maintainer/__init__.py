"""Herramientas de quien mantiene el curso: no se instalan con ``harness`` ni las importa un notebook.

- ``agent_source``: ``solutions/agent.py`` generado desde la lección, y de vuelta (como nbdev_update).
- ``notebook_run``: ejecutar un notebook como «Restart & Run All» y guardar salidas deterministas.
- ``torture``: muertes reales con SIGKILL en instantes al azar (pruebas y benchmarks).
"""

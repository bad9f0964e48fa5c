"""DBOS sobre un PostgreSQL real: dos trabajadores, 20 tareas, uno muere con SIGKILL a mitad de una.

Corre de verdad donde están los binarios de PostgreSQL (CI los instala); sin ellos se salta con una
línea clara. El servidor es desechable (``maintainer.postgres``): loopback, carpeta temporal.
"""

import pytest

from harness.beyond.two_workers import run_two_workers
from maintainer import postgres

pytestmark = [pytest.mark.needs_postgres, pytest.mark.slow]


@pytest.fixture(scope="module")
def postgres_url():
    url, folder = postgres.start()
    yield url
    postgres.stop(folder)


def test_two_workers_every_report_exactly_once(postgres_url, tmp_path):
    figures = run_two_workers(postgres_url.replace("dbos_mas_alla", "dbos_idem"), str(tmp_path))
    print(figures)  # las cifras de la nota de cierre: pytest -s las muestra
    assert figures["muertes"] == 1
    assert figures["recuperados"] == 1  # el flujo que murió con trabajador-a, y solo ese
    assert figures["terminadas"] == figures["tareas"] == 20
    assert figures["copias"] == {n: 1 for n in range(1, 21)}


def test_without_the_key_the_recovered_task_is_written_twice(postgres_url, tmp_path):
    """La misma muerte sin clave de idempotencia: el motor vuelve a ejecutar el paso (al menos una
    vez) y la tarea que murió en la ventana ② queda con dos copias. Prueba que la muerte cayó ahí."""
    figures = run_two_workers(
        postgres_url.replace("dbos_mas_alla", "dbos_doble"), str(tmp_path), idempotent=False
    )
    killed = int(figures["matado_en"].removeprefix("tarea-"))
    assert figures["copias"][killed] == 2
    assert all(c == 1 for n, c in figures["copias"].items() if n != killed)

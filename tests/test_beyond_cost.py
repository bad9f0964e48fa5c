"""Los bytes por turno de los tres formatos: O(n) para el JSON de la lección, O(1) para los otros."""

import pytest

from harness.beyond.cost_formats import measure

pytest.importorskip("dbos")


def test_bytes_per_turn_shape(tmp_path):
    json_bytes = [b for _, b in measure("json", 40, tmp_path / "json")]
    jsonl_bytes = [b for _, b in measure("jsonl", 40, tmp_path / "jsonl")]
    dbos_bytes = [b for _, b in measure("dbos", 40, tmp_path / "dbos")]
    steps = {b - a for a, b in zip(json_bytes, json_bytes[1:], strict=False)}
    assert min(steps) > 3000  # cada turno reescribe todo lo anterior y un turno más
    assert max(jsonl_bytes) - min(jsonl_bytes) < 10  # solo cambia el ancho de los números
    assert max(dbos_bytes) < 2 * min(dbos_bytes)  # el motor anota dos salidas por turno, no la historia
    assert json_bytes[-1] > dbos_bytes[-1] > jsonl_bytes[-1]

"""write_report_once: la misma clave deja una copia, aunque el proceso muera en cualquier momento."""

import json

import pytest

from harness.defenses.idempotent import receipts_path, write_report_once
from harness.defenses.workdir import inside
from harness.tools import REPORT_TITLE, ToolError, report_copies

REPORT = {"path": "report.txt", "content": f"{REPORT_TITLE}\n\nuno\n"}


def test_same_key_once_new_key_again(tmp_path):
    with inside(tmp_path):
        first = write_report_once(REPORT, "toolu_03")
        assert write_report_once(REPORT, "toolu_03") == first
        assert report_copies() == 1
        write_report_once(REPORT, "toolu_05")
        assert report_copies() == 2


@pytest.mark.parametrize("written", [0, 5, len(REPORT["content"])])
def test_death_after_the_receipt_at_any_write_progress(tmp_path, written):
    """El recibo se anotó y la escritura murió tras ``written`` bytes: repetir deja una copia entera."""
    with inside(tmp_path):
        (tmp_path / "report.txt").write_bytes(b"previo\n" + REPORT["content"].encode()[:written])
        receipts = {"toolu_03": {"offset": len(b"previo\n"), "bytes": len(REPORT["content"].encode())}}
        (tmp_path / receipts_path("report.txt")).write_text(json.dumps(receipts), encoding="utf-8")
        write_report_once(REPORT, "toolu_03")
        assert (tmp_path / "report.txt").read_text(encoding="utf-8") == "previo\n" + REPORT["content"]


def test_damaged_receipts_are_never_empty(tmp_path):
    with inside(tmp_path):
        (tmp_path / receipts_path("report.txt")).write_text("{", encoding="utf-8")
        with pytest.raises(ToolError, match="dañado"):
            write_report_once(REPORT, "toolu_03")

"""Qué hay en disco después de una corrida: punto de control, registro de efectos y reporte.

``read_disk_state(workdir)`` lo resume sin modificar nada; en un notebook se muestra como tabla.
Nunca muestra el campo ``at`` del registro (una marca de tiempo cambia en cada corrida).
"""

import html
import json
import os
from typing import NamedTuple

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE
from harness.defenses.durable import read_present
from harness.text import plural
from harness.tools import REPORT_PATH, REPORT_TITLE, report_copies


class DiskState(NamedTuple):
    """``checkpoint`` y ``ledger`` son None si el archivo no existe, o un texto si no se puede leer."""

    checkpoint: object
    ledger: object
    report_copies: int

    @property
    def entries(self):
        """Las anotaciones del registro; {} si falta o no se puede leer, para consultarlo sin más."""
        return self.ledger if isinstance(self.ledger, dict) else {}

    @property
    def pending(self):
        cp = self.checkpoint
        return cp.get("pendingToolUse") if isinstance(cp, dict) else None

    def rows(self):
        """(archivo, qué dice) para mostrar: una fila por cosa que importa."""
        return [
            (CHECKPOINT_FILE, describe_checkpoint(self.checkpoint)),
            (EFFECTS_FILE, describe_ledger(self.ledger)),
            (REPORT_PATH, describe_report(self.report_copies)),
        ]

    def __str__(self):
        return "\n".join(f"{name:<16} {text}" for name, text in self.rows())

    def _repr_html_(self):
        body = "".join(
            f"<tr><td><code>{html.escape(n)}</code></td><td style='text-align:left'>{html.escape(t)}</td></tr>"
            for n, t in self.rows()
        )
        return f"<table><tr><th>archivo</th><th style='text-align:left'>estado</th></tr>{body}</table>"


def _load(path):
    try:
        data = read_present(path)
    except OSError:
        return "ilegible (no es un archivo común)"
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return "ilegible (JSON inválido o cortado)"


def read_disk_state(workdir="."):
    join = lambda name: os.path.join(workdir, name)  # noqa: E731
    checkpoint = _load(join(CHECKPOINT_FILE))
    title = report_title(checkpoint)
    return DiskState(checkpoint, _load(join(EFFECTS_FILE)), report_copies(join(REPORT_PATH), title))


def report_title(cp):
    """La primera línea del reporte que el agente pidió escribir (el ``content`` de su último
    ``write_report`` en el punto de control, colgante o no), o ``REPORT_TITLE`` si no pidió ninguno: el
    modelo de cada agente titula a su modo («# Reporte de ventas», «Reporte de ventas»), y contar
    otro título diría 0 copias de un reporte que está."""
    asked = [
        call["input"]["content"].strip()
        for call in _tool_uses(cp)
        if call.get("name") == "write_report"
        and isinstance(call.get("input"), dict)
        and isinstance(call["input"].get("content"), str)
    ]
    return asked[-1].splitlines()[0] if asked and asked[-1] else REPORT_TITLE


def _tool_uses(cp):
    """Los ``tool_use`` del punto de control, en orden: los de ``messages`` y el colgante."""
    if not isinstance(cp, dict):
        return []
    messages = cp.get("messages") if isinstance(cp.get("messages"), list) else []
    contents = [m.get("content") for m in messages if isinstance(m, dict)]
    blocks = [b for c in contents if isinstance(c, list) for b in c if isinstance(b, dict)]
    pending = cp.get("pendingToolUse")
    return [b for b in blocks if b.get("type") == "tool_use"] + (
        [pending] if isinstance(pending, dict) else []
    )


def describe_checkpoint(cp):
    if cp is None:
        return "no existe"
    if not isinstance(cp, dict):
        return cp if isinstance(cp, str) else "no es un objeto JSON"
    pending = cp.get("pendingToolUse")
    hanging = f"{pending.get('name')} ({pending.get('id')})" if isinstance(pending, dict) else "null"
    last = last_tool_results(cp.get("messages") or [])
    results = ", ".join(last) if last else "ninguno"
    return (
        f"turns={cp.get('turns')} · pendingToolUse={hanging} · {messages_count(cp.get('messages') or [])} · "
        f"último tool_result: {results}"
    )


def messages_count(messages):
    return plural(len(messages), "mensaje", "mensajes")


def last_tool_results(messages):
    """Los ``tool_use_id`` respondidos en el último mensaje, si es un mensaje de resultados."""
    content = messages[-1].get("content") if messages else None
    if not isinstance(content, list):
        return []
    return [b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def describe_ledger(ledger):
    if ledger is None:
        return "no existe (registro vacío)"
    if not isinstance(ledger, dict):
        return ledger if isinstance(ledger, str) else "no es un objeto JSON"
    if not ledger:
        return "sin anotaciones"
    entries = (f"{tid} {entry.get('name')}" for tid, entry in ledger.items() if isinstance(entry, dict))
    return f"{plural(len(ledger), 'anotación', 'anotaciones')}: " + ", ".join(entries)


def describe_report(copies):
    if copies == 0:
        return "no existe o está vacío"
    return "1 copia del reporte" if copies == 1 else f"{copies} copias del reporte: ¡se escribió dos veces!"

"""La suite en texto: una sección por pieza, una línea por fila, y el resumen."""

from collections import Counter

from .rows import FAILED, NOT_APPLICABLE, NOT_YET, OK

ORDER = (OK, FAILED, NOT_YET, NOT_APPLICABLE)


def piece_text(title, rows):
    """La sección de una pieza: su título y una línea por fila (la pista, debajo de la que falla)."""
    lines = [f"── {title} ──"]
    for row in rows:
        lines.append(f"{row.status:>10}  {row.scenario} · se espera: {row.expected} · pasó: {row.got}")
        if row.hint:
            lines.append(f"{'':>10}  pista: {row.hint}")
    return "\n".join(lines)


def summary(rows):
    """«N comprobaciones: a ✓, b ✗, …», contando solo lo que hubo."""
    counts = Counter(row.status for row in rows)
    parts = ", ".join(f"{counts[s]} {s}" for s in ORDER if counts[s])
    return f"{len(rows)} {'comprobación' if len(rows) == 1 else 'comprobaciones'}: {parts}"


def all_passed(rows):
    return all(row.passed for row in rows)

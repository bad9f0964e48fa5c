"""La suite en texto: una sección por pieza (qué comprueba, o por qué no aplica), una línea por fila,
y debajo de la que falla, la pista y las últimas líneas del stderr del agente; al final, el resumen."""

from collections import Counter

from harness.text import plural

from .checks import CAPABILITIES
from .rows import FAILED, NOT_APPLICABLE, NOT_YET, OK, UNCHECKED

ORDER = (OK, FAILED, NOT_YET, UNCHECKED, NOT_APPLICABLE)
MACHINE_NOTE = "sin comprobar en esta máquina"


BY_TITLE = {capability.title: capability for capability in CAPABILITIES.values()}


def piece_text(title, rows):
    """La sección de una pieza: su título, lo que comprueba, y una línea por fila. Una sección que no es
    de una pieza (lo que el agente hizo fuera de su carpeta) va sin nivel ni lista."""
    capability = BY_TITLE.get(title)
    lines = [f"── {title} (nivel {capability.tier}) ──" if capability else f"── {title} ──"]
    if all(row.status == NOT_APPLICABLE for row in rows):
        lines += [f"{'':>10}  no aplica: {row.got}" for row in rows]
        return "\n".join(lines)
    lines += [f"{'':>10}  comprueba: {check}" for check in (capability.checks if capability else ())]
    for row in rows:
        section = f"«{row.section}» · " if row.section else ""
        lines.append(
            f"{row.status:>10}  {section}{row.scenario} · se espera: {row.expected} · pasó: {row.got}"
        )
        if row.hint:
            lines.append(f"{'':>10}  pista: {row.hint}")
        for line in row.stderr:
            lines.append(f"{'':>10}  stderr del agente │ {line}")
    return "\n".join(lines)


def summary(rows):
    """«N comprobaciones: a ✓, b ✗, …», contando solo lo que hubo; si alguna fila no pudo correr aquí,
    cuántas se comprobaron de las que aplican: un informe incompleto no se lee como un pase."""
    counts = Counter(row.status for row in rows)
    parts = ", ".join(f"{counts[s]} {s}" for s in ORDER if counts[s])
    line = f"{plural(len(rows), 'comprobación', 'comprobaciones')}: {parts}"
    if counts[UNCHECKED]:
        applying = len(rows) - counts[NOT_APPLICABLE]
        checked = counts[OK] + counts[FAILED]
        line += f" · se comprobaron {checked} de {applying} filas ({counts[UNCHECKED]} {MACHINE_NOTE}): no es un pase"
    return line


def all_passed(rows):
    """Todo ✓ o «no aplica», y al menos una fila ✓: una suite que no probó nada no pasa, ni una con
    filas que no pudieron correr aquí."""
    return all(row.passed for row in rows) and any(row.status == OK for row in rows)


def report_text(results):
    """El informe entero de ``run_suite``: las secciones y el resumen."""
    rows = [row for _, piece_rows in results for row in piece_rows]
    return "\n".join([piece_text(title, rows) for title, rows in results] + [summary(rows)])

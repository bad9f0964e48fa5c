"""Una fila de la suite: qué se probó, qué se esperaba, qué pasó y, si falló, una pista que nombra el
momento sin dar el código."""

from typing import NamedTuple

OK, FAILED, NOT_YET, NOT_APPLICABLE = "✓", "✗", "todavía no", "no aplica"


class Row(NamedTuple):
    scenario: str
    expected: str
    got: str
    status: str
    hint: str = ""

    @property
    def passed(self):
        return self.status in (OK, NOT_APPLICABLE)


def judged(scenario, expected, got, ok, hint):
    """Una fila con ✓ o ✗ (la pista solo si falló)."""
    return Row(scenario, expected, got, OK if ok else FAILED, "" if ok else hint)


def not_yet(scenario, expected, missing):
    """Una fila que todavía no se puede probar: falta escribir ``missing``."""
    return Row(
        scenario, expected, f"falta escribir {missing}", NOT_YET, f"escribe {missing} y vuelve a comprobar"
    )


def not_applicable(scenario, why):
    return Row(scenario, "—", why, NOT_APPLICABLE)

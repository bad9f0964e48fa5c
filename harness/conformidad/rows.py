"""Una fila de la suite: qué se probó, qué se esperaba, qué pasó y, si falló, una pista elegida por lo
que pasó (no por la fila) y las últimas líneas de stderr del agente."""

from typing import NamedTuple

from harness.text import shorten

OK, FAILED, NOT_YET, NOT_APPLICABLE = "✓", "✗", "todavía no", "no aplica"
# Una fila que aplica pero no pudo correr aquí (falta strace, no es Linux): nunca es un pase.
UNCHECKED, ON_THIS_MACHINE = "sin comprobar", "no se pudo comprobar en esta máquina"
STDERR_LINES, LINE_WIDTH = 6, 200  # lo que se muestra del stderr del agente bajo una fila que falla


def stderr_tail(stderr):
    """Las últimas líneas no vacías del stderr de una corrida, cada una acotada."""
    lines = [line for line in (stderr or "").splitlines() if line.strip()]
    return tuple(shorten(line, LINE_WIDTH) for line in lines[-STDERR_LINES:])


class Row(NamedTuple):
    scenario: str
    expected: str
    got: str
    status: str
    hint: str = ""
    stderr: tuple = ()  # las últimas líneas del stderr del agente, solo si la fila falló
    section: str = ""  # la sección del notebook de producción que explica esta defensa

    @property
    def passed(self):
        """✓, o «no aplica» con su porqué (la suite exige además filas ✓: ver ``report.all_passed``).
        Una fila «sin comprobar» no pasa: que no haya podido correr no dice nada del agente."""
        return self.status in (OK, NOT_APPLICABLE)


def judged(scenario, expected, got, ok, hint, stderr="", section=""):
    """Una fila con ✓ o ✗ (la pista y el stderr del agente, solo si falló)."""
    if ok:
        return Row(scenario, expected, shorten(got), OK, section=section)
    return Row(scenario, expected, shorten(got), FAILED, hint, stderr_tail(stderr), section)


def not_yet(scenario, expected, missing):
    """Una fila que todavía no se puede probar: falta escribir ``missing``."""
    return Row(
        scenario, expected, f"falta escribir {missing}", NOT_YET, f"escribe {missing} y vuelve a comprobar"
    )


def not_applicable(scenario, why, section=""):
    """Una fila que no se prueba con este agente, y por qué."""
    return Row(scenario, "—", why, NOT_APPLICABLE, section=section)


def unchecked(scenario, expected, why, section=""):
    """Una fila que aplica pero no pudo correr en esta máquina (``why``: falta strace, no es Linux): la
    devuelve la comprobación misma, con el porqué; nunca es un pase."""
    return Row(scenario, expected, f"{ON_THIS_MACHINE}: {why}", UNCHECKED, section=section)

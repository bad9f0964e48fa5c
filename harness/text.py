"""Tres maneras de escribir para quien lee, una sola vez: el plural de una cuenta, un número y una
línea acotada.

Las usan las herramientas, el laboratorio, la suite de conformidad y la calificación; no importa nada
del paquete y nada que tarde (cada proceso del agente la importa con ``harness.tools``).
"""


def plural(n, one, many):
    """«1 anotación», «2 anotaciones»."""
    return f"{n} {one if n == 1 else many}"


def number(n):
    """Un número entero como lo escribe el español (la norma de la RAE): «4332», «5 546 532». Hasta cuatro
    cifras, juntas; desde cinco, en grupos de tres separados por un espacio duro (no se parte al final
    de una línea). Ni coma ni punto: en inglés separan miles y en español, decimales."""
    return f"{n:,}".replace(",", "\u00a0" if abs(n) >= 10_000 else "")


def shorten(text, width=160):
    """``text`` en una línea de a lo sumo ``width`` caracteres, cortado entre palabras (nunca a mitad
    de una) y con «…» si se cortó."""
    import textwrap  # solo quien acorta lo paga, no cada proceso del agente

    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    cut = textwrap.shorten(text, width, placeholder=" …")
    # Una sola «palabra» más larga que el ancho (una ruta, por ejemplo): se corta ella, con «…».
    return cut if cut.strip(" …") else text[: width - 2] + " …"

"""El plural de una cuenta y la línea acotada (``harness.text``), las de todo el paquete."""

import pytest

from harness.text import plural, shorten


@pytest.mark.parametrize(("n", "said"), [(0, "0 copias"), (1, "1 copia"), (2, "2 copias")])
def test_plural_says_one_only_for_one(n, said):
    assert plural(n, "copia", "copias") == said


def test_shorten_keeps_a_short_text_whole_in_one_line():
    assert shorten("una\nlínea\tcorta  ") == "una línea corta"


def test_shorten_cuts_between_words_and_says_so():
    text = " ".join(f"palabra{i}" for i in range(40))
    cut = shorten(text, 60)
    assert len(cut) <= 60 and cut.endswith(" …")
    assert text.startswith(cut.removesuffix(" …"))
    assert cut.removesuffix(" …").split()[-1] in text.split()  # la última palabra, entera


def test_shorten_cuts_a_single_long_word_inside_it():
    path = "/una/ruta/" + "x" * 200
    cut = shorten(path, 50)
    assert len(cut) == 50 and cut == path[:48] + " …"

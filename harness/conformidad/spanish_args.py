"""Los comandos del curso en español de punta a punta, escrito una vez para todos (la suite, los de
quien califica, los de quien mantiene el curso).

``SpanishArgumentParser``: un ``argparse.ArgumentParser`` que dice en español lo que argparse dice en
inglés: el uso, cada error de argumentos (un número que no es un número, una opción que no existe, lo
que falta), la ayuda de ``-h`` y los títulos de sus secciones. ``command_parser`` lo arma para un
módulo que se corre con ``python -m``. ``explain_missing_modules``: un comando corrido sin el entorno
del curso dice en una línea cómo activarlo o instalarlo, en vez de la traza de un ModuleNotFoundError.
"""

import argparse
import functools
import importlib.util
import os
import re
import sys

HELP_TEXT = "muestra esta ayuda y sale"
POSITIONALS_TITLE = "argumentos"
OPTIONALS_TITLE = "opciones"
USAGE_PREFIX = "uso: "
# Cómo se nombra en español el tipo de un valor que no se pudo convertir («invalid int value»).
TYPE_NAMES = {"int": "un número entero", "float": "un número"}


def _quoted(text):
    """Las comillas de Python de argparse ('abc') como comillas españolas («abc»)."""
    return re.sub(r"'([^']*)'", r"«\1»", text)


def _required(match):
    names = match["names"].split(", ")
    return ("falta el argumento " if len(names) == 1 else "faltan los argumentos ") + ", ".join(names)


def _invalid_value(match):
    wanted = TYPE_NAMES.get(match["type"], f"un valor de tipo {match['type']}")
    return f"{_quoted(match['value'])} no es {wanted}"


# Cada mensaje de error de argparse (3.10 a 3.13) y su traducción: una cadena con los grupos del patrón,
# o una función del match. «argument X: …» envuelve otro mensaje, que se traduce a su vez.
MESSAGES = (
    (r"argument (?P<name>.+?): (?P<inner>.+)", lambda m: f"argumento {m['name']}: {translate(m['inner'])}"),
    (r"invalid (?P<type>\S+) value: (?P<value>.+)", _invalid_value),
    (
        r"invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)",
        lambda m: f"{_quoted(m['value'])} no es una de las opciones: {_quoted(m['choices'])}",
    ),
    (
        r"unknown parser (?P<value>.+?) \(choices: (?P<choices>.+)\)",
        lambda m: f"{_quoted(m['value'])} no es una de las opciones: {_quoted(m['choices'])}",
    ),
    (r"the following arguments are required: (?P<names>.+)", _required),
    (r"one of the arguments (?P<names>.+) is required", "falta uno de estos argumentos: {names}"),
    (r"unrecognized arguments: (?P<args>.+)", "argumentos que no se reconocen: {args}"),
    (r"not allowed with argument (?P<name>.+)", "no se puede usar junto con {name}"),
    (r"expected one argument", "le falta su valor"),
    (r"expected at most one argument", "lleva a lo sumo un valor"),
    (r"expected at least one argument", "lleva al menos un valor"),
    (r"expected (?P<count>\d+) arguments?", "lleva {count} valores"),
    (
        r"ignored explicit argument (?P<value>.+)",
        lambda m: f"no lleva valor (se le dio {_quoted(m['value'])})",
    ),
    (
        r"ambiguous option: (?P<option>.+?) could match (?P<matches>.+)",
        "la opción {option} es ambigua: puede ser {matches}",
    ),
    (r"unexpected option string: (?P<option>.+)", "opción inesperada: {option}"),
    (r"can't open '(?P<path>.+)': (?P<reason>.+)", "no se puede abrir «{path}»: {reason}"),
)


def translate(message):
    """``message`` de argparse en español; uno que no es de argparse (el de un comando) queda igual."""
    for pattern, spanish in MESSAGES:
        match = re.fullmatch(pattern, message, re.DOTALL)
        if match:
            return spanish(match) if callable(spanish) else spanish.format(**match.groupdict())
    return message


class _SpanishUsage(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, USAGE_PREFIX if prefix is None else prefix)


@functools.cache
def _spanish_formatter(formatter_class):
    """``formatter_class`` (el de quien arma el parser) con «uso:» en vez de «usage:»."""
    return type(f"Spanish{formatter_class.__name__}", (_SpanishUsage, formatter_class), {})


class SpanishArgumentParser(argparse.ArgumentParser):
    """Un ``ArgumentParser`` en español: uso, errores, ``-h`` y títulos. Sus subcomandos también (argparse
    los arma con la clase del parser)."""

    def __init__(self, *args, add_help=True, formatter_class=argparse.HelpFormatter, **kwargs):
        super().__init__(*args, add_help=False, formatter_class=_spanish_formatter(formatter_class), **kwargs)
        self._positionals.title = POSITIONALS_TITLE
        self._optionals.title = OPTIONALS_TITLE
        if add_help:
            self.add_argument("-h", "--help", action="help", help=HELP_TEXT)

    def error(self, message):
        """Como el de argparse (el uso y una línea; código 2), con la línea en español."""
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {translate(message)}\n")


def command_parser(spec, doc, **kwargs):
    """El parser del comando ``python -m <módulo>`` de ``spec`` (el ``__spec__`` del módulo), descrito por
    la primera línea de ``doc``: así el uso nombra el comando que se escribió, no el archivo."""
    prog = f"python -m {spec.name.removesuffix('.__main__')}" if spec else None
    return SpanishArgumentParser(prog=prog, description=doc.splitlines()[0], **kwargs)


def _activate_script(venv):
    """El script que activa el entorno ``venv`` (Linux y macOS, o Windows), o None si no hay."""
    for path in (os.path.join(venv, "bin", "activate"), os.path.join(venv, "Scripts", "activate")):
        if os.path.exists(path):
            return path
    return None


def missing_line(module, extra, root, python=sys.executable, prefix=sys.prefix):
    """La línea que dice qué hacer cuando falta ``module``: activar el entorno del curso (``.venv`` en
    ``root``) si existe y no es el de este python; si no, instalar el curso con su ``extra``."""
    venv = os.path.join(root, ".venv")
    activate = _activate_script(venv)
    said = f"falta el módulo {module}: "
    if activate and os.path.realpath(prefix) != os.path.realpath(venv):
        command = f"source {activate}" if os.sep == "/" else activate
        return said + (
            f"{python} no es el python del curso; activa su entorno ({command}) y vuelve a correr el comando"
        )
    return said + (
        f"instala el curso con el extra «{extra}» desde la raíz del repositorio "
        f'(python -m pip install -e ".[{extra}]") y vuelve a correr el comando'
    )


def explain_missing_modules(needed, extra, root):
    """Para un comando recién lanzado: si falta alguno de ``needed`` (lo que usa por un proceso aparte,
    antes de importarlo), sale ya con la línea de ``missing_line``; y cualquier ModuleNotFoundError que
    llegue arriba después es esa misma línea, con código 1, y no una traza."""
    for module in needed:
        if importlib.util.find_spec(module) is None:
            raise SystemExit(missing_line(module, extra, root))
    previous = sys.excepthook

    def hook(kind, error, traceback):
        if issubclass(kind, ModuleNotFoundError):
            print(missing_line(error.name or error, extra, root), file=sys.stderr)
        else:
            previous(kind, error, traceback)

    sys.excepthook = hook

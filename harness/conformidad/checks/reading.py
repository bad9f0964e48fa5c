"""lectura: ``load_checkpoint`` y sus tres errores, con los textos de la lección; también un punto de
control cortado a mitad de un carácter UTF-8, por la terminal (``--resume``)."""

import json

from harness.contract import CHECKPOINT_FILE, EXIT_FAILED
from harness.text import shorten

from ..processes import call, run, scratch
from ..rows import judged
from .common import PYTHON_DRIVER, checkpoint_path, needs, row_or_not_yet, said, sample_checkpoint, write
from .diagnosis import ended

PIECE, TITLE = "lectura", "load_checkpoint: los tres errores"
# Los tres errores de load_checkpoint, tal como los escribe la lección.
NO_CHECKPOINT = f"No se encuentra {CHECKPOINT_FILE}; no hay nada desde donde hacer --resume"
UNPARSABLE = (
    f"No se pudo parsear {CHECKPOINT_FILE}; puede que el archivo haya quedado interrumpido a mitad de "
    "escritura. Bórralo y empieza de nuevo sin --resume"
)
WRONG_VERSION = (
    f"{CHECKPOINT_FILE} tiene version=2; este programa solo acepta version=1 y se niega a cargarlo."
)
TRUNCATED = '{"version":1,"turns":3,"pendingT'  # el JSON cortado de la lección
# Versiones que no son 1 a ambos lados de él y con otro tipo: una comparación con < o >, o int(version), las deja pasar.
OTHER_VERSIONS = (0, "1", 1.5)
CHECKS = (
    f"sin {CHECKPOINT_FILE}: «No se encuentra…»",
    "el JSON cortado de la lección: «No se pudo parsear…»",
    'version=2, y también 0, "1" y 1.5: «…se niega a cargarlo.»',
    "un punto de control válido se devuelve tal cual",
    f"--resume con {CHECKPOINT_FILE} cortado a mitad de un carácter UTF-8: una línea «No se pudo parsear…», código 1",
    "version=true: «…se niega a cargarlo.» (en Python True == 1; en la lección true !== 1)",
    f"--resume con un {CHECKPOINT_FILE} que es JSON válido pero no un objeto (null, []): una línea, código 1",
)


def cut_inside_a_character():
    """Un punto de control válido, cortado entre los dos bytes de la «í» de «escríbelo»."""
    data = json.dumps(sample_checkpoint(), ensure_ascii=False).encode("utf-8")
    return data[: data.index("í".encode()) + 1]


def _error_row(scenario, content, expected, hint):
    def check(ctx):
        with scratch() as w:
            if content is not None:
                write(checkpoint_path(w), content)
            result = call(ctx, w, "load_checkpoint")
        ok = "error" in result and result.get("message", "").startswith(expected)
        return row_or_not_yet(result, scenario, f"error: {shorten(expected, 70)}", ok, said(result), hint)

    check.__name__ = scenario
    return needs(PYTHON_DRIVER)(check)


@needs(PYTHON_DRIVER)
def valid(ctx):
    with scratch() as w:
        write(checkpoint_path(w), json.dumps(sample_checkpoint()))
        result = call(ctx, w, "load_checkpoint")
    return row_or_not_yet(
        result,
        "un punto de control válido",
        "lo devuelve tal cual",
        result.get("value") == sample_checkpoint(),
        said(result),
        "un archivo válido se devuelve entero, sin cambiarle nada",
    )


def utf8_cut(ctx):
    with scratch() as w:
        write(checkpoint_path(w), cut_inside_a_character())
        done = run(ctx, w, resume=True)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    ok = done.returncode == EXIT_FAILED and len(lines) == 1 and lines[0].startswith(UNPARSABLE)
    if "UnicodeDecodeError" in done.stderr:
        hint = (
            "un carácter UTF-8 cortado da UnicodeDecodeError, que no es un JSONDecodeError: lee bytes y "
            "atrapa ValueError (la madre de los dos), para dar el error «No se pudo parsear…»"
        )
    elif "Traceback" in done.stderr:
        hint = "el archivo cortado terminó en una traza: load_checkpoint tiene que convertir cualquier falla al leerlo en su error de una línea"
    else:
        hint = "un archivo cortado a mitad de un carácter también es un archivo a medias: el error «No se pudo parsear…», en una línea, código 1"
    return judged(
        f"--resume con {CHECKPOINT_FILE} cortado a mitad de un carácter UTF-8",
        f"código {EXIT_FAILED} y una línea «{shorten(UNPARSABLE, 60)}»",
        ended(done),
        ok,
        hint,
        done.stderr,
    )


def _not_an_object(content):
    """--resume con un punto de control que es JSON válido pero no un objeto: se rechaza con una línea."""

    def check(ctx):
        with scratch() as w:
            write(checkpoint_path(w), content)
            done = run(ctx, w, resume=True)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        ok = done.returncode == EXIT_FAILED and len(lines) == 1 and "Traceback" not in done.stderr
        if done.returncode == 0:
            hint = f"un {CHECKPOINT_FILE} con {content} no es un punto de control: load_checkpoint lo rechaza (no tiene version=1), nunca lo usa"
        else:
            hint = f"{content} es JSON válido, pero no un objeto: revisa que lo cargado sea un objeto antes de leer su version, y recházalo con el error de una línea"
        return judged(
            f"--resume con {CHECKPOINT_FILE} = {content}",
            f"código {EXIT_FAILED} y una línea en stderr, sin traza",
            ended(done),
            ok,
            hint,
            done.stderr,
        )

    check.__name__ = f"no es un objeto: {content}"
    return check


ROWS = (
    _error_row(
        f"sin {CHECKPOINT_FILE}",
        None,
        NO_CHECKPOINT,
        "el archivo no existe: lanza el error «No se encuentra…» de la lección",
    ),
    _error_row(
        f"{CHECKPOINT_FILE} cortado (el de la lección)",
        TRUNCATED,
        UNPARSABLE,
        "un JSON que no se puede parsear: el error «No se pudo parsear…», nunca un valor por defecto",
    ),
    _error_row(
        f"{CHECKPOINT_FILE} con version=2",
        json.dumps({**sample_checkpoint(), "version": 2}),
        WRONG_VERSION,
        "una versión que no es 1: el error «…se niega a cargarlo.»",
    ),
    _error_row(
        f"{CHECKPOINT_FILE} con version=true",
        json.dumps({**sample_checkpoint(), "version": True}),
        f"{CHECKPOINT_FILE} tiene version=true",
        "true no es 1: en Python True == 1, así que compara también el tipo (la lección usa !==) y lanza el error «…se niega a cargarlo.»",
    ),
    *(
        _error_row(
            f"{CHECKPOINT_FILE} con version={json.dumps(version)}",
            json.dumps({**sample_checkpoint(), "version": version}),
            f"{CHECKPOINT_FILE} tiene version={json.dumps(version)}",
            "solo version=1 se carga: cualquier otra (0, un texto, un número con decimales) lanza el error «…se niega a cargarlo.»",
        )
        for version in OTHER_VERSIONS
    ),
    valid,
    utf8_cut,
    _not_an_object("null"),
    _not_an_object("[]"),
)

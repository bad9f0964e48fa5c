"""escritura: ``save_checkpoint`` escribe un temporal y lo pone en su lugar de una vez (rename)."""

import os

from harness.contract import CHECKPOINT_FILE, TMP_SUFFIX

from ..processes import call, scratch
from . import save_kills
from .common import PYTHON_DRIVER, needs, read_json, row_or_not_yet, said, sample_checkpoint, write

PIECE, TITLE = "escritura", "save_checkpoint: temporal + rename"
CHECKS = (
    f"en una carpeta vacía, {CHECKPOINT_FILE} queda con el JSON pedido y sin .tmp al lado",
    f"con un {CHECKPOINT_FILE} anterior (con otro nombre más) y un .tmp a medias, el anterior se reemplaza entero",
    *save_kills.CHECKS,
)


@needs(PYTHON_DRIVER)
def empty_folder(ctx):
    cp = sample_checkpoint()
    with scratch() as w:
        result = call(ctx, w, "save_checkpoint", cp)
        written = read_json(os.path.join(w, CHECKPOINT_FILE))
        leftovers = [n for n in os.listdir(w) if n.endswith(TMP_SUFFIX)]
    got = (
        said(result)
        if "error" in result
        else (
            f"{CHECKPOINT_FILE} {'igual' if written == cp else 'distinto'}; .tmp: {', '.join(leftovers) or 'ninguno'}"
        )
    )
    return row_or_not_yet(
        result,
        "save_checkpoint(cp) en una carpeta vacía",
        f"{CHECKPOINT_FILE} con ese JSON; ningún .tmp al lado",
        written == cp and not leftovers,
        got,
        f"después de guardar, {CHECKPOINT_FILE} dice exactamente el estado guardado, y el temporal ya no está",
    )


@needs(PYTHON_DRIVER)
def replaces_whole(ctx):
    cp = sample_checkpoint()
    with scratch() as w:
        old = os.path.join(w, CHECKPOINT_FILE)
        write(old, '{"viejo": true}')
        os.link(old, os.path.join(w, "otro-nombre.json"))  # el mismo archivo con otro nombre
        write(old + TMP_SUFFIX, '{"version": 1, "tur')  # lo que dejó una muerte a mitad del temporal
        result = call(ctx, w, "save_checkpoint", cp)
        kept = read_json(os.path.join(w, "otro-nombre.json")) == {"viejo": True}
        ok = read_json(old) == cp and kept
    return row_or_not_yet(
        result,
        f"con un {CHECKPOINT_FILE} anterior y un .tmp a medias",
        "el nuevo en su lugar; el anterior reemplazado entero, no escrito encima",
        ok,
        said(result)
        if "error" in result
        else ("reemplazado" if kept else "escribió encima del archivo anterior"),
        f"escribe primero un archivo temporal y después pon ese archivo en el lugar de {CHECKPOINT_FILE} de una vez: nunca escribas directo sobre él",
    )


ROWS = (empty_folder, replaces_whole, *save_kills.ROWS)

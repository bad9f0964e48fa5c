"""fsync: ante un corte de luz, el rename solo no alcanza. Se lee de las llamadas al sistema de una
corrida de verdad (strace; cualquier lenguaje): en cada guardado de checkpoint.json y de effects.json,
un fsync del temporal antes del rename (sus datos en disco antes que su nombre) y uno de la carpeta
después (el rename mismo en disco)."""

import os
import tempfile

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE
from harness.runs.strace_log import paths_of

from ..processes import missing, scratch
from ..rows import judged, not_yet, unchecked
from .common import died_at, ended
from .faults import strace_missing
from .save_kills import LABEL
from .save_trace import RENAMES, record, saves

PIECE, TITLE = "fsync", "fsync del temporal y de la carpeta"
SECTION = "Un corte de luz entre la escritura y el rename"
CHECKS = (
    f"en cada guardado de {CHECKPOINT_FILE} y de {EFFECTS_FILE} de una corrida que muere en {LABEL} y de su --resume: fsync del temporal antes del rename, y de la carpeta después",
)
SYNCS = ("fsync", "fdatasync")


def _synced(calls, indices, path):
    return any(calls[i].name in SYNCS and calls[i].args and calls[i].args[0][1] == path for i in indices)


def problem(calls, save, w):
    """(lo que falta, la pista) de un guardado, o None si tiene sus dos fsync."""
    if not save.renamed:
        return (
            f"un guardado de {save.target} sin rename",
            "escribe un temporal, fíjalo con fsync y ponlo en su lugar con os.replace (write_durable)",
        )
    final = os.path.join(w, save.target)
    r = next(i for i in save.calls if calls[i].name in RENAMES and paths_of(calls[i], w)[-1:] == [final])
    before, after = [i for i in save.calls if i < r], [i for i in save.calls if i > r]
    tmp = paths_of(calls[r], w)[0]
    if not _synced(calls, before, tmp):
        return (
            f"{save.target}: rename sin fsync del temporal antes",
            "tras un corte de luz el disco puede tener el rename sin los datos: un archivo con su nombre pero "
            "vacío. Haz os.fsync del temporal (después de f.flush()) antes de os.replace",
        )
    if not _synced(calls, after, w):
        return (
            f"{save.target}: sin fsync de la carpeta después del rename",
            "el rename vive en la carpeta: ábrela con os.open y hazle os.fsync después de os.replace, o el "
            "corte de luz puede devolver la versión anterior",
        )
    return None


def fsync_every_save(ctx):
    scenario = f"cada guardado de {CHECKPOINT_FILE} y de {EFFECTS_FILE} (una corrida que muere en {LABEL} y su --resume)"
    expected = "fsync del temporal antes del rename; fsync de la carpeta después"
    why = strace_missing()
    if why:
        return unchecked(scenario, expected, why, SECTION)
    with scratch() as w, tempfile.TemporaryDirectory() as logs:
        fresh, fresh_calls = record(ctx, w, os.path.join(logs, "nueva"), crash_after=LABEL)
        resumed, resume_calls = record(ctx, w, os.path.join(logs, "resume"), resume=True)
        real = os.path.realpath(w)
    piece = missing(fresh.stderr) or missing(resumed.stderr)
    if piece:
        return not_yet(scenario, expected, piece)
    if not died_at(fresh, LABEL):
        return judged(
            scenario, expected, f"no murió en {LABEL}: {ended(fresh)}", False, "", fresh.stderr, SECTION
        )
    found = [(calls, s) for calls in (fresh_calls, resume_calls) for s in saves(calls, real)]
    problems = [p for calls, s in found if (p := problem(calls, s, real))]
    if not found:
        problems = [
            ("ningún guardado en las dos corridas", "el agente guarda sus puntos de control y su registro")
        ]
    got, hint = problems[0] if problems else (f"{len(found)} guardados, todos con sus dos fsync", "")
    return judged(scenario, expected, got, not problems, hint, resumed.stderr, SECTION)


ROWS = (fsync_every_save,)

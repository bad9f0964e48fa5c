"""escritura, en cada llamada al sistema: se graba una corrida de verdad con strace (una nueva que muere
tras la segunda escritura del registro, y su --resume), y se la repite matándola con SIGKILL justo
antes de cada llamada de un guardado de cada clase: el punto A, el punto B, el punto B rellenado y una
escritura de effects.json. Tras cada muerte, el archivo tiene que ser la versión anterior o la nueva,
entera. No importa el agente: vale para un ``--comando`` en cualquier lenguaje.

El archivo solo cambia en una llamada que lo toca (por su nombre, o por un descriptor abierto en él) y
que puede cambiar el disco (no un close ni un fsync: ``save_trace.KEEPS_DISK``). Así que se mata antes
del guardado y justo después de cada una de esas llamadas: un SIGKILL antes de cualquier otra llamada
deja lo mismo que uno de estos. Es cada estado que una muerte puede dejar, con una corrida por estado.
"""

import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from harness.contract import CHECKPOINT_FILE, EFFECTS_FILE, TMP_SUFFIX
from harness.runs.strace_log import paths_of
from harness.scenario import EFFECT
from harness.text import plural

from ..processes import missing, run, scratch
from ..rows import judged, not_yet, unchecked
from .common import crash_hint, died_at, ended
from .faults import strace_missing
from .save_trace import (
    LEDGER,
    POINT_A,
    POINT_B,
    REFILL,
    RENAMES,
    changes_disk,
    copies,
    kill_at,
    record,
    saves,
    watched,
)

LABEL = f"{EFFECT}:2"  # ya hay un registro y un punto de control que perder; el --resume rellena B
KINDS = (POINT_A, POINT_B, REFILL, LEDGER)
TARGET = {POINT_A: CHECKPOINT_FILE, POINT_B: CHECKPOINT_FILE, REFILL: CHECKPOINT_FILE, LEDGER: EFFECTS_FILE}
FUNCTION = {CHECKPOINT_FILE: "save_checkpoint", EFFECTS_FILE: "save_effect"}
SIGKILLED = (-9, 128 + 9)
CHECKS = (
    f"SIGKILL antes de cada llamada al sistema de un guardado del punto A, del punto B, del punto B rellenado y de {EFFECTS_FILE}: el archivo queda en su versión anterior o en la nueva, entero",
)


def scenario(kind):
    what = f"una escritura del registro ({EFFECTS_FILE})" if kind == LEDGER else f"un guardado del {kind}"
    return f"SIGKILL antes de cada llamada al sistema de {what}"


def expected(target):
    return f"{target}: la versión anterior o la nueva, entera, tras cada muerte"


def file_state(w, target):
    """Lo que hay en ``target``: («falta», None), («vacío», None), («json», valor) o («roto», bytes)."""
    path = os.path.join(w, target)
    if not os.path.lexists(path):
        return ("falta", None)
    with open(path, "rb") as f:
        raw = f.read()
    if not raw:
        return ("vacío", None)
    try:
        value = json.loads(raw)
    except ValueError:
        return ("roto", len(raw))
    return ("json", _without_times(value) if target == EFFECTS_FILE else value)


def _without_times(effects):
    """El registro sin la hora de cada anotación («at»): cada muerte es otra corrida, y la misma
    versión del registro tiene ahí otra hora."""
    if not isinstance(effects, dict):
        return effects
    return {
        k: {f: v for f, v in e.items() if f != "at"} if isinstance(e, dict) else e for k, e in effects.items()
    }


def describe(state):
    kind, value = state
    return {
        "falta": "no está",
        "vacío": "vacío (0 bytes)",
        "roto": f"a medias ({value} bytes, no es JSON)",
    }.get(kind, "JSON entero")


class Plan(NamedTuple):
    """Un guardado que se mata: sus llamadas que cambian el archivo, y dónde muere cada corrida (la
    primera deja la versión anterior; las otras, lo que hay justo después de cada cambio)."""

    save: object  # save_trace.Save
    calls: list
    resume: bool
    changed: list
    points: list  # índices de la grabación; len(calls): el final de la grabación misma
    foreign_temp: str | None  # el temporal renombrado hacia el archivo, si estaba en otra carpeta


def kill_plan(save, calls, resume, w):
    """El ``Plan`` de ``save`` (de la grabación ``calls``, hecha en la carpeta real ``w``)."""
    final = os.path.join(w, save.target)
    touches = [i for i, c in enumerate(calls) if changes_disk(c) and final in paths_of(c, w)]
    changed = [i for i in touches if i in save.calls]
    earlier = [i for i in touches if i < save.calls[0]]
    # La versión anterior: justo después del último cambio de antes (o antes del guardado, si no hubo):
    # entre ese cambio y el guardado el archivo no cambia, y dos guardados seguidos comparten la corrida.
    old = earlier[-1] + 1 if earlier else save.calls[0]
    return Plan(save, calls, resume, changed, [old, *(i + 1 for i in changed)], _foreign_temp(save, calls, w))


def _foreign_temp(save, calls, w):
    """El origen del rename hacia el archivo, si no está en su carpeta: entre dos sistemas de archivos un
    rename no es atómico (o falla). Se mira la carpeta, no lo que queda tras las muertes: aquí la carpeta
    temporal del sistema suele estar en el mismo sistema de archivos, y el error pasaría."""
    final = os.path.join(w, save.target)
    sources = [
        paths_of(calls[i], w)[0]
        for i in save.calls
        if calls[i].name in RENAMES and paths_of(calls[i], w)[-1:] == [final]
    ]
    return next((s for s in sources if os.path.dirname(s) != w), None)


def _killed(ctx, start, recording, i, resume, end):
    """(código, estado de cada archivo, stderr) de la corrida que arranca en la copia ``start`` y muere antes
    de la llamada ``i`` de la grabación ``recording`` (llamadas, nombres vigilados, carpeta); si después de
    ``i`` no queda ninguna llamada sobre esos nombres, lo que dejó la grabación (``end``)."""
    calls, names, recorded_in = recording
    with scratch() as w:
        at = kill_at(calls, i, names, recorded_in, w)
        if at is None:
            return SIGKILLED[0], end, ""
        shutil.copytree(start, w, dirs_exist_ok=True, symlinks=True)
        done = run(ctx, w, resume=resume, crash_after=at)
        return done.returncode, file_states(w), done.stderr


def every_syscall(ctx):
    why = strace_missing()
    if why:
        return [unchecked(scenario(kind), expected(TARGET[kind]), why) for kind in KINDS]
    with (
        scratch() as w,
        scratch() as before_resume,
        scratch() as empty,
        tempfile.TemporaryDirectory() as logs,
    ):
        fresh, fresh_calls = record(ctx, w, os.path.join(logs, "nueva"), crash_after=LABEL)
        if not died_at(fresh, LABEL):
            return [_no_recording(kind, fresh) for kind in KINDS]
        shutil.copytree(w, before_resume, dirs_exist_ok=True, symlinks=True)
        resumed, resume_calls = record(ctx, w, os.path.join(logs, "resume"), resume=True)
        real = os.path.realpath(w)
        chosen = {s.kind: s for s in saves(fresh_calls, w)}  # el último de cada clase: ya hay uno anterior
        chosen[REFILL] = next((s for s in saves(resume_calls, w) if s.target == CHECKPOINT_FILE), None)
        calls = {False: fresh_calls, True: resume_calls}
        plans = {
            k: chosen.get(k) and kill_plan(chosen[k], calls[k == REFILL], k == REFILL, real) for k in KINDS
        }
        # Solo cuentan las llamadas sobre los archivos de los guardados (strace -P): cada muerte es exacta.
        names = watched(fresh_calls, saves(fresh_calls, w), w) | watched(
            resume_calls, saves(resume_calls, w), w
        )
        recordings = {resume: (calls[resume], names, w) for resume in calls}
        # Cada corrida, una vez aunque la pidan dos guardados; todas en paralelo.
        starts = {False: empty, True: before_resume}
        ends = {False: file_states(before_resume), True: file_states(w)}
        points = sorted({(p.resume, i) for p in plans.values() if p for i in p.points})

        def kill(point):
            resume, i = point
            return _killed(ctx, starts[resume], recordings[resume], i, resume, ends[resume])

        with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
            states = dict(zip(points, pool.map(kill, points), strict=True))
    return [_judge(kind, plans[kind], states, resumed) for kind in KINDS]


def file_states(w):
    return {t: file_state(w, t) for t in FUNCTION}


def _no_recording(kind, fresh):
    piece = missing(fresh.stderr)
    if piece:
        return not_yet(scenario(kind), "—", piece)
    return judged(
        scenario(kind),
        f"la corrida grabada muere en {LABEL}",
        f"no murió ahí: {ended(fresh)}",
        False,
        crash_hint(fresh, LABEL),
        fresh.stderr,
    )


def _judge(kind, plan, states, resumed):
    if plan is None:
        piece = missing(resumed.stderr) if kind == REFILL else None
        if piece:
            return not_yet(scenario(kind), "—", piece)
        got = f"la corrida grabada no tiene ningún guardado del {kind}"
        return judged(
            scenario(kind),
            "un guardado que matar",
            got,
            False,
            f"¿guarda tu agente el {kind}? Cada guardado termina poniendo su temporal en el lugar de "
            f"{EFFECTS_FILE if kind == LEDGER else CHECKPOINT_FILE} con os.replace (un rename), que aquí no se ve",
            resumed.stderr,
        )
    save = plan.save
    if plan.foreign_temp:
        got = f"el temporal del {kind} es {plan.foreign_temp}, fuera de la carpeta de {save.target}"
        hint_text = (
            f"{FUNCTION[save.target]} crea el temporal en otra carpeta: os.replace es atómico solo dentro del "
            f"mismo sistema de archivos, así que el temporal va en la misma carpeta que {save.target}"
        )
        return judged(scenario(kind), expected(save.target), got, False, hint_text, resumed.stderr)
    if not plan.changed:
        got = f"el guardado del {kind} nunca cambia {save.target}: escribe solo {save.target}{TMP_SUFFIX}"
        hint_text = f"después de escribir el temporal, ponlo en el lugar de {save.target} con os.replace"
        return judged(scenario(kind), expected(save.target), got, False, hint_text, resumed.stderr)
    got = [
        (code, files[save.target], err)
        for code, files, err in (states[(plan.resume, i)] for i in plan.points)
    ]
    kills = list(zip([None, *plan.changed], got, strict=True))
    return _verdict(kind, save, plan.calls, kills, got[0][1], got[-1][1])


def _verdict(kind, save, calls, kills, old, new):
    target, n = save.target, len(save.calls)
    for j, (code, state, stderr) in kills:
        where = (
            "muerto antes del guardado"
            if j is None
            else f"muerto justo después de {calls[j].name} (llamada {save.calls.index(j) + 1} de {n} del guardado)"
        )
        if code not in SIGKILLED:
            why = (
                "la corrida no terminó: ¿un bucle, o espera algo que no llega?"
                if code == -1
                else "el agente no hizo las mismas llamadas al sistema en dos corridas iguales: ¿depende de la hora, del azar o de hilos?"
            )
            got = f"{where}: la corrida no murió ahí (código {code})"
            return judged(scenario(kind), expected(target), got, False, why, stderr)
        if state not in (old, new) or state[0] in ("vacío", "roto") or new[0] != "json":
            got = f"{where}: {target} {describe(state)}"
            return judged(
                scenario(kind), expected(target), got, False, hint(kind, save, calls, j, state, old)
            )
    names = ", ".join(calls[j].name for j, _ in kills[1:]) or "ninguna"
    got = f"{plural(len(kills), 'muerte', 'muertes')}, antes del guardado y después de cada llamada que cambia {target} ({names}): siempre la anterior o la nueva"
    return judged(scenario(kind), expected(target), got, True, "")


def hint(kind, save, calls, j, state, old):
    """La causa, por lo que dejó la muerte y dónde: el rename antes de los datos, la escritura sin
    temporal, el archivo borrado antes de reemplazarlo."""
    target, function = save.target, FUNCTION[save.target]
    if not save.renamed and copies(calls, save):
        return (
            f"el {kind} copia el temporal sobre {target} (shutil.copyfile): la copia abre {target}, lo vacía y "
            f"recién después escribe, así que un SIGKILL en el medio lo deja a medias. Ponlo en su lugar con os.replace "
            "(un rename): cambia el archivo entero de una vez"
        )
    if not save.renamed:
        return (
            f"el {kind} se escribe directo sobre {target}, sin temporal ni rename: al abrirlo queda vacío, y un "
            f"SIGKILL ahí lo pierde. Guárdalo con {function}: un temporal primero, y os.replace (un rename) al final"
        )
    renamed_by_then = j is not None and any(
        calls[i].name in RENAMES for i in save.calls[: save.calls.index(j) + 1]
    )
    if renamed_by_then and state[0] in ("vacío", "roto"):
        return (
            f"{function} pone el temporal en el lugar de {target} (os.replace) antes de que sus datos lleguen al "
            "archivo: json.dump escribe en un búfer que se vacía al cerrarlo. Cierra el temporal (termina el "
            "with) y recién después llama a os.replace"
        )
    if state[0] == "falta" and old[0] != "falta":
        return f"{function} borra {target} antes de poner el nuevo: os.replace ya reemplaza el anterior de una vez"
    return f"{target} quedó a medias: {function} tiene que escribir un temporal entero y después ponerlo en su lugar con os.replace"


ROWS = (every_syscall,)

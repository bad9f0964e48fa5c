"""Las comprobaciones, una por pieza de la lección, cada una una lista de filas.

Los textos esperados son los de la lección (los tres errores de ``load_checkpoint``, las líneas de
``reconcile``, el ``tool_result`` con ``is_error``) o los del contrato (``harness.contract``). El guion
del modelo es el de la lección: ``toolu_01`` read_notes, ``toolu_02`` count_words, ``toolu_03``
write_report; un agente que pide varias llamadas por turno (otro guion) solo corre las caídas.
"""

import json
import os

from harness.contract import (
    BRANCH_WORDS,
    CHECKPOINT_FILE,
    EFFECTS_FILE,
    EXIT_DONE,
    EXIT_FAILED,
    EXIT_KILLED,
    EXIT_USAGE,
    HIT,
    IS_ERROR,
    NO_PENDING,
    RERUN,
    TMP_SUFFIX,
    VERSION,
    crash_message,
    done_text,
    kill_line,
    parse_log,
    unknown_state_text,
)
from harness.crash import KINDS
from harness.disk_state import last_tool_results, read_disk_state
from harness.protocol import pairing_error
from harness.scripted_model import FINAL_TEXT, VERIFIED_TEXT
from harness.tools import REPORT_PATH, report_copies

from .processes import call, missing, run, run_args, scratch
from .rows import judged, not_applicable, not_yet

TURNS = {1: ("toolu_01", "read_notes"), 2: ("toolu_02", "count_words"), 3: ("toolu_03", "write_report")}
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


def moment(label):
    """«after-tool:3 (② herramienta ejecutada, registro sin escribir)»: la etiqueta y su momento."""
    return f"{label} ({KINDS[label.partition(':')[0]]})"


def sample_checkpoint():
    call_1 = {"id": "toolu_01", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
    task = "Convierte sales-notes.txt en un reporte breve y escríbelo en report.txt."
    return {"version": VERSION, "task": task, "turns": 1, "tokensUsed": 60}, call_1


def _checkpoint():
    cp, call_1 = sample_checkpoint()
    return {**cp, "messages": [{"role": "user", "content": cp["task"]}], "pendingToolUse": call_1}


def _said(result):
    """Lo que devolvió o lanzó una llamada, en pocas palabras."""
    if "error" in result:
        return f"{result['error']}: {result['message']}"[:160]
    return f"devolvió {json.dumps(result['value'], ensure_ascii=False)[:80]}"


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# —— escritura: save_checkpoint (temporal + rename) ——


def escritura(ctx):
    cp, rows = _checkpoint(), []
    with scratch() as w:
        result = call(ctx, w, "save_checkpoint", cp)
        written, leftovers = (
            _read(os.path.join(w, CHECKPOINT_FILE)),
            [n for n in os.listdir(w) if n.endswith(TMP_SUFFIX)],
        )
        rows.append(
            _row_or_not_yet(
                result,
                "save_checkpoint(cp) en una carpeta vacía",
                f"{CHECKPOINT_FILE} con ese JSON; ningún .tmp al lado",
                written == cp and not leftovers,
                _said(result)
                if "error" in result
                else f"{CHECKPOINT_FILE} {'igual' if written == cp else 'distinto'}; .tmp: {leftovers or 'ninguno'}",
                f"después de guardar, {CHECKPOINT_FILE} tiene que decir exactamente la escena, y el temporal ya no estar",
            )
        )
    with scratch() as w:
        old = os.path.join(w, CHECKPOINT_FILE)
        with open(old, "w", encoding="utf-8") as f:
            f.write('{"viejo": true}')
        os.link(old, os.path.join(w, "otro-nombre.json"))  # el mismo archivo con otro nombre
        with open(old + TMP_SUFFIX, "w", encoding="utf-8") as f:
            f.write('{"version": 1, "tur')  # lo que dejó una muerte a mitad de escribir el temporal
        result = call(ctx, w, "save_checkpoint", cp)
        kept = _read(os.path.join(w, "otro-nombre.json")) == {"viejo": True}
        ok = _read(old) == cp and kept
        rows.append(
            _row_or_not_yet(
                result,
                f"con un {CHECKPOINT_FILE} anterior y un .tmp a medias",
                "el nuevo en su lugar; el anterior reemplazado entero, no escrito encima",
                ok,
                _said(result)
                if "error" in result
                else ("reemplazado" if kept else "escribió encima del archivo anterior"),
                f"escribe primero un archivo temporal y después pon ese archivo en el lugar de {CHECKPOINT_FILE} de una vez: nunca escribas directo sobre él",
            )
        )
    return rows


def _row_or_not_yet(result, scenario, expected, ok, got, hint):
    piece = missing(result.get("message"))
    return not_yet(scenario, expected, piece) if piece else judged(scenario, expected, got, ok, hint)


# —— lectura: load_checkpoint y sus tres errores ——


def lectura(ctx):
    cases = [
        (
            f"sin {CHECKPOINT_FILE}",
            None,
            NO_CHECKPOINT,
            "el archivo no existe: lanza el error «No se encuentra…» de la lección",
        ),
        (
            f"{CHECKPOINT_FILE} cortado (el de la lección)",
            TRUNCATED,
            UNPARSABLE,
            "un JSON que no se puede parsear: el error «No se pudo parsear…», nunca un valor por defecto",
        ),
        (
            f"{CHECKPOINT_FILE} con version=2",
            json.dumps({**_checkpoint(), "version": 2}),
            WRONG_VERSION,
            "una versión que no es 1: el error «…se niega a cargarlo.»",
        ),
    ]
    rows = []
    for scenario, content, expected, hint in cases:
        with scratch() as w:
            if content is not None:
                with open(os.path.join(w, CHECKPOINT_FILE), "w", encoding="utf-8") as f:
                    f.write(content)
            result = call(ctx, w, "load_checkpoint")
            ok = result.get("message", "").startswith(expected) and "error" in result
            rows.append(
                _row_or_not_yet(result, scenario, f"error: {expected[:70]}…", ok, _said(result), hint)
            )
    with scratch() as w:
        with open(os.path.join(w, CHECKPOINT_FILE), "w", encoding="utf-8") as f:
            json.dump(_checkpoint(), f)
        result = call(ctx, w, "load_checkpoint")
        rows.append(
            _row_or_not_yet(
                result,
                "un punto de control válido",
                "lo devuelve tal cual",
                result.get("value") == _checkpoint(),
                _said(result),
                "un archivo válido se devuelve entero, sin cambiarle nada",
            )
        )
    return rows


# —— apertura: una corrida nueva empieza limpia ——


def apertura(ctx):
    with scratch() as w:
        for name, text in (
            (CHECKPOINT_FILE, json.dumps(_checkpoint())),
            (EFFECTS_FILE, "{}"),
            (REPORT_PATH, "viejo\n"),
        ):
            with open(os.path.join(w, name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(w, CHECKPOINT_FILE + TMP_SUFFIX), "w", encoding="utf-8") as f:
            f.write("{")
        result = call(ctx, w, "fresh_scene", "la tarea")
        left = sorted(n for n in os.listdir(w) if n not in ("sales-notes.txt", ".agente.lock"))
        ok = result.get("value") == [0, 0, [{"role": "user", "content": "la tarea"}]] and not left
        got = _said(result) if "error" in result else f"quedaron: {', '.join(left) or 'nada'}"
        return [
            _row_or_not_yet(
                result,
                "fresh_scene con los archivos de una corrida anterior",
                f"borra {CHECKPOINT_FILE}, {EFFECTS_FILE}, el reporte y los .tmp; devuelve (0, 0, [la tarea])",
                ok,
                got,
                "una corrida sin --resume no puede heredar nada de la anterior: ni punto de control, ni registro, ni reporte",
            )
        ]


# —— Corridas del agente entero ——


def crashed(ctx, w, label, **options):
    """(corrida, estado del disco) de una corrida nueva que tiene que morir en ``label``."""
    result = run(ctx, w, crash_after=label, **options)
    return result, read_disk_state(w)


def _not_dead(result, label):
    """Por qué la corrida no murió en ``label`` (None si murió ahí)."""
    if result.returncode == EXIT_KILLED and kill_line(crash_message(label)) in result.stdout:
        return None
    lines = (result.stderr or result.stdout).strip().splitlines()
    return f"no murió en {label}: código {result.returncode}" + (f", «{lines[-1][:100]}»" if lines else "")


def _dead_row(ctx, label, scenario, expected, judge, hint, **options):
    """Una fila que mata al agente en ``label`` y juzga el disco con ``judge(state) -> (ok, got)``."""
    with scratch() as w:
        result, state = crashed(ctx, w, label, **options)
        piece = missing(result.stderr)
        if piece:
            return not_yet(scenario, expected, piece)
        problem = _not_dead(result, label)
        if problem:
            return judged(
                scenario,
                expected,
                problem,
                False,
                f"la caída {moment(label)} nunca ocurrió: ¿llega la corrida hasta ese crash_point?",
            )
        ok, got = judge(state)
        return judged(scenario, expected, got, ok, hint)


def _pending(state):
    pending = state.pending or {}
    return pending.get("id"), pending.get("name")


def puntos(ctx):
    rows = []
    for turn in (1, 3):
        tool_id, name = TURNS[turn]
        rows.append(
            _dead_row(
                ctx,
                f"after-save-a:{turn}",
                f"① recién guardado el punto A del turno {turn}",
                f"pendingToolUse = {name} ({tool_id}), turns = {turn}",
                lambda s, t=turn, i=tool_id, n=name: (
                    _pending(s) == (i, n) and s.checkpoint.get("turns") == t,
                    f"pendingToolUse = {(s.pending or {}).get('name')}, turns = {(s.checkpoint or {}).get('turns') if isinstance(s.checkpoint, dict) else s.checkpoint}",
                ),
                "① el punto A se guarda apenas llega la respuesta, con la llamada colgante de este turno, antes de ejecutarla",
            )
        )
        rows.append(
            _dead_row(
                ctx,
                f"after-save-b:{turn}",
                f"③ recién guardado el punto B del turno {turn}",
                f"pendingToolUse = null y el tool_result de {tool_id} en messages",
                lambda s, i=tool_id: (
                    isinstance(s.checkpoint, dict)
                    and s.pending is None
                    and last_tool_results(s.checkpoint.get("messages") or []) == [i],
                    f"pendingToolUse = {(s.pending or {}).get('name', 'null')}, último tool_result: {last_tool_results(s.checkpoint.get('messages') or []) if isinstance(s.checkpoint, dict) else '—'}",
                ),
                "③ el punto B se guarda después de agregar el tool_result a messages, con pendingToolUse en null",
            )
        )
    return rows


def registro(ctx):
    tool_id, name = TURNS[3]
    rows = [
        _dead_row(
            ctx,
            "after-tool:3",
            "② write_report ya volvió, su anotación aún no se escribió",
            f"el reporte escrito; {EFFECTS_FILE} sin anotación de {tool_id}",
            lambda s: (
                s.report_copies == 1 and tool_id not in s.entries,
                f"{copies_text(s.report_copies)} del reporte; anotación de {tool_id}: {'sí' if tool_id in s.entries else 'no'}",
            ),
            "② se anota después de ejecutar: si en este momento ya hay anotación, se anotó antes de tener el resultado",
        ),
        _dead_row(
            ctx,
            "after-effect-write:3",
            "recién anotada la llamada de write_report",
            f"{EFFECTS_FILE}: {tool_id} con name={name} y el resultado real (un texto)",
            lambda s: (
                (s.entries.get(tool_id) or {}).get("name") == name
                and isinstance((s.entries.get(tool_id) or {}).get("result"), str)
                and "report.txt" in (s.entries.get(tool_id) or {}).get("result", ""),
                f"anotación: {json.dumps(s.entries.get(tool_id), ensure_ascii=False)[:90]}",
            ),
            "la anotación lleva el resultado real de la herramienta, bajo su tool_use_id, apenas tiene éxito",
        ),
    ]
    return rows


def _resume_row(ctx, label, scenario, expected, judge, hint):
    """Una fila que mata al agente en ``label``, lo reanuda y juzga con ``judge(state_before, resumed, w)``."""
    with scratch() as w:
        result, before = crashed(ctx, w, label)
        piece = missing(result.stderr)
        if piece or _not_dead(result, label):
            return (
                not_yet(scenario, expected, piece)
                if piece
                else judged(
                    scenario,
                    expected,
                    _not_dead(result, label),
                    False,
                    f"la caída {moment(label)} nunca ocurrió",
                )
            )
        resumed = run(ctx, w, resume=True)
        piece = missing(resumed.stderr)
        if piece:
            return not_yet(scenario, expected, piece)
        ok, got = judge(before, resumed, w)
        return judged(scenario, expected, got, ok, hint)


def copies_text(n):
    return "1 copia" if n == 1 else f"{n} copias"


def _outcome(resumed, w):
    branch = BRANCH_WORDS.get(resumed.branch, "ninguna")
    return f"código {resumed.returncode}, rama {branch}, {copies_text(report_copies(os.path.join(w, REPORT_PATH)))} del reporte"


EXPECTED_BRANCH = {
    "after-effect-write:3": (
        HIT,
        FINAL_TEXT,
        "después de anotar, el registro ya tiene la llamada: se reutiliza su resultado, sin volver a ejecutar",
    ),
    "after-tool:2": (
        RERUN,
        FINAL_TEXT,
        "sin anotación y de solo lectura (count_words): se vuelve a ejecutar y se anota",
    ),
    "after-save-a:3": (
        IS_ERROR,
        FINAL_TEXT,
        "sin anotación y con efectos secundarios: is_error, nunca volver a ejecutar a ciegas",
    ),
    "after-tool:3": (
        IS_ERROR,
        VERIFIED_TEXT,
        "② el reporte ya está, pero sin anotación el código no lo sabe: is_error, y el modelo verifica",
    ),
    "after-save-b:3": (NO_PENDING, FINAL_TEXT, "③ sin llamada colgante, reconcile no hace nada y se sigue"),
}


def reconcile(ctx):
    rows = []
    for label, (branch, final, hint) in EXPECTED_BRANCH.items():

        def judge(before, resumed, w, branch=branch, final=final):
            ok = (
                resumed.returncode == EXIT_DONE
                and resumed.branch == branch
                and done_text(resumed.stdout) == final
            )
            return ok and report_copies(os.path.join(w, REPORT_PATH)) == 1, _outcome(resumed, w)

        rows.append(
            _resume_row(
                ctx,
                label,
                f"{moment(label)} y --resume",
                f"rama «{BRANCH_WORDS[branch]}», [done], 1 copia del reporte",
                judge,
                hint,
            )
        )
    rows.append(
        _resume_row(
            ctx,
            "after-save-a:3",
            "el tool_result con is_error",
            "el texto de la lección, con is_error: true",
            lambda before, resumed, w: _is_error_result(w),
            "el tool_result de la rama is_error lleva el texto de la lección y is_error: true",
        )
    )
    return rows


def _is_error_result(w):
    cp = _read(os.path.join(w, CHECKPOINT_FILE)) or {}
    results = [b for m in cp.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"]]
    found = next((b for b in results if isinstance(b, dict) and b.get("tool_use_id") == "toolu_03"), {})
    ok = found.get("is_error") is True and found.get("content") == unknown_state_text("write_report")
    return (
        ok,
        f"is_error={found.get('is_error')}, texto {'igual' if found.get('content') == unknown_state_text('write_report') else 'distinto'}",
    )


# —— caídas: las 12 etiquetas (o las que tenga un agente de varias llamadas por turno) ——


def caidas(ctx):
    if ctx.several_calls:
        return _several_calls_matrix(ctx)
    labels = [f"{kind}:{turn}" for turn in (1, 2, 3) for kind in KINDS]
    return [_matrix_row(ctx, label, {REPORT_PATH: 1}) for label in labels]


def _matrix_row(ctx, label, copies):
    expected = "137 y [kill]; --resume: [done], " + ", ".join(f"{n} {c}×" for n, c in copies.items())

    def judge(before, resumed, w):
        got = {name: report_copies(os.path.join(w, name)) for name in copies}
        cp = _read(os.path.join(w, CHECKPOINT_FILE)) or {}
        clean = not pairing_error(cp.get("messages") or []) and cp.get("pendingToolUse") in (None, [])
        ok = (
            resumed.returncode == EXIT_DONE
            and done_text(resumed.stdout) is not None
            and got == copies
            and clean
        )
        why = "" if clean else "; el punto de control final no está limpio"
        return ok, f"código {resumed.returncode}, " + ", ".join(f"{n} {c}×" for n, c in got.items()) + why

    return _resume_row(
        ctx,
        label,
        f"caída en {moment(label)}",
        expected,
        judge,
        f"revisa el momento {moment(label)}: qué quedó en disco y qué hizo --resume",
    )


def _several_calls_matrix(ctx):
    """Las etiquetas de un agente con otro guion, sacadas de su corrida sin caída: un save A y un save B
    por turno, un after-tool y un after-effect-write por anotación del registro."""
    with scratch() as w:
        clean = run(ctx, w)
        if clean.returncode != EXIT_DONE:
            last = (clean.stderr.strip().splitlines() or ["sin mensaje"])[-1]
            return [
                judged(
                    "la corrida sin caída",
                    "[done] y código 0",
                    f"código {clean.returncode}: {last[:100]}",
                    False,
                    "sin una corrida completa no se pueden sacar sus puntos de caída",
                )
            ]
        turns = sum(1 for line in parse_log(clean.stdout) if line.kind == "save" and line.point == "A")
        calls = len(read_disk_state(w).entries)
        copies = {n: report_copies(os.path.join(w, n)) for n in sorted(os.listdir(w)) if n.endswith(".txt")}
    copies = {n: c for n, c in copies.items() if c}
    labels = [f"{k}:{n}" for k in ("after-save-a", "after-save-b") for n in range(1, turns + 1)]
    labels += [f"{k}:{n}" for k in ("after-tool", "after-effect-write") for n in range(1, calls + 1)]
    return [_matrix_row(ctx, label, copies) for label in labels]


# —— terminal: la línea de comandos y sus códigos ——


def terminal(ctx):
    with scratch() as w:
        bad = run_args(ctx, w, "--reanudar")
        lines = bad.stderr.splitlines()
        rows = [
            judged(
                "python agent.py --reanudar",
                f"código {EXIT_USAGE}, una línea en stderr, nada escrito",
                f"código {bad.returncode}, {len(lines)} {'línea' if len(lines) == 1 else 'líneas'} en stderr, archivos: {', '.join(os.listdir(w)) or 'ninguno'}",
                bad.returncode == EXIT_USAGE and len(lines) == 1 and not os.listdir(w),
                "un argumento desconocido se rechaza antes de tocar nada, con una línea que dice el uso",
            )
        ]
        resumed = run(ctx, w, resume=True)
        piece = missing(resumed.stderr)
        rows.append(
            not_yet("--resume sin punto de control", f"código {EXIT_FAILED} y «{NO_CHECKPOINT}»", piece)
            if piece
            else judged(
                "--resume sin punto de control",
                f"código {EXIT_FAILED} y «{NO_CHECKPOINT}»",
                f"código {resumed.returncode}: {resumed.stderr.strip()[:100]}",
                resumed.returncode == EXIT_FAILED and resumed.stderr.strip() == NO_CHECKPOINT,
                "el error de load_checkpoint llega a la terminal en una sola línea, sin traza, con código 1",
            )
        )
    return rows


LESSON_ONLY = ("escritura", "lectura", "apertura", "puntos", "registro", "reconcile")


def applies(piece, ctx):
    """'' si la pieza se prueba con este agente, o por qué no."""
    if ctx.several_calls and piece in LESSON_ONLY:
        return "supone el guion de la lección (una llamada por turno); este agente pide varias"
    return ""


CHECKS = {
    "escritura": ("save_checkpoint: temporal + rename", escritura),
    "lectura": ("load_checkpoint: los tres errores", lectura),
    "apertura": ("fresh_scene: una corrida nueva empieza limpia", apertura),
    "puntos": ("run_agent: el punto A y el punto B", puntos),
    "registro": ("run_tool_uses: ejecutar primero, anotar después", registro),
    "reconcile": ("reconcile: las tres ramas", reconcile),
    "caidas": ("cada punto de caída y su --resume", caidas),
    "terminal": ("la línea de comandos y sus códigos de salida", terminal),
}


def run_piece(piece, ctx):
    """Las filas de una pieza (o una sola «no aplica»)."""
    why = applies(piece, ctx)
    return [not_applicable(CHECKS[piece][0], why)] if why else CHECKS[piece][1](ctx)

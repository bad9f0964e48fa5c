"""Qué salió mal en una etiqueta, elegido por lo que pasó: cada función devuelve los problemas
encontrados, en orden de causa, como (lo que pasó, la pista). La pista nombra la causa (el punto A que
falta, una anotación con result null, un registro truncado), no la fila que la encontró."""

import json

from harness.contract import (
    BRANCH_WORDS,
    CHECKPOINT_FILE,
    EFFECTS_FILE,
    EXIT_DONE,
    EXIT_FAILED,
    HIT,
    IS_ERROR,
    NO_PENDING,
    RERUN,
    done_text,
    format_line,
    parse_log,
    unknown_state_text,
)
from harness.notebook.disk_state import last_tool_results
from harness.protocol import blocks_of, pairing_error
from harness.scenario import EFFECT, EXPECTED, SAVE_A, SAVE_B, TOOL, split
from harness.text import shorten

from .common import RESUME_CRASH, checkpoint_of, crash_hint, died_at, ended, refilled_then_died


def _tool_results(messages):
    return {b.get("tool_use_id"): b for b in blocks_of(messages or [], "tool_result")}


def _names(calls):
    return ", ".join(f"{c.id} {c.name}" for c in calls) or "ninguna"


def ledger_problems(entries, calls, messages, moment_text):
    """El registro tiene que tener exactamente ``calls`` (ids y nombres), cada una con el resultado
    real: el texto que recibió el modelo en su tool_result, si ya lo recibió."""
    got = {tid: e.get("name") if isinstance(e, dict) else e for tid, e in entries.items()}
    shown = ", ".join(f"{tid} {name}" for tid, name in got.items()) or "vacío"
    for tid, entry in entries.items():
        if not isinstance(entry, dict):
            return [
                (
                    f"{EFFECTS_FILE} {moment_text}: {tid} = {shorten(json.dumps(entry, ensure_ascii=False), 50)}",
                    "cada anotación del registro es un objeto con el nombre de la herramienta, su resultado y la hora "
                    "(name, result, at): reconcile reutiliza su result",
                )
            ]
        result = entry.get("result")
        if not isinstance(result, str):
            return [
                (
                    f"{EFFECTS_FILE} {moment_text}: {tid} con result {json.dumps(result)}",
                    "hay una anotación sin resultado real: se anotó antes de ejecutar la herramienta "
                    "(ejecutar primero, anotar después)",
                )
            ]
    wanted = {c.id: c.name for c in calls}
    if got == wanted:
        results = _tool_results(messages)
        for tid, entry in entries.items():
            sent = results.get(tid)
            if sent and not sent.get("is_error") and sent.get("content") != entry["result"]:
                return [
                    (
                        f"{EFFECTS_FILE} {moment_text}: el resultado de {tid} no es el que recibió el modelo",
                        "se anota el resultado real de la herramienta, el mismo que va en su tool_result",
                    )
                ]
        return []
    expected = f"{EFFECTS_FILE} {moment_text}: {shown}; se esperaba {_names(calls)}"
    lost = [tid for tid in wanted if tid not in got]
    extra = [tid for tid in got if tid not in wanted]
    if extra and all(got[tid] == tid for tid in extra):  # la clave es el nombre de la herramienta
        return [
            (
                expected,
                f"{EFFECTS_FILE} anota por el nombre de la herramienta ({', '.join(extra)}), no por su tool_use_id: dos llamadas a la misma herramienta se pisarían, y reconcile busca pendingToolUse.id",
            )
        ]
    if len(wanted) > 1 and list(got) == [calls[-1].id]:  # quedó solo la anotación más nueva
        return [
            (
                expected,
                "save_effect reescribió el registro solo con la anotación nueva: carga el registro, agrega la anotación y guárdalo entero",
            )
        ]
    if lost and not extra:
        return [
            (
                expected,
                f"falta la anotación de {', '.join(lost)}: cada herramienta que corrió (también la que reconcile vuelve a ejecutar) se anota en {EFFECTS_FILE}",
            )
        ]
    if extra and not lost:
        return [
            (
                expected,
                f"{', '.join(extra)} está en el registro y no debería: solo se anota lo que ya corrió con éxito, después de correrlo",
            )
        ]
    return [(expected, "el registro no tiene las anotaciones que corresponden a este momento")]


def crash_problems(record):
    """Lo que está mal en el disco justo después de la caída en la etiqueta."""
    label, state = record.label, record.after_crash
    kind, turn = split(label)
    exp = EXPECTED[label]
    if not died_at(record.crash, label):
        return [(f"no murió en {label}: {ended(record.crash)}", crash_hint(record.crash, label))]
    cp = checkpoint_of(state)
    if not cp:
        what = "no existe" if state.checkpoint is None else "no se puede leer"
        return [
            (
                f"{CHECKPOINT_FILE} {what} tras {label}",
                "el punto A se guarda apenas llega la respuesta del modelo, antes de ejecutar nada",
            )
        ]
    pending = state.pending if isinstance(state.pending, dict) else None
    got = f"pendingToolUse = {pending.get('name') if pending else 'null'}"
    if exp.pending and not pending:
        return [(f"{got} tras {label}", _lost_pending_hint(kind, exp.pending.id, cp.get("messages") or []))]
    if exp.pending and pending.get("id") != exp.pending.id:
        return [
            (
                f"{got} ({pending.get('id')}) tras {label}",
                "pendingToolUse no es la llamada de este turno: el punto A de este turno no se guardó antes de ejecutar",
            )
        ]
    if exp.pending and not isinstance(pending.get("input"), dict):
        return [
            (
                f"pendingToolUse sin input tras {label}: {', '.join(pending)}",
                "pendingToolUse anota la llamada entera en el punto A: id, name e input (reconcile vuelve a ejecutarla con ese input)",
            )
        ]
    messages = cp.get("messages") or []
    if not exp.pending and pending:
        unsaved = pending.get("id") not in {b.get("tool_use_id") for b in blocks_of(messages, "tool_result")}
        return [
            (
                f"{got} tras {label}",
                f"la caída llegó antes que el punto B: {CHECKPOINT_FILE} todavía es el punto A de este turno. "
                "crash_point('after-save-b') va justo después de guardar el punto B"
                if kind == SAVE_B and unsaved
                else "el punto B se guarda con pendingToolUse en null: el resultado ya está en messages",
            )
        ]
    problems = []
    ran = {b.get("tool_use_id") for b in blocks_of(messages, "tool_result")}
    if exp.pending and exp.pending.id in ran:  # el punto A, guardado después de la herramienta
        problems.append(
            (
                f"el punto A de {label} ya trae el tool_result de su llamada en messages",
                "la herramienta de este turno ya había corrido cuando se guardó el punto A: el punto A se guarda antes de ejecutarla, para que una caída durante la herramienta deje anotada su llamada colgante",
            )
        )
    elif exp.pending and exp.pending.id in {b.get("id") for b in blocks_of(messages, "tool_use")}:
        problems.append(
            (
                f"el punto A de {label} ya trae el turno del asistente en messages",
                "el punto A se guarda antes de agregar el turno del asistente a messages: si no, al reanudar ese turno queda dos veces",
            )
        )
    if kind == SAVE_B and last_tool_results(messages) != [exp.ledger[-1].id]:
        problems.append(
            (
                "el punto B no trae el tool_result de este turno al final de messages",
                "el punto B se guarda después de agregar el tool_result a messages",
            )
        )
    if cp.get("turns") != turn:
        problems.append(
            (
                f"turns = {cp.get('turns')} tras {label}",
                "turns cuenta los turnos del modelo: en el turno N, vale N",
            )
        )
    problems += _early_crash(kind, state, exp) or ledger_problems(
        state.entries, exp.ledger, messages, f"tras {label}"
    )
    if state.report_copies != exp.copies:
        problems.append(
            (
                f"{state.report_copies} copias del reporte tras {label}",
                _MOVED_CRASH[TOOL]
                if kind == TOOL and state.report_copies < exp.copies
                else "el reporte se escribe una sola vez, cuando corre write_report",
            )
        )
    return problems


_MOVED_CRASH = {
    TOOL: "tras after-tool la herramienta ya corrió: crash_point('after-tool') va justo después de ejecutarla",
    EFFECT: "tras after-effect-write la anotación de este turno ya está en el registro: save_effect la anota, y crash_point('after-effect-write') va justo después, nunca antes",
}


def _early_crash(kind, state, exp):
    """La caída after-effect-write que llegó antes de anotar: falta solo la anotación de este turno."""
    done = [c.id for c in exp.ledger[:-1]]
    if kind == EFFECT and exp.ledger and list(state.entries) == done:
        return [(f"{EFFECTS_FILE} tras after-effect-write sin {exp.ledger[-1].id}", _MOVED_CRASH[EFFECT])]
    return []


def _lost_pending_hint(kind, call_id, messages):
    """Por qué falta la llamada colgante tras ① o ②: un punto B ya guardado con la llamada de este turno
    (antes de su tool_result), o un punto A que no la anotó."""
    if call_id in {b.get("id") for b in blocks_of(messages, "tool_use")}:
        return "el punto B de este turno se guardó antes de ejecutar la herramienta: se guarda después de agregar su tool_result a messages"
    if kind == SAVE_A:
        return "el punto A no se guardó con la llamada colgante de este turno: guárdalo apenas llega la respuesta, con pendingToolUse = esa llamada"
    return f"la herramienta ya corrió y {CHECKPOINT_FILE} no tiene su llamada colgante: el punto A se guarda antes de ejecutar, no después"


_MISSED_HIT = f"busca primero pendingToolUse.id en {EFFECTS_FILE} y reutiliza su resultado"
_BRANCH_HINTS = {
    (HIT, RERUN): f"la llamada ya estaba anotada y reconcile la volvió a ejecutar: {_MISSED_HIT}",
    (HIT, IS_ERROR): f"la llamada ya estaba anotada y reconcile no la encontró: {_MISSED_HIT}",
    (
        RERUN,
        IS_ERROR,
    ): "una herramienta de solo lectura sin anotación recibió is_error: si está en READ_ONLY, se vuelve a ejecutar",
    (
        IS_ERROR,
        RERUN,
    ): "una herramienta con efectos secundarios sin anotación se volvió a ejecutar a ciegas: le toca is_error",
    (IS_ERROR, HIT): "reconcile encontró una anotación que no debería existir: ¿se anotó antes de ejecutar?",
    (RERUN, HIT): "reconcile encontró una anotación que no debería existir: ¿se anotó antes de ejecutar?",
}


def branch_problems(record):
    exp, got = EXPECTED[record.label].branch, record.resume.branch
    if got == exp:
        return []
    words = BRANCH_WORDS.get(got, "ninguna línea de reanudación")
    text = f"rama «{words}» en vez de «{BRANCH_WORDS[exp]}» tras {record.label}"
    if got is None:
        return [
            (
                f"--resume: {ended(record.resume)}",
                "el --resume no leyó el punto de control (no imprimió su línea de reanudación)",
            )
        ]
    if exp == NO_PENDING:
        return [(text, "con pendingToolUse en null, reconcile no hace nada (ninguna línea de reconcile)")]
    return [
        (
            text,
            _BRANCH_HINTS.get((exp, got), "reconcile tomó otra rama que la de la lección para este momento"),
        )
    ]


def refill_problems(record):
    """El punto B rellenado: guardado de verdad (no solo anunciado), con el tool_result de la colgante."""
    exp = EXPECTED[record.label]
    if not exp.pending:
        return []
    if not died_at(record.resume, RESUME_CRASH) or not refilled_then_died(record.resume):
        if record.resume.returncode == EXIT_DONE and any(p.refilled for p in parse_log(record.resume.stdout)):
            return [
                (
                    "el --resume siguió después del punto B rellenado sin pasar por crash_point",
                    "después de guardar el punto B rellenado, llama a crash_point('after-save-b'), como en cada punto B",
                )
            ]
        return [
            (f"--resume con caída en {RESUME_CRASH}: {ended(record.resume)}", _refill_hint(record.resume))
        ]
    cp = checkpoint_of(record.after_resume)
    if record.after_resume.pending:
        return [
            (
                f"el log dice «[save B] rellenado…» pero {CHECKPOINT_FILE} sigue con pendingToolUse",
                "el punto B rellenado no se guardó: guárdalo (pendingToolUse en null) antes de seguir",
            )
        ]
    messages = cp.get("messages") or []
    if last_tool_results(messages) != [exp.pending.id]:
        return [
            (
                f"el punto B rellenado termina con {last_tool_results(messages) or 'ningún tool_result'}",
                "el punto B rellenado agrega el turno del asistente y el tool_result de la llamada colgante",
            )
        ]
    if pairing_error(messages):
        return [
            (
                shorten(pairing_error(messages), 120),
                "el punto B rellenado deja una conversación que la API rechazaría: un tool_use, su tool_result, en orden",
            )
        ]
    sent = next((b for b in blocks_of(messages, "tool_use") if b.get("id") == exp.pending.id), {})
    saved = record.after_crash.pending
    if isinstance(saved, dict) and sent.get("input") != saved.get("input"):
        return [
            (
                f"el turno rellenado pide {exp.pending.name} con input {shorten(json.dumps(sent.get('input'), ensure_ascii=False), 60)}",
                "el turno del asistente rellenado rehace la llamada colgante entera: el id, el name y el input de pendingToolUse",
            )
        ]
    turn = split(record.label)[1]
    if cp.get("turns") != turn:
        return [
            (
                f"el punto B rellenado guardó turns = {cp.get('turns')}; la llamada colgante es del turno {turn}",
                "el punto B rellenado guarda el turns que leyó del punto de control: rellenar no es un turno nuevo, ni resta uno",
            )
        ]
    return refilled_result_problems(record, _tool_results(messages)[exp.pending.id])


def _refill_hint(resumed):
    """Por qué un --resume no llegó a su punto B rellenado: una traza, un error propio, o no lo hizo."""
    if "Traceback" in (resumed.stderr or ""):
        return crash_hint(resumed, RESUME_CRASH)
    if resumed.returncode == EXIT_FAILED:
        return f"el --resume salió con un error (código {EXIT_FAILED}) antes del punto B rellenado: su última línea de stderr dice cuál"
    return "el --resume tiene que rellenar el punto B de la llamada colgante, anunciarlo («[save B] rellenado…») y guardarlo"


def refilled_result_problems(record, result):
    """El tool_result rellenado: en la rama is_error, is_error: true y el texto de la lección; en las
    otras, sin is_error y con el resultado anotado en el registro (el que se reutilizó o se volvió a
    ejecutar)."""
    exp = EXPECTED[record.label]
    if exp.branch == IS_ERROR:
        if result.get("is_error") is True and result.get("content") == unknown_state_text(exp.pending.name):
            return []
        return [
            (
                f"tool_result de {exp.pending.id}: is_error={result.get('is_error')}",
                "la rama is_error lleva is_error: true y el texto de la lección («Se desconoce el estado de ejecución previo…»)",
            )
        ]
    if result.get("is_error"):
        return [
            (
                f"tool_result rellenado de {exp.pending.id}: is_error={json.dumps(result.get('is_error'))}",
                f"la rama «{BRANCH_WORDS[exp.branch]}» devuelve el resultado real de la herramienta, sin is_error: is_error es solo para el estado desconocido",
            )
        ]
    entry = record.after_resume.entries.get(exp.pending.id)
    if not isinstance(entry, dict) or not isinstance(entry.get("result"), str):
        return []  # sin anotación, o sin resultado: la causa es esa, y la nombra el registro
    if result.get("content") != entry.get("result"):
        return [
            (
                f"tool_result rellenado de {exp.pending.id}: {shorten(json.dumps(result.get('content'), ensure_ascii=False), 60)}",
                f"el tool_result rellenado lleva el resultado anotado en {EFFECTS_FILE} para esa llamada (el que se reutilizó o se volvió a ejecutar)",
            )
        ]
    return []


def turn_problems(record, runs):
    """Los números de turno a través de las corridas de una etiqueta (caída, --resume, segundo --resume):
    cada punto A abre el turno siguiente al último, cada punto B y la línea de reanudación dicen el
    turno en curso, y el punto de control final guarda el último. Una reanudación sigue contando."""
    current = 0
    for run in (record.crash, record.resume, record.last):
        for line in parse_log(run.stdout) if run else ():
            got = line.turn if line.kind in ("save", "resume") else None
            if got is None:
                continue
            wanted = current + 1 if line.kind == "save" and line.point == "A" else current
            if got != wanted:
                hint = _turn_hint(line, run is not record.crash)
                return [(f"«{format_line(line)}» donde tocaba el turno {wanted}", hint)]
            current = got
    turns = checkpoint_of(record.final).get("turns")
    if record.finished.returncode == EXIT_DONE and turns != current:
        return [
            (
                f"turns = {turns} al terminar, tras {current} turnos",
                "turns cuenta los turnos del modelo de toda la tarea: al reanudar sigue desde el turns del punto de control",
            )
        ]
    return resumed_token_problems(record, runs)


def tokens_of(state):
    return checkpoint_of(state).get("tokensUsed")


_TOKENS_GO_ON = (
    "tokensUsed es de toda la tarea, como turns: al reanudar sigue desde el del punto de control, no desde 0"
)


def resumed_token_problems(record, runs):
    """tokensUsed a través de un --resume: el punto B rellenado guarda el que leyó (rellenar no es una
    respuesta del modelo), y una reanudación que termina por el camino de la lección termina con el
    mismo que una corrida sin caída."""
    exp, read = EXPECTED[record.label], tokens_of(record.after_crash)
    if exp.pending and refilled_then_died(record.resume) and tokens_of(record.after_resume) != read:
        return [
            (
                f"el punto B rellenado guardó tokensUsed = {tokens_of(record.after_resume)}; el punto de control tenía {read}",
                f"{_TOKENS_GO_ON}: el punto B rellenado guarda el que leyó",
            )
        ]
    if exp.branch != NO_PENDING or record.finished.returncode != EXIT_DONE:
        return []
    clean, clean_state = runs.clean()
    if clean.returncode == EXIT_DONE and tokens_of(record.final) != tokens_of(clean_state):
        return [
            (
                f"tokensUsed = {tokens_of(record.final)} al terminar tras reanudar; sin caída, {tokens_of(clean_state)}",
                _TOKENS_GO_ON,
            )
        ]
    return []


def token_problems(record, runs):
    """tokensUsed en el disco de la caída: cada punto A suma la respuesta que abrió su turno (guarda más
    que el punto B anterior), y el punto B guarda el mismo que el punto A de su turno: entre los dos no
    llega ninguna respuesta del modelo."""
    kind, turn = split(record.label)
    if kind not in (SAVE_A, SAVE_B) or not died_at(record.crash, record.label):
        return []
    got = tokens_of(record.after_crash)
    if kind == SAVE_B:
        partner = runs.label(f"{SAVE_A}:{turn}")
        wanted = tokens_of(partner.after_crash) if died_at(partner.crash, partner.label) else got
        if got == wanted:
            return []
        return [
            (
                f"tokensUsed = {got} en el punto B del turno {turn}; su punto A guardó {wanted}",
                "el punto A y el punto B de un turno guardan el mismo tokensUsed: entre los dos no llega ninguna "
                "respuesta del modelo, así que nada se suma ni se pierde",
            )
        ]
    before = runs.label(f"{SAVE_B}:{turn - 1}") if turn > 1 else None
    floor = tokens_of(before.after_crash) if before and died_at(before.crash, before.label) else 0
    counted = isinstance(got, int) and not isinstance(got, bool)
    if counted and (not isinstance(floor, int) or got > floor):
        return []
    return [
        (
            f"tokensUsed = {json.dumps(got)} en el punto A del turno {turn}; antes de esa respuesta, {floor}",
            "tokensUsed suma el uso de cada respuesta del modelo apenas llega (input_tokens + output_tokens), "
            "y el punto A lo guarda: cada punto A guarda más que el punto B anterior",
        )
    ]


def _turn_hint(line, resumed):
    if not resumed:
        return "turns cuenta los turnos del modelo: en el turno N, vale N (cada punto A suma uno)"
    if line.kind == "resume":
        return "la línea de reanudación dice el turns leído del punto de control"
    if line.refilled:
        return "el punto B rellenado es del turno de la llamada colgante: el turns leído, sin sumar ni restar"
    return "turns cuenta los turnos del modelo de toda la tarea: al reanudar sigue desde el turns del punto de control, no desde 0"


def refilled_ledger_problems(record):
    """Tras el punto B rellenado (acierto o re-ejecución): el registro con la llamada colgante anotada,
    las copias del reporte de antes; desde ahí sigue como la fila de after-save-b del mismo turno."""
    exp, state = EXPECTED[record.label], record.after_resume
    calls = exp.ledger if exp.branch == HIT else (*exp.ledger, exp.pending)
    messages = checkpoint_of(state).get("messages") or []
    problems = ledger_problems(state.entries, calls, messages, "tras el punto B rellenado")
    if exp.branch == RERUN and exp.pending.id not in state.entries:
        problems = [
            (
                f"{EFFECTS_FILE} tras el punto B rellenado: sin {exp.pending.id}, que reconcile volvió a ejecutar",
                f"falta la anotación de {exp.pending.id}, que reconcile volvió a ejecutar: la rama de solo lectura también anota lo que vuelve a ejecutar en {EFFECTS_FILE}, después de ejecutarlo; si no, otra caída lo ejecuta de nuevo",
            )
        ]
    if state.report_copies != exp.copies:
        problems.append(
            (
                f"{state.report_copies} copias del reporte tras reanudar",
                "el reporte se escribió dos veces: una herramienta con efectos secundarios no se repite a ciegas",
            )
        )
    return problems


def final_problems(record):
    """El final tras reanudar: [done] con el texto esperado, el registro exacto, una copia del reporte."""
    exp, last, state = EXPECTED[record.label], record.finished, record.final
    if exp.pending and not record.last:
        return refilled_ledger_problems(record)
    if last.returncode != EXIT_DONE or done_text(last.stdout) is None:
        said_done = done_text(last.stdout) is not None
        return [
            (
                f"--resume: {ended(last)}",
                f"imprimió [done] pero salió con código {last.returncode}: al terminar la tarea, código {EXIT_DONE}"
                if said_done
                else "tras reanudar, la tarea sigue hasta el final: [done] y código 0",
            )
        ]
    problems = []
    if done_text(last.stdout) != exp.final_text:
        problems.append(
            (
                f"[done] {shorten(done_text(last.stdout), 80)}",
                "el modelo terminó de otra manera: revisa qué tool_result recibió al reanudar",
            )
        )
    messages = checkpoint_of(state).get("messages") or []
    problems += ledger_problems(state.entries, exp.final_ledger, messages, "al terminar")
    if state.report_copies != 1:
        problems.append(
            (
                f"{state.report_copies} copias del reporte al terminar",
                "el reporte se escribió dos veces: una herramienta con efectos secundarios no se repite a ciegas",
            )
        )
    if pairing_error(messages):
        problems.append(
            (
                "el punto de control final no está emparejado",
                "cada tool_use queda con su tool_result, en orden",
            )
        )
    return problems


# Los aspectos que comparan con otra corrida de la suite (``common.Runs``): reciben también ``runs``.
WITH_RUNS = frozenset(("tokens", "turns"))


def aspects(record, *names, runs=None):
    """Los problemas de los aspectos pedidos, en orden: crash, tokens, branch, refill, final, turns."""
    judges = {
        "crash": crash_problems,
        "tokens": token_problems,
        "branch": branch_problems,
        "refill": refill_problems,
        "final": final_problems,
        "turns": turn_problems,
    }
    found = []
    for name in names:
        found += judges[name](record, runs) if name in WITH_RUNS else judges[name](record)
    return found

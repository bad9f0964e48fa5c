"""Tortura con muertes reales: SIGKILL en un instante al azar, reanudar hasta terminar la tarea.

Cada tarea corre en su propio directorio: una corrida nueva que se mata con SIGKILL en un instante al
azar, y después ``--resume`` (o una corrida nueva si todavía no había punto de control) hasta que el
agente imprime ``[done]``, matando también algunas reanudaciones. Después de cada muerte se exige que
``checkpoint.json`` y ``effects.json`` falten o carguen con los cargadores del agente probado (por
omisión el de referencia, ``solutions/agent.py``; cualquier otro con ``agent=``); al
final, que ``report.txt`` tenga el reporte exactamente una vez y que cada conversación enviada al modelo
(anotada en ``SCRIPTED_MODEL_LOG``) respete el emparejamiento tool_use/tool_result.

Lo usan ``tests/conformance/test_kill_torture.py`` (pocas tareas) y ``benchmarks/kill_torture.py`` (la cuenta
completa, con el resumen).
"""

import json
import os
import random
import signal
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import NamedTuple

from harness.contract import (
    CHECKPOINT_FILE,
    FINISHED,
    JITTER_VAR,
    MODEL_LOG_VAR,
    TMP_SUFFIX,
    done_text,
    parse_line,
)
from harness.defenses.workdir import inside
from harness.protocol import all_blocks, blocks_of
from harness.runs.launcher import AgentRun, load_agent, start_agent_process
from harness.scenario import FINAL_TEXT, VERIFIED_TEXT
from harness.tools import REPORT_PATH, report_copies
from maintainer.paths import REFERENCE_AGENT

JITTER_MS = "20"  # máximo de cada demora al azar: reparte las muertes por todo el turno
MAX_DEATHS = 6  # por tarea; después se deja terminar, para que toda tarea acabe
RESUME_KILL_CHANCE = 0.5
MAX_RUNS = 30  # una tarea que no termina en tantas corridas es un fallo, no un bucle infinito


class Death(NamedTuple):
    """Una muerte: en qué ventana cayó, la última línea impresa y si los archivos cargaban."""

    window: str
    last_line: str
    tmp_left: bool
    problem: str | None  # None si checkpoint.json y effects.json faltaban o cargaban


class TaskResult(NamedTuple):
    seed: int
    deaths: list
    branches: list
    runs: int
    final: str | None
    report_ok: bool
    copies: int
    told_is_error: bool
    problems: list


def load_files(workdir, agent=REFERENCE_AGENT):
    """(checkpoint, registro, problema): cada archivo cargado con los cargadores del agente ``agent``
    (la ruta de un agent.py), None si falta."""
    module = load_agent(agent)
    # Los cargadores usan rutas relativas, como el agente; cada proceso del pool tiene su cwd.
    with inside(workdir):
        try:
            cp = module.load_checkpoint() if os.path.exists(module.CHECKPOINT_PATH) else None
            return cp, module.load_effects(), None
        except (module.CheckpointError, module.LedgerError) as err:
            return None, None, str(err)


def window_of(cp, effects, workdir):
    """La ventana del turno en que cayó la muerte, deducida del disco."""
    if cp is None:
        return "antes del primer punto A"
    pending = cp["pendingToolUse"]
    if pending is None:
        return "③ punto B guardado (modelo o arranque)"
    if pending["id"] in effects:
        return "registro escrito, punto B sin guardar"
    if pending["name"] != "write_report":
        return "① o ② solo lectura, sin anotación"
    if report_copies(os.path.join(workdir, REPORT_PATH)):
        return "② write_report ejecutada, sin anotación"
    return "① write_report sin ejecutar"


def last_line_kind(stdout):
    """La última línea impresa, sin números: «[save A]», «[resume][reconcile] hit»…"""
    lines = stdout.splitlines()
    if not lines:
        return "(nada impreso)"
    line = parse_line(lines[-1])
    if line is None:  # una línea que el SIGKILL cortó, o un aviso fuera del contrato
        return lines[-1][:40]
    if line.kind == "save":
        return f"[save {line.point}]" + (" rellenado tras reanudar" if line.refilled else "")
    return {"reconcile": f"[resume][reconcile] {line.branch}", "resume": "[resume] leído"}.get(
        line.kind, f"[{line.kind}]"
    )


def pairing_problems(conversation):
    """Revisa por su cuenta (sin el validador del modelo guionado) una conversación enviada."""
    problems = []
    for i, message in enumerate(conversation):
        if message.get("role") != ("user" if i % 2 == 0 else "assistant"):
            problems.append(f"messages[{i}] rompe la alternancia de roles")
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        following = conversation[i + 1].get("content") if i + 1 < len(conversation) else []
        answers = [
            b["tool_use_id"]
            for b in following or []
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if uses and sorted(uses) != sorted(answers):
            problems.append(f"messages[{i}] tool_use {uses} respondidos con {answers}")
    ids = [
        b["id"]
        for m in conversation
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    if len(ids) != len(set(ids)):
        problems.append(f"un tool_use_id se repite: {ids}")
    return problems


def log_problems(log_path):
    """(problemas, ¿se le dijo is_error al modelo?) de todas las conversaciones anotadas."""
    problems, told, calls = [], False, {}
    with open(log_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                conversation = json.loads(line)
            except ValueError:
                problems.append(f"línea {n} del log ilegible")
                continue
            found = pairing_problems(conversation) + changed_calls(conversation, calls)
            problems += [f"pedido {n}: {p}" for p in found]
            told |= any(b.get("is_error") for b in all_blocks(conversation))
    return problems, told


def changed_calls(conversation, calls):
    """Un mismo tool_use_id nunca puede nombrar dos llamadas distintas; ``calls`` (id → (nombre,
    entrada)) acumula lo visto en los pedidos anteriores."""
    return [
        f"{b['id']} cambió de llamada"
        for b in blocks_of(conversation, "tool_use")
        if calls.setdefault(b["id"], (b["name"], b["input"])) != (b["name"], b["input"])
    ]


def run_once(workdir, env, kill_after, agent=REFERENCE_AGENT):
    """Una corrida del agente; si ``kill_after`` no es None, SIGKILL a esos segundos (si sigue viva)."""
    proc = start_agent_process(
        workdir, agent=agent, resume=os.path.exists(os.path.join(workdir, CHECKPOINT_FILE)), env=env
    )
    try:
        proc.wait(timeout=60 if kill_after is None else kill_after)
    except subprocess.TimeoutExpired:  # sigue viva: le toca morir (send_signal no hace nada si ya terminó)
        proc.send_signal(signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    return AgentRun(proc.returncode, stdout, stderr)


def run_task(seed, horizon, expected_report, agent=REFERENCE_AGENT):
    """Una tarea completa con muertes al azar; devuelve lo observado, sin afirmar nada."""
    with tempfile.TemporaryDirectory(prefix="tortura-") as workdir:
        log = os.path.join(workdir, "..", f"{os.path.basename(workdir)}.jsonl")
        env = {JITTER_VAR: JITTER_MS, MODEL_LOG_VAR: log}
        try:
            runs, final, deaths, branches, problems = run_until_done(
                workdir, env, random.Random(seed), horizon, agent
            )
            copies, report_ok, told, found = final_checks(workdir, log, expected_report, deaths, agent)
        finally:
            if os.path.exists(log):
                os.remove(log)
    problems += found
    if final not in (FINAL_TEXT, VERIFIED_TEXT):
        problems.append(f"la tarea no terminó bien: {final!r}")
    return TaskResult(seed, deaths, branches, runs, final, report_ok, copies, told, problems)


def run_until_done(workdir, env, rng, horizon, agent=REFERENCE_AGENT):
    """Corre, mata y reanuda hasta ``[done]``, un fallo o MAX_RUNS: (corridas, texto final, muertes,
    ramas de reconcile, problemas)."""
    deaths, branches, problems, final, runs = [], [], [], None, 0
    while final is None and runs < MAX_RUNS:
        cp = load_files(workdir, agent)[0]
        if cp and FINISHED in cp:  # terminó y la muerte llegó antes de imprimir [done]: nada que retomar
            final = cp[FINISHED]
            break
        kill = runs == 0 or (len(deaths) < MAX_DEATHS and rng.random() < RESUME_KILL_CHANCE)
        run = run_once(workdir, env, rng.uniform(0, horizon) if kill else None, agent)
        runs += 1
        if run.branch is not None:
            branches.append(run.branch)
        final = done_text(run.stdout)
        if final is None and run.returncode == -signal.SIGKILL:
            deaths.append(_death(workdir, run.stdout, agent))
        elif final is None:
            problems.append(f"salida {run.returncode}: {run.stderr.strip()[:200]}")
            break
    return runs, final, deaths, branches, problems


def final_checks(workdir, log, expected_report, deaths, agent=REFERENCE_AGENT):
    """(copias del reporte, ¿reporte exacto?, ¿se le dijo is_error?, problemas): lo que se revisa al
    terminar, más los archivos ilegibles que dejó cada muerte."""
    report = os.path.join(workdir, REPORT_PATH)
    log_found, told = log_problems(log) if os.path.exists(log) else (["no hay log"], False)
    _, _, file_problem = load_files(workdir, agent)
    problems = log_found + [d.problem for d in deaths if d.problem] + ([file_problem] if file_problem else [])
    return report_copies(report), _read(report) == expected_report, told, problems


def _read(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def _death(workdir, stdout, agent=REFERENCE_AGENT):
    cp, effects, problem = load_files(workdir, agent)
    tmp_left = any(name.endswith(TMP_SUFFIX) for name in os.listdir(workdir))
    window = "archivo ilegible" if problem else window_of(cp, effects, workdir)
    return Death(window, last_line_kind(stdout), tmp_left, problem)


def calibrate(runs=5, agent=REFERENCE_AGENT):
    """(horizonte en segundos, reporte esperado): la duración de una corrida completa con demoras, y
    los bytes exactos de una sola copia del reporte."""
    times, report = [], None
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="tortura-") as workdir:
            start = time.perf_counter()
            run = run_once(workdir, {JITTER_VAR: JITTER_MS}, None, agent)
            times.append(time.perf_counter() - start)
            if run.returncode != 0:
                raise RuntimeError(f"la corrida de calibración falló: {run.stderr}")
            report = _read(os.path.join(workdir, REPORT_PATH))
    return 1.2 * statistics.median(times), report


def torture(tasks, workers=2, max_seconds=None, first_seed=0, agent=REFERENCE_AGENT):
    """Corre ``tasks`` tareas del agente ``agent`` (la ruta de un agent.py) en ``workers`` procesos;
    deja de lanzar nuevas pasado ``max_seconds``."""
    agent = os.path.abspath(agent)
    horizon, expected = calibrate(agent=agent)
    deadline = time.monotonic() + max_seconds if max_seconds else None
    results, running = [], set()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for seed in range(first_seed, first_seed + tasks):
            if deadline and time.monotonic() > deadline:
                break
            if len(running) >= 2 * workers:  # pocas en cola: así el límite de tiempo se respeta
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                results += [f.result() for f in finished]
            running.add(pool.submit(run_task, seed, horizon, expected, agent))
        results += [f.result() for f in running]
    return sorted(results), horizon


def summary(results):
    """Las cifras de la tabla de confiabilidad."""
    deaths = [d for r in results for d in r.deaths]
    return {
        "tareas": len(results),
        "tareas completas": sum(r.final in (FINAL_TEXT, VERIFIED_TEXT) for r in results),
        "muertes (SIGKILL)": len(deaths),
        "corridas": sum(r.runs for r in results),
        "reporte exactamente una vez": sum(r.report_ok for r in results),
        "efectos duplicados (reporte 2+ veces)": sum(r.copies > 1 for r in results),
        "reportes parciales o faltantes": sum(not r.report_ok and r.copies <= 1 for r in results),
        "archivos ilegibles tras una muerte": sum(d.problem is not None for d in deaths),
        "muertes con un .tmp sobrante": sum(d.tmp_left for d in deaths),
        "tareas donde el modelo recibió is_error": sum(r.told_is_error for r in results),
        "tareas con algún problema": sum(bool(r.problems) for r in results),
        "ventanas": Counter(d.window for d in deaths),
        "última línea impresa": Counter(d.last_line for d in deaths),
        "ramas de reconcile": Counter(b for r in results for b in r.branches),
    }

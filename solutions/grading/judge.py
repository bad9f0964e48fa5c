"""Las comprobaciones ocultas, fuera del kernel de cada estudiante.

Del kernel solo sale JSON: la celda de prueba del Nivel 1 imprime la predicción tras ``ANSWER_MARK`` y
aquí se la lee como texto; cualquier cosa que no sea JSON (o que no tenga el tipo pedido: ``1`` no es
``True``) es un dato equivocado. Cada dato vale su parte de los puntos del momento (``PartlyRight``);
sin las claves pedidas, la predicción entera vale 0. La verdad la mide ``truth``. Del Nivel 2 se toma el
texto de las celdas de respuesta, del notebook mismo, y se corre en procesos nuevos y aislados que
mueren con SIGKILL de verdad en el momento que importa. Lo que hicieron (la herramienta, el registro,
``crash_point``) lo hace y lo cuenta un testigo fuera de su proceso (``witness``), y el momento de
matar lo decide solo ``run_and_kill``, aquí: un script que escribe los archivos a mano, o que escribe
avisos con lo que encuentra en su proceso, no pasa, y nada en su proceso dice cuándo va a morir. Lo que
el código de la persona escribe en stderr queda capturado: no cuenta como error.
"""

import contextlib
import functools
import json
import os
import re
import tempfile
import threading
from typing import NamedTuple

from harness.contract import ORDER_VAR
from harness.notebook import assignment
from harness.notebook.disk_state import read_disk_state
from harness.notebook.exercise_feedback import (
    WRITE_REPORT_CALL,
    ledger_only,
    same_value,
    script_env,
)
from harness.notebook.moments import GRADED
from harness.runs import fork_server
from harness.runs.kill_at_moment import run_and_kill
from harness.scenario import TURNS
from harness.tools import REPORT_PATH
from solutions.grading import puntos, sandbox, truth, witness
from solutions.grading.paths import NOTEBOOKS, REFERENCE_AGENT

ANSWER_MARK = "@@respuesta@@"
TOOL_USE_ID = TURNS[3].id
# El comienzo del veredicto de una predicción con el formato correcto y algún dato equivocado; siguen
# esos datos, separados por comas, y cuántos están bien (el informe de la clase los cuenta uno por uno).
MISMATCH = "no coincide con lo medido en: "
# Cómo empieza la línea de stdout de ese veredicto en la celda de prueba (junto a sus puntos).
PARTIAL_MARK = "✗ "
# Cómo empieza el veredicto de un momento sin predicción, y lo que sigue si la entrega responde momentos
# que no son los suyos (el informe de la clase busca de quién son).
NO_ANSWER = "sin predicción para tu momento "
OTHERS = "responde momentos que no son tuyos: "
_PARTIAL = re.compile(re.escape(MISMATCH) + r"(.*) \((\d+) de (\d+) datos bien\)")


class PartlyRight(NamedTuple):
    """Una predicción con el formato correcto y ``wrong`` datos equivocados, de ``total``: cada dato
    vale su parte de los puntos del momento."""

    wrong: tuple
    total: int

    def __str__(self):
        return (
            f"{MISMATCH}{', '.join(self.wrong)} ({self.total - len(self.wrong)} de {self.total} datos bien)"
        )

    def points(self, top):
        return puntos.rounded(top * (self.total - len(self.wrong)) / self.total)


class AnswerError(Exception):
    """La respuesta no pasa: el mensaje dice por qué, en español."""


def parse_answer(text):
    """La respuesta que salió del kernel, como JSON estricto (sin NaN ni Infinity)."""

    def refuse(constant):
        raise ValueError(constant)

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError):  # RecursionError: listas anidadas sin fin
        raise AnswerError(
            "la respuesta no es JSON: solo valen dict, list, str, int, float, bool y None"
        ) from None


def check_prediction(item, answer):
    """None si todos los datos coinciden con lo medido en el momento ``item``; si alguno no,
    ``PartlyRight``. Sin el formato (las claves, un diccionario), ``AnswerError``: 0 puntos."""
    expected = truth.measured((item,))[item]
    if type(answer) is not dict or answer.keys() != expected.keys():
        raise AnswerError(f"tiene que ser un diccionario con las claves {', '.join(expected)}")
    wrong = tuple(key for key in expected if not same_value(key, answer[key], expected[key]))
    return PartlyRight(wrong, len(expected)) if wrong else None


def check_moment(slot):
    """La comprobación del momento ``slot`` (1, 2 o 3) de quien entregó: ``answer`` es su ``prediction``
    entera, con una predicción por id de momento; se juzga la del momento que la lista de la clase le dio
    (``assignment``, la repartida en ``folder``: nunca la entrega). Una predicción copiada de otra persona
    responde los momentos de esa persona: en los que no comparten, no hay respuesta y vale 0."""

    def judged(answer, scratch, timeout, student=None, folder=NOTEBOOKS):
        try:
            moment = assignment.moments_for(student, folder)[slot - 1]
        except assignment.NotAssignedError as err:
            raise AnswerError(str(err)) from None
        if type(answer) is not dict:
            raise AnswerError("prediction tiene que ser un diccionario {id del momento: predicción}")
        if moment not in answer:
            others = sorted(
                k for k in answer if k in GRADED and k not in assignment.moments_for(student, folder)
            )
            raise AnswerError(
                f'{NO_ANSWER}{moment} (prediction["{moment}"])'
                + (f"; {OTHERS}{', '.join(others)}" if others else "")
            )
        return check_prediction(moment, answer[moment])

    return judged


# —— Nivel 2 ——


_ledger = {}
_ledger_lock = threading.Lock()


def lent_ledger():
    """El texto del registro del agente de referencia que se presta (``ledger_only``), armado una vez
    por proceso: las dos comprobaciones del Nivel 2 corren en hilos, y ``ast`` de Python 3.11 no
    soporta analizar en dos hilos a la vez."""
    with _ledger_lock:
        if "text" not in _ledger:
            with open(REFERENCE_AGENT, encoding="utf-8") as f:
                _ledger["text"] = ledger_only(f.read())
        return _ledger["text"]


@contextlib.contextmanager
def runner(scratch, timeout):
    """Corre código de la persona en una carpeta nueva de ``scratch``, aislada, y lo mata donde se pida.
    Las corridas nacen de un servidor de corridas con su testigo (``witness``) aislado en ``scratch``
    (donde no lo hay, cada una arranca su propio intérprete aislado en su carpeta). Cada una tarda
    menos de un segundo; la primera que pasa de ``timeout`` (el de las celdas) termina la
    comprobación: un bucle cuesta un solo corte."""
    served = fork_server.available()
    with tempfile.TemporaryDirectory(prefix="registro-prestado-") as own:
        # Lo que el aislamiento ve de quien califica: el registro del agente de referencia (sin su
        # run_tool_uses: la corrección tiene que ser de la entrega) y el testigo, prestados en
        # ``sandbox.LENT``; no el repositorio. Fuera de ``scratch``: una corrida no puede cambiarlo.
        ledger = os.path.join(own, "agent.py")
        with open(ledger, "w", encoding="utf-8") as out:
            out.write(lent_ledger())
        lent = {"agent.py": ledger, "witness.py": witness.__file__}
        # El servidor es el init de su aislamiento: una corrida no puede matarlo ni detenerlo.
        isolation = sandbox.prefix(scratch, lent=lent, as_init=True) if served else ()
        agent = os.path.join(sandbox.LENT, "agent.py") if sandbox.required() else ledger
        server = _witnessed_server(isolation) if served else contextlib.nullcontext()
        with server as launch:
            yield _runs(launch, served, scratch, lent, agent, timeout)


@contextlib.contextmanager
def _witnessed_server(isolation):
    """El ``launch`` de un servidor de corridas con el testigo de ``witness`` como ganchos, dentro de
    ``isolation`` y de un grupo de control con tope de procesos para todas sus corridas. Al salir, el
    servidor y lo que quede de él mueren."""
    group = sandbox.process_group() if isolation else None
    hooks = os.path.join(sandbox.LENT, "witness.py") if isolation else witness.__file__
    try:
        server = fork_server.Server(
            dict(os.environ),
            preload=witness.PRELOAD,
            hooks=hooks,
            prefix=sandbox.in_group(group, isolation),
        )
    except BaseException:
        sandbox.release_group(group)
        raise
    try:
        yield functools.partial(witness.launch, server, _isolated_env if isolation else dict)
    finally:
        server.close()
        sandbox.release_group(group)


def _isolated_env(env):
    """Lo que el aislamiento deja pasar del entorno de una corrida, con la ruta donde ve ``harness``."""
    return {**{k: v for k, v in env.items() if sandbox.passes(k)}, "PYTHONPATH": sandbox.PACKAGES}


def _runs(launch, served, scratch, lent, agent, timeout):
    """``run(**kwargs)``: una corrida del código de la entrega (ver ``runner``)."""

    def run(**kwargs):
        # Un nombre al azar: una corrida anterior (que escribe en ``scratch``) no puede adelantarse a
        # crear la carpeta de la siguiente, ni enlaces adentro donde se escribe el script.
        workdir = tempfile.mkdtemp(prefix="corrida_", dir=scratch)
        if "script_text" in kwargs:
            kwargs["script"] = os.path.join(workdir, "reproducir_orden.py")
            with open(kwargs["script"], "w", encoding="utf-8") as f:
                f.write(kwargs.pop("script_text"))
        # Sin servidor, cada corrida en su propio aislamiento, que solo escribe en su carpeta.
        how = {"launch": launch} if served else {"prefix": sandbox.prefix(workdir, lent=lent)}
        try:
            done = run_and_kill(workdir, agent=agent, timeout=timeout, **how, **kwargs)
        except (RuntimeError, OSError) as lost:
            raise AnswerError(f"la corrida dejó sin servidor a quien califica ({lost})") from None
        if done.timed_out:
            raise AnswerError(f"no terminó en {timeout} s (¿un bucle?)")
        return done, read_disk_state(workdir)

    return run


def _entry(state):
    return state.entries.get(TOOL_USE_ID)


def with_runs(check):
    """``check(answer, run)`` como comprobación ``(answer, scratch, timeout)``: con su servidor de corridas."""

    @functools.wraps(check)
    def judged(answer, scratch, timeout, *_):  # *_: quién entregó (el Nivel 2 no lo necesita)
        with runner(scratch, timeout) as run:
            check(answer, run)

    return judged


@with_runs
def check_function(source, run):
    """``run_tool_uses_fixed`` bajo SIGKILL real: sin caída, al volver la herramienta, al escribir el
    registro, con una herramienta que falla y con dos tool_use en un turno."""
    if source.lstrip().startswith("%"):
        raise AnswerError("la celda de la función no puede empezar con una orden mágica de IPython")
    done, state = run(stop_at=None, source=source, content=WRITE_REPORT_CALL)
    entry = _entry(state)
    if done.returncode != 0:
        line = (done.stderr.strip().splitlines() or ["?"])[-1]
        note = sandbox.limit_note(line)
        raise AnswerError(f"sin caída terminó con error: {line}" + (f" {note}" if note else ""))
    if state.report_copies != 1 or not (entry and isinstance(entry.get("result"), str)):
        raise AnswerError("sin caída, write_report corre una vez y effects.json anota su resultado real")
    want = [{"type": "tool_result", "tool_use_id": TOOL_USE_ID, "content": entry["result"]}]
    if done.events[-1:] != [("devolvio", want)]:
        raise AnswerError("sin caída, tiene que devolver un solo tool_result con el resultado anotado")
    done, state = run(stop_at="herramienta:write_report", source=source, content=WRITE_REPORT_CALL)
    if not done.killed_at_moment:
        raise AnswerError("la herramienta nunca volvió: llama a write_report con run_tool")
    if _entry(state) is not None:
        raise AnswerError(
            "con SIGKILL justo cuando la herramienta vuelve, effects.json ya da por hecha la llamada"
        )
    done, state = run(stop_at="registro", source=source, content=WRITE_REPORT_CALL)
    entry = _entry(state)
    if entry is not None and (not isinstance(entry.get("result"), str) or state.report_copies != 1):
        raise AnswerError("con SIGKILL al escribir el registro, la anotación tiene que ser de algo ya hecho")
    broken = [{**WRITE_REPORT_CALL[0], "input": {"path": REPORT_PATH}}]  # sin «content»: falla
    done, state = run(stop_at=None, source=source, content=broken)
    if _entry(state) is not None:
        raise AnswerError("la herramienta falló y aun así effects.json tiene una anotación")
    read = {"type": "tool_use", "id": TURNS[2].id, "name": TURNS[2].name, "input": {"path": REPORT_PATH}}
    done, state = run(stop_at=None, source=source, content=[*WRITE_REPORT_CALL, read])
    got = done.events[-1][1] if done.events and done.events[-1][0] == "devolvio" else None
    want = [
        {"type": "tool_result", "tool_use_id": tid, "content": (state.entries.get(tid) or {}).get("result")}
        for tid in (TOOL_USE_ID, TURNS[2].id)
    ]
    if got != want or any(r["content"] is None for r in want):
        raise AnswerError("con dos tool_use, cada uno necesita su tool_result y su anotación real, en orden")


def script_text(cell_source):
    first, _, rest = cell_source.partition("\n")
    if not first.startswith("%%writefile"):
        raise AnswerError("la celda del script tiene que empezar con %%writefile")
    return rest


@with_runs
def check_script(cell_source, run):
    """El script, en procesos aislados: muere con SIGKILL en su propio crash_point, y sus avisos (con
    el valor al azar de cada corrida) prueban que corrió el registro y la herramienta de verdad."""
    text = script_text(cell_source)
    for order in ("prod", "fixed"):
        env, shown = script_env(order)
        done, state = run(stop_at="caida", script_text=text, env=env)
        kinds = [kind for kind, _ in done.events]
        ledger = [value for kind, value in done.events if kind == "registro" and TOOL_USE_ID in value]
        if not done.killed_at_moment:
            raise AnswerError(f"{shown}: crash_point nunca disparó esa etiqueta")
        if order == "prod" and not (
            ledger and ledger[-1][TOOL_USE_ID] is None and "herramienta" not in kinds
        ):
            raise AnswerError(
                "con ORDER=prod, antes de la caída el registro del agente anota toolu_03 con null"
            )
        if order == "prod" and (
            not _entry(state) or _entry(state).get("result") is not None or state.report_copies
        ):
            raise AnswerError("con ORDER=prod, effects.json queda con toolu_03 y result null, sin report.txt")
        if order == "fixed" and (ledger or ("herramienta", "write_report") not in done.events):
            raise AnswerError(
                "con ORDER=fixed, write_report corre de verdad antes de la caída y el registro no"
            )
        if order == "fixed" and (_entry(state) is not None or state.report_copies != 1):
            raise AnswerError("con ORDER=fixed, report.txt existe y effects.json no anota toolu_03")
    for order, real in (("prod", False), ("fixed", True)):
        done, state = run(stop_at=None, script_text=text, env={ORDER_VAR: order})
        entry = _entry(state)
        if done.returncode != 0 or state.report_copies != 1 or entry is None:
            raise AnswerError(f"sin caída, {ORDER_VAR}={order} termina, escribe el reporte y anota toolu_03")
        if isinstance(entry.get("result"), str) != real:
            raise AnswerError(
                f"sin caída, la anotación de {ORDER_VAR}={order} no es la que ese orden escribe"
            )


# {notebook: {celda de prueba: (celda de respuesta, cómo se comprueba)}}. «json»: lo que imprimió la
# celda de prueba; «source»: el texto de la celda de respuesta.
CHECKS = {
    "ejercicio_nivel_1": {
        "prueba_momento_1": ("json", check_moment(1)),
        "prueba_momento_2": ("json", check_moment(2)),
        "prueba_momento_3": ("json", check_moment(3)),
    },
    "ejercicio_nivel_2": {
        "prueba_corregida": ("source:corregida", check_function),
        "prueba_script": ("source:script", check_script),
    },
}


# —— Lo que cada veredicto dice, para el informe de la clase ——

# Los mecanismos del Nivel 2 que el informe cuenta: {nombre: lo que prueba}.
MECHANISMS = {
    "orden": "la función corregida ejecuta la herramienta antes de anotarla (SIGKILL al volver la herramienta, herramienta que falla)",
    "caida_superada": "con SIGKILL real al escribir el registro, lo anotado es algo ya hecho",
    "prueba_script": "el script reproduce los dos órdenes muriendo en su propio crash_point, con el código real",
}
# Lo que cada veredicto de la función corregida dice de sus dos mecanismos: el que falló; si falló
# antes de probar alguno (sin caída, sin llamar a la herramienta, un bucle), ninguno quedó probado.
_FUNCTION_UNPROVEN = (
    ("con SIGKILL justo cuando la herramienta vuelve", {"orden"}),
    ("con SIGKILL al escribir el registro", {"caida_superada"}),
    ("la herramienta falló y aun así", {"orden"}),
    ("con dos tool_use", set()),
)


def unproven_mechanisms(test_id, problem):
    """Los mecanismos del Nivel 2 que el veredicto ``problem`` de ``test_id`` no deja probados."""
    if problem is None:
        return set()
    if test_id == "prueba_script":
        return {"prueba_script"}
    for start, mechanisms in _FUNCTION_UNPROVEN:
        if problem.startswith(start):
            return set(mechanisms)
    return {"orden", "caida_superada"}


def read_verdict(outputs):
    """El problema que ``JudgeAnswers`` dejó en la salida de una celda de prueba: el de su error, el de
    su línea de crédito parcial, o None si pasó entera."""
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if errors:
        return errors[-1].get("evalue") or "error"
    lines = [o.get("text", "") for o in outputs if o.get("output_type") == "stream"]
    partial = [t for t in lines if t.startswith(PARTIAL_MARK)]
    return partial[-1][len(PARTIAL_MARK) :].strip() if partial else None


def wrong_fields(fields, problem):
    """Los datos de ``fields`` que el veredicto ``problem`` de una predicción del Nivel 1 da por mal:
    los que nombra, o todos si la respuesta no llegó o no tenía el formato."""
    if problem is None:
        return []
    partial = _PARTIAL.fullmatch(problem)
    if partial:
        named = partial[1].split(", ")
        return [field for field in fields if field in named]
    return list(fields)

"""Nivel 2, «el error de orden del registro»: probar un ``run_tool_uses`` bajo caídas simuladas.

La corrección se prueba en el mismo proceso (la caída se inyecta justo cuando la herramienta
vuelve); el script de reproducción, en procesos aparte, como se ejecutaría en la terminal. El
marcado local del notebook y las pruebas ocultas del instructor usan las mismas funciones.
"""

import os

from harness import crash, tools
from harness.disk_state import read_disk_state
from harness.runner import load_reference_agent, run_agent_process
from harness.tools import REPORT_PATH, REPORT_TITLE, ToolError
from harness.workdir import fresh_dir, inside

WORKDIR = os.path.join("_trabajo", "nivel_2")
SCRIPT = os.path.join(WORKDIR, "reproducir_orden.py")
TOOL_USE_ID = "toolu_03"
REPORT_INPUT = {"path": REPORT_PATH, "content": f"{REPORT_TITLE}\n\nClientes con novedades: 5.\n"}
# El turno 3 de la lección: el modelo pide write_report, la herramienta con efecto secundario.
WRITE_REPORT_CALL = [{"type": "tool_use", "id": TOOL_USE_ID, "name": "write_report", "input": REPORT_INPUT}]
# El punto de caída entre registro y herramienta: en el orden de producción cae justo después de
# escribir el registro; en el corregido, justo después de que la herramienta vuelve.
CRASH_BETWEEN = {"prod": "after-effect-write:1", "fixed": "after-tool:1"}


# El registro de la lección, el del agente de referencia, sin copiarlo.
_agent = load_reference_agent()
save_effect, now_ms = _agent.save_effect, _agent.now_ms


def reset_workdir():
    """Borra ``_trabajo/nivel_2`` (relativo a la carpeta del notebook): cada corrida empieza de cero."""
    fresh_dir(WORKDIR)


def scratch(name):
    """Una carpeta vacía de ``_trabajo/nivel_2``, absoluta: sigue valiendo después de entrar en ella."""
    return fresh_dir(os.path.abspath(os.path.join(WORKDIR, name)))


class ToolCrash:
    """Mata (``SimulatedCrash``, con ``CRASH_AFTER=after-tool:1``) el proceso en cuanto la herramienta
    ``name`` vuelve: su efecto secundario ya ocurrió y nada más. ``fired`` dice si llegó a caer."""

    def __init__(self, name):
        self.name, self.real, self.fired = name, tools.TOOL_IMPLS[name], False

    def __call__(self, tool_input):
        output = self.real(tool_input)
        self.fired = True
        crash.crash_point("after-tool")
        return output

    def __enter__(self):
        self.saved_env = os.environ.get("CRASH_AFTER")
        os.environ["CRASH_AFTER"] = CRASH_BETWEEN["fixed"]
        crash.reset_crash_points()
        tools.TOOL_IMPLS[self.name] = self
        return self

    def __exit__(self, *exc):
        tools.TOOL_IMPLS[self.name] = self.real
        crash.reset_crash_points()
        if self.saved_env is None:
            os.environ.pop("CRASH_AFTER", None)
        else:
            os.environ["CRASH_AFTER"] = self.saved_env


def _call(fn, content):
    """(resultado, error) de ``fn(content)``; NotImplementedError sigue de largo."""
    try:
        return fn(content), None
    except NotImplementedError:
        raise
    except Exception as err:  # la función de la persona puede fallar de cualquier forma
        return None, err


def check_normal_run(fn):
    """Sin caída: el registro guarda el resultado real y el tool_result lo devuelve."""
    with inside(scratch("sin_caida")):
        results, error = _call(fn, WRITE_REPORT_CALL)
        entry, copies = read_disk_state().entries.get(TOOL_USE_ID), tools.report_copies()
    if error:
        return f"lanzó {type(error).__name__}: {error}"
    if copies != 1:
        return f"{REPORT_PATH} quedó con {copies} copias del reporte; la herramienta tenía que correr una vez"
    if not isinstance(entry, dict) or not isinstance(entry.get("result"), str):
        return "effects.json no tiene el resultado real de toolu_03 después de una corrida sin caída"
    expected = {"type": "tool_result", "tool_use_id": TOOL_USE_ID, "content": entry["result"]}
    if results != [expected]:
        return "se esperaba un solo tool_result de toolu_03 con el mismo resultado que quedó en el registro"
    return None


def check_failing_tool(fn):
    """Si la herramienta falla, el registro no dice «ya está hecho»."""
    broken = [{**WRITE_REPORT_CALL[0], "input": {"path": REPORT_PATH}}]  # sin «content»: ToolError
    with inside(scratch("herramienta_falla")):
        results, error = _call(fn, broken)
        entry = read_disk_state().entries.get(TOOL_USE_ID)
    if entry is not None:
        return "la herramienta falló y aun así effects.json tiene una anotación para toolu_03"
    if error is not None and not isinstance(error, ToolError):
        return f"lanzó {type(error).__name__}: {error}"
    if error is None and not (results and results[0].get("is_error")):
        return "la herramienta falló y el tool_result no lo dice (ni se propagó el error)"
    return None


def check_crash_after_tool(fn):
    """Caída justo cuando la herramienta vuelve: el reporte existe y el registro no lo anota."""
    with inside(scratch("caida_tras_herramienta")), ToolCrash("write_report") as injected:
        _call(fn, WRITE_REPORT_CALL)  # la caída puede propagarse o volver como is_error: da igual
        entry, copies = read_disk_state().entries.get(TOOL_USE_ID), tools.report_copies()
    if not injected.fired:
        return "la caída inyectada no llegó: llama a la herramienta con run_tool(name, input)"
    if copies != 1:
        return "con la caída, la herramienta tenía que haber corrido una vez"
    if entry is not None:
        return (
            "tras la caída, effects.json ya da por hecha a toolu_03: ¿qué sabía el registro en ese instante?"
        )
    return None


def check_two_calls(fn):
    """Dos tool_use en un mismo turno: los dos quedan anotados con su resultado real."""
    read = {"type": "tool_use", "id": "toolu_02", "name": "count_words", "input": {"path": REPORT_PATH}}
    with inside(scratch("dos_llamadas")):
        results, error = _call(fn, [*WRITE_REPORT_CALL, read])
        ledger = read_disk_state().entries
    if error:
        return f"lanzó {type(error).__name__}: {error}"
    got = [(r.get("tool_use_id"), r.get("content")) for r in results or []]
    want = [(tid, (ledger.get(tid) or {}).get("result")) for tid in (TOOL_USE_ID, "toolu_02")]
    if got != want or None in dict(want).values():
        return "con dos tool_use, cada uno necesita su tool_result y su anotación real, en orden"
    return None


FUNCTION_CHECKS = {
    "sin caída, el registro guarda el resultado real": check_normal_run,
    "si la herramienta falla, no hay anotación": check_failing_tool,
    "caída justo después de la herramienta: sin anotación": check_crash_after_tool,
}


def report(checks, *args):
    """Corre cada comprobación, imprime ✓/✗ con su motivo y devuelve True si pasaron todas."""
    ok = True
    for name, check in checks.items():
        try:
            problem = check(*args)
        except NotImplementedError:
            problem = "todavía sin escribir (lanza NotImplementedError)"
        print(f"  ✓ {name}" if problem is None else f"  ✗ {name}: {problem}")
        ok = ok and problem is None
    return ok


def check_fixed_function(fn):
    """Marcado local de ``run_tool_uses_fixed``."""
    print("run_tool_uses_fixed:")
    return report(FUNCTION_CHECKS, fn)


# —— El script de reproducción, en procesos aparte ——


def run_script(order, crash_after, script=SCRIPT):
    """``ORDER=order CRASH_AFTER=… python script`` en una carpeta nueva; (corrida, estado en disco)."""
    workdir = os.path.abspath(os.path.join(WORKDIR, f"script_{order}_{crash_after or 'sin_caida'}"))
    run = run_agent_process(
        fresh_dir(workdir), agent=os.path.abspath(script), crash_after=crash_after, env={"ORDER": order}
    )
    return run, read_disk_state(workdir)


def _failure(run):
    last = (run.stderr.strip().splitlines() or [""])[-1]
    return f"el script terminó con código {run.returncode}, no 137 (caída simulada): {last}"


def check_prod_crash(script=SCRIPT):
    run, state = run_script("prod", CRASH_BETWEEN["prod"], script)
    if not run.killed:
        return _failure(run)
    entry = state.entries.get(TOOL_USE_ID)
    if not isinstance(entry, dict) or "result" not in entry or entry["result"] is not None:
        return "con ORDER=prod, effects.json tenía que quedar con toolu_03 y result null"
    if state.report_copies:
        return "con ORDER=prod la caída llega antes de la herramienta: report.txt no debería existir"
    return None


def check_fixed_crash(script=SCRIPT):
    run, state = run_script("fixed", CRASH_BETWEEN["fixed"], script)
    if not run.killed:
        return _failure(run)
    if TOOL_USE_ID in state.entries:
        return "con ORDER=fixed, effects.json no debería tener anotación para toolu_03"
    if state.report_copies != 1:
        return "con ORDER=fixed la herramienta corre antes de la caída: report.txt tenía que existir"
    return None


def check_runs_without_crash(script=SCRIPT):
    """Sin CRASH_AFTER los dos órdenes terminan; solo el corregido anota un resultado real."""
    for order, result_is_real in (("prod", False), ("fixed", True)):
        run, state = run_script(order, None, script)
        entry = state.entries.get(TOOL_USE_ID)
        if run.returncode != 0:
            return f"sin caída, ORDER={order} terminó con código {run.returncode}"
        if state.report_copies != 1 or not isinstance(entry, dict):
            return f"sin caída, ORDER={order} tenía que escribir el reporte y anotar toolu_03"
        if (entry.get("result") is not None) != result_is_real:
            return f"sin caída, la anotación de ORDER={order} no es la que ese orden escribe"
    return None


SCRIPT_CHECKS = {
    "orden de producción con caída: queda toolu_03 con result null": check_prod_crash,
    "orden corregido con la misma caída: no queda anotación": check_fixed_crash,
}


def check_script(script=SCRIPT):
    """Marcado local del script de reproducción."""
    print(f"{os.path.basename(script)}:")
    if not os.path.exists(script):
        print(f"  ✗ no existe {script}: ejecuta la celda %%writefile")
        return False
    return report(SCRIPT_CHECKS, script)

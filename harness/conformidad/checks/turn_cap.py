"""tope: el tope de turnos es de cada corrida, no de la tarea: una corrida que lo alcanza sale con una
línea (no es un final del modelo) y un ``--resume`` sigue con otros tantos turnos."""

from dataclasses import replace

from harness.contract import EXIT_DONE, EXIT_FAILED, MAX_TURNS_VAR, done_text
from harness.notebook.disk_state import read_disk_state
from harness.scenario import FINAL_TEXT, TURNS

from ..processes import run, scratch
from ..rows import judged
from .common import checkpoint_of
from .diagnosis import ended

PIECE, TITLE = "tope", "el tope de turnos, por corrida"
SECTION = "El tope de turnos"
CAP = len(TURNS) - 1  # un turno menos que la tarea: la primera corrida lo alcanza, el --resume termina
CHECKS = (
    f"con {MAX_TURNS_VAR}={CAP}: la corrida sale con código 1 y una línea tras {CAP} turnos, con el punto B de su último turno guardado",
    f"y su --resume tiene otros {CAP} turnos: termina la tarea ([done], turns = {len(TURNS)})",
)


def _cap_problem(capped, after_cap, resumed, final):
    """(lo que pasó, la pista) si el tope no cortó la corrida como una salida reanudable, o si el
    --resume no tuvo sus propios turnos; None si todo va como pide la lección de producción."""
    lines = [line for line in capped.stderr.splitlines() if line.strip()]
    cp = checkpoint_of(after_cap)
    if capped.returncode != EXIT_FAILED or len(lines) != 1 or "Traceback" in capped.stderr:
        return (
            f"la corrida con tope {CAP}: {ended(capped)}",
            "alcanzar el tope no es un final del modelo ni una traza: una línea que lo dice, código 1, y el punto de control reanudable",
        )
    if cp.get("turns") != CAP or cp.get("pendingToolUse") is not None:
        return (
            f"tras el tope: turns = {cp.get('turns')}, pendingToolUse = {cp.get('pendingToolUse')}",
            "el tope se revisa antes de contar el turno siguiente: queda guardado el punto B del último turno hecho",
        )
    if resumed.returncode != EXIT_DONE or done_text(resumed.stdout) != FINAL_TEXT:
        return (
            f"--resume tras el tope: {ended(resumed)}",
            "el tope es de cada corrida: cuenta los turnos desde que esta corrida empezó (el turns con que "
            "reanudó), no los de toda la tarea; si no, un --resume tras el tope nunca avanza",
        )
    if checkpoint_of(final).get("turns") != len(TURNS):
        return (
            f"turns = {checkpoint_of(final).get('turns')} al terminar",
            "turns sigue contando los turnos de toda la tarea: el tope por corrida no lo reinicia",
        )
    return None


def per_run_cap(ctx):
    scenario = f"{MAX_TURNS_VAR}={CAP}: una corrida que alcanza el tope, y su --resume"
    expected = f"código 1 y una línea tras {CAP} turnos; --resume: [done] con turns = {len(TURNS)}"
    capped_ctx = replace(ctx, env={**ctx.env, MAX_TURNS_VAR: str(CAP)})
    with scratch() as w:
        capped = run(capped_ctx, w)
        after_cap = read_disk_state(w)
        resumed = run(capped_ctx, w, resume=True)
        final = read_disk_state(w)
    problem = _cap_problem(capped, after_cap, resumed, final)
    got, hint = problem or ("el tope cortó la corrida y el --resume terminó", "")
    return judged(scenario, expected, got, not problem, hint, capped.stderr + resumed.stderr, SECTION)


ROWS = (per_run_cap,)

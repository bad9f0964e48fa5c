"""Lo que muestra el laboratorio de caídas: etiquetas, el dibujo del turno y el resumen de un paso.

Solo arma texto, HTML y SVG (sin ipywidgets), así que las pruebas lo revisan sin navegador.
Todo es determinista: nada de rutas absolutas, horas ni marcas de tiempo.
"""

import html
from typing import NamedTuple

from harness.crash import KINDS
from harness.disk_state import DiskState

# El camino feliz del modelo guionado: una herramienta por turno, tres turnos.
TURN_TOOLS = ("read_notes", "count_words", "write_report")
VARIANTS = {"dos-puntos": "dos puntos (A y B)", "solo-b": "solo el punto B"}
NO_CRASH = ""
# En la variante solo-b no se guarda el punto A, así que esa caída nunca ocurre.
MISSING_IN = {"solo-b": "after-save-a"}

# Las ramas de reconcile (harness.runner.BRANCH_MARKERS), en palabras y con su color.
BRANCHES = {
    "hit": ("acierto en el registro: reutiliza el resultado, no vuelve a ejecutar", "#1e7e34"),
    "rerun": ("fallo en el registro, herramienta de solo lectura: la vuelve a ejecutar", "#1f6fb2"),
    "is_error": (
        "fallo en el registro con efectos secundarios: agrega un tool_result con is_error "
        "y el modelo verifica por su cuenta",
        "#b35c00",
    ),
    "none": ("sin llamada colgante (pendingToolUse=null): reconcile devuelve null y se sigue", "#555555"),
}
ACTIONS = {
    "ready": "Listo",
    "run": "Ejecutar",
    "resume": "Reanudar",
    "reset": "Reiniciar",
    "cut": "Cortar checkpoint.json",
}


class LabStep(NamedTuple):
    """Un paso del laboratorio: qué se hizo, con qué elección, y cómo quedó el disco."""

    action: str  # una clave de ACTIONS
    label: str  # etiqueta de caída elegida (NO_CRASH si ninguna)
    variant: str
    agent: str  # nombre legible del agente, sin rutas absolutas
    workdir: str  # tal como lo dio la persona (relativo)
    run: object  # harness.runner.AgentRun, o None si no se lanzó ningún proceso
    disk: DiskState
    message: str  # qué pasó, en una frase

    @property
    def branch(self):
        return self.run.branch if self.action == "resume" and self.run else None


# —— Etiquetas ——


def crash_labels():
    """Todas las etiquetas de la corrida de 3 turnos, en el orden en que ocurren."""
    return [NO_CRASH] + [f"{kind}:{turn}" for turn in range(1, len(TURN_TOOLS) + 1) for kind in KINDS]


def split_label(label):
    kind, _, turn = label.partition(":")
    return kind, int(turn)


def exists_in(label, variant):
    return label == NO_CRASH or split_label(label)[0] != MISSING_IN.get(variant)


def describe_label(label, variant=None):
    """«turno 3 · ② herramienta ejecutada, registro sin escribir», o «sin caída»."""
    if label == NO_CRASH:
        return "sin caída: la corrida llega hasta [done]"
    kind, turn = split_label(label)
    text = f"turno {turn} · {KINDS[kind]}"
    return text if variant is None or exists_in(label, variant) else f"{text} (no existe en {variant})"


def missing_note(label, variant):
    """Por qué una etiqueta no se puede elegir en esta variante ('' si se puede)."""
    if exists_in(label, variant):
        return ""
    return (
        "En la variante «solo el punto B» no se guarda el punto A, así que la caída "
        f"{label} nunca ocurriría: la corrida llegaría hasta el final. Elige otro punto."
    )


# —— El dibujo del turno ——

_STEPS = ("save A", "herramienta", "registro", "save B")
_BOX_W, _GAP, _LEFT, _ROW_H, _TOP = 122, 36, 74, 50, 10


def _box(x, y, state, title, subtitle):
    fill, stroke, dash = {
        "done": ("#dcefdc", "#3c8d3c", ""),
        "never": ("#f4f4f4", "#aaaaaa", " stroke-dasharray='4 3'"),
        "absent": ("#ffffff", "#cccccc", " stroke-dasharray='2 3'"),
    }[state]
    color = "#999999" if state != "done" else "#222222"
    return (
        f"<rect x='{x}' y='{y}' width='{_BOX_W}' height='34' rx='5' fill='{fill}' stroke='{stroke}'{dash}/>"
        f"<text x='{x + _BOX_W / 2}' y='{y + 14}' text-anchor='middle' font-size='12' fill='{color}'>"
        f"{title}</text><text x='{x + _BOX_W / 2}' y='{y + 28}' text-anchor='middle' font-size='10' "
        f"fill='{color}'>{subtitle}</text>"
    )


def _marker(x, y):
    """La cruz roja del momento en que muere el proceso."""
    return (
        f"<circle cx='{x}' cy='{y}' r='12' fill='#c62828'/>"
        f"<path d='M{x - 5} {y - 5}L{x + 5} {y + 5}M{x + 5} {y - 5}L{x - 5} {y + 5}' "
        "stroke='white' stroke-width='3'/>"
    )


def _state(turn, step, label, variant):
    if variant == "solo-b" and step == 0:
        return "absent"
    if label == NO_CRASH or not exists_in(label, variant):
        return "done"
    kind, crash_turn = split_label(label)
    crash_step = list(KINDS).index(kind)
    return "done" if (turn, step) <= (crash_turn, crash_step) else "never"


def turn_svg(label, variant):
    """Tres turnos de save A → herramienta → registro → save B, y la cruz donde muere el proceso."""
    width = _LEFT + 4 * (_BOX_W + _GAP)
    parts = []
    for turn, tool in enumerate(TURN_TOOLS, start=1):
        y = _TOP + (turn - 1) * _ROW_H
        parts.append(f"<text x='4' y='{y + 22}' font-size='13' font-weight='bold'>turno {turn}</text>")
        subtitles = ("pending=" + tool, tool, "effects.json", "pending=null")
        for step, title in enumerate(_STEPS):
            x = _LEFT + step * (_BOX_W + _GAP)
            state = _state(turn, step, label, variant)
            subtitle = "(sin punto A)" if state == "absent" else subtitles[step]
            parts.append(_box(x, y, state, title, subtitle))
            parts.append(
                f"<text x='{x + _BOX_W + _GAP / 2}' y='{y + 22}' text-anchor='middle' fill='#888'>→</text>"
            )
    if label != NO_CRASH and exists_in(label, variant):
        kind, turn = split_label(label)
        x = _LEFT + list(KINDS).index(kind) * (_BOX_W + _GAP) + _BOX_W + _GAP / 2
        parts.append(_marker(x, _TOP + (turn - 1) * _ROW_H + 17))
    height = _TOP + len(TURN_TOOLS) * _ROW_H
    title = html.escape(describe_label(label, variant))
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' font-family='sans-serif' role='img'><title>{title}</title>"
        + "".join(parts)
        + "</svg>"
    )


PICTURE_LEGEND = (
    "verde: ocurrió · gris punteado: nunca llegó a ocurrir · "
    "<span style='color:#c62828'>✕</span> el proceso muere aquí (código 137)"
)


# —— El resumen de un paso ——


def transcript(step):
    """El paso como en la terminal de la lección: comando, salida y ``EXIT=…``."""
    run = step.run
    if run is None:
        return ""
    env = f"CRASH_AFTER={step.label} " if step.action == "run" and step.label else ""
    env += f"AGENT_VARIANT={step.variant} " if step.variant != "dos-puntos" else ""
    flag = " --resume" if step.action == "resume" else ""
    lines = [f"$ {env}python agent.py{flag}", *run.stdout.splitlines(), *run.stderr.splitlines()]
    return "\n".join(lines + [f"EXIT={run.returncode}"])


def copies_text(copies):
    return f"{copies} vez" if copies == 1 else f"{copies} veces"


def branch_text(step):
    """La rama de reconcile en palabras, o por qué todavía no hay una."""
    if step.branch in BRANCHES:
        return f"{step.branch} · {BRANCHES[step.branch][0]}"
    if step.action == "resume" and step.run and step.run.returncode != 0:
        return "ninguna: la reanudación no pudo leer el punto de control"
    return "todavía no se reanudó"


def twice_warning(step):
    """El aviso de que write_report corrió dos veces ('' si no pasó)."""
    copies = step.disk.report_copies
    if copies < 2:
        return ""
    why = (
        " Es la falla del debate de la lección: sin el punto A, la llamada colgante no quedó en el "
        "punto de control y la reanudación volvió a pedir y ejecutar write_report."
        if step.variant == "solo-b"
        else ""
    )
    return f"⚠ report.txt tiene {copies} copias: ¡write_report se ejecutó {copies_text(copies)}!{why}"


def summary_text(step):
    """El resumen determinista del último paso, en texto plano."""
    lines = [
        f"Agente: {step.agent}",
        f"Variante: {step.variant} · punto de caída: {step.label or 'ninguno'} "
        f"({describe_label(step.label)})",
        f"Paso: {ACTIONS[step.action]} · {step.message}",
    ]
    if step.run:
        lines += ["", transcript(step)]
    lines += ["", f"En disco ({step.workdir}):", str(step.disk)]
    lines.append(f"write_report se ejecutó de verdad: {copies_text(step.disk.report_copies)}")
    lines.append(f"Rama de reconcile: {branch_text(step)}")
    warning = twice_warning(step)
    return "\n".join(lines + ([warning] if warning else []))


def branch_html(step):
    color = BRANCHES[step.branch][1] if step.branch in BRANCHES else "#777777"
    return (
        f"<div style='border-left:6px solid {color};padding:4px 8px;margin:6px 0'>"
        f"<b>Rama de reconcile:</b> <span style='color:{color}'>{html.escape(branch_text(step))}</span></div>"
    )


def disk_html(step):
    """El panel «qué hay en disco»: tabla, veces que corrió write_report, rama y aviso."""
    warning = twice_warning(step)
    warn = (
        f"<div style='background:#fdecea;color:#b00020;padding:6px 8px;font-weight:bold'>"
        f"{html.escape(warning)}</div>"
        if warning
        else ""
    )
    return (
        f"<div><b>En disco</b> (<code>{html.escape(step.workdir)}</code>)</div>"
        f"{step.disk._repr_html_()}"
        f"<div>write_report se ejecutó de verdad: <b>{copies_text(step.disk.report_copies)}</b></div>"
        f"{branch_html(step)}{warn}"
    )


def log_html(step):
    """El log del proceso, como en la terminal; el stderr en rojo."""
    text = transcript(step)
    if not text:
        return "<i>Todavía no se lanzó ningún proceso.</i>"
    err = set(step.run.stderr.splitlines())
    rows = (
        f"<span style='color:#b00020'>{html.escape(line)}</span>" if line in err else html.escape(line)
        for line in text.splitlines()
    )
    return (
        "<pre style='background:#1e1e1e;color:#e8e8e8;padding:8px;margin:0;white-space:pre-wrap'>"
        + "\n".join(rows)
        + "</pre>"
    )

"""El dibujo del laboratorio: los turnos como cajas (punto A → herramienta → registro → punto B).

Cada caja se pinta con lo que pasó (``timeline``), nunca con lo elegido; antes de correr nada las
cajas quedan «sin correr». Cada hueco entre pasos es un botón que elige esa caída (el elegido, con
``aria-pressed``); el dibujo es un grupo con nombre, no una imagen, porque tiene botones. Se dibuja a
su tamaño, con el texto a la letra del notebook (nunca se achica): cada paso (su caja, su flecha, su
hueco y su marca) es un grupo ``cl-cell`` que la página (``static/crash_lab.js``) reacomoda en dos o
una columna cuando las cuatro no caben; aquí se arma en cuatro. La vista guardada (sin JavaScript)
muestra cada paso como una imagen aparte (``step_svg``), que pasa de línea como una palabra. Los colores
salen de variables CSS con el tema claro u oscuro de JupyterLab, con valores de reserva para nbviewer o
GitHub; el color nunca va solo: cada estado lleva su palabra y su símbolo.
"""

import html

from harness.crash_lab.timeline import RESUME, RUN, SAVE_B, STEP_KINDS, TOOL, TURN_TOOLS, Turn
from harness.crash_lab.variants import describe_label, exists_in, get
from harness.crash_lab.words import split_label
from harness.scenario import label as label_of

_BOX_W, _BOX_H, _GAP, _LEFT, _ROW_H, _TOP = 184, 56, 28, 112, 68, 8
_CELL_W = _BOX_W + _GAP  # un paso: su caja y el hueco que la sigue
FONT = 14  # el tamaño de la prosa del notebook (--jp-content-font-size1): nunca menos
WIDTH = _LEFT + len(STEP_KINDS) * _CELL_W

# (clase, símbolo y palabra) de cada estado de una caja.
STATES = {
    "plan": ("cl-plan", "sin correr"),
    "never": ("cl-never", "— no ocurrió"),
    "absent": ("cl-never", "no existe (solo B)"),
    RUN: ("cl-run", "✓ en la corrida"),
    RESUME: ("cl-resume", "↻ al reanudar"),
    "twice": ("cl-twice", "⚠ 2 veces"),
}
# Tema claro por omisión; el oscuro cuando JupyterLab marca body[data-jp-theme-light=false].
STYLE = (
    "<style>"
    ".cl-svg{--cl-bg:var(--jp-layout-color1,#fff);--cl-fg:var(--jp-ui-font-color1,#1f1f1f);"
    "--cl-run:#1b6e33;--cl-resume:#1c5fa8;--cl-twice:#9c4500;--cl-never:#5f5f5f;--cl-kill:#b3261e}"
    "body[data-jp-theme-light='false'] .cl-svg{--cl-run:#7ad695;--cl-resume:#8cc4ff;"
    "--cl-twice:#ffb36b;--cl-never:#b4b4b4;--cl-kill:#ff8a80}"
    ".cl-svg text{fill:var(--cl-fg);font-family:var(--jp-ui-font-family,sans-serif)}"
    ".cl-svg rect.cl-box{fill:var(--cl-bg);stroke-width:2}"
    ".cl-svg .cl-run rect.cl-box{stroke:var(--cl-run)}.cl-svg .cl-run text.cl-st{fill:var(--cl-run)}"
    ".cl-svg .cl-resume rect.cl-box{stroke:var(--cl-resume)}"
    ".cl-svg .cl-resume text.cl-st{fill:var(--cl-resume)}"
    ".cl-svg .cl-twice rect.cl-box{stroke:var(--cl-twice);stroke-width:3}"
    ".cl-svg .cl-twice text.cl-st{fill:var(--cl-twice);font-weight:bold}"
    ".cl-svg .cl-never rect.cl-box,.cl-svg .cl-plan rect.cl-box{stroke:var(--cl-never);stroke-dasharray:4 3}"
    ".cl-svg .cl-never text,.cl-svg .cl-plan text{fill:var(--cl-never)}"
    ".cl-svg .cl-kill{fill:var(--cl-kill)}.cl-svg .cl-next{fill:none;stroke:var(--cl-kill);"
    "stroke-width:2;stroke-dasharray:3 2}.cl-svg .cl-cross{stroke:var(--cl-bg);stroke-width:3}"
    ".cl-svg .cl-next-cross{stroke:var(--cl-kill);stroke-width:2}"
    ".cl-svg .cl-arrow{fill:var(--cl-fg)}"
    ".cl-svg .cl-gap rect{fill:transparent}.cl-svg .cl-gap{cursor:pointer}"
    ".cl-svg .cl-gap:hover rect{fill:var(--cl-kill);fill-opacity:.18}"
    # El foco: un borde del color del texto (más de 3:1 contra el fondo), no solo un tinte.
    ".cl-svg .cl-gap:focus{outline:none}.cl-svg .cl-gap:focus-visible rect{stroke:var(--cl-fg);"
    "stroke-width:3;fill:var(--cl-bg)}.cl-svg .cl-mark-kill,.cl-svg .cl-mark-next{pointer-events:none}"
    "</style>"
)


def _box_state(turn, step, timeline):
    if not exists_in(label_of(STEP_KINDS[step], 1), timeline.variant):
        return "absent"
    if not timeline.ran:
        return "plan"
    who = turn.done_by[step] if turn else ()
    if len(who) > 1:
        return "twice"
    return who[0] if who else "never"


def _texts(turn, step, variant):
    """(título, detalle) de una caja, con las palabras de la variante (el motor anota otras cosas que
    los dos archivos de la lección)."""
    if step == TOOL:
        return "herramienta", turn.tool
    words = get(variant).words
    title, detail = words.boxes[step]
    if step == SAVE_B and not turn.branch:
        return title, words.idle
    return title, detail.format(tool=turn.tool, branch=words.branch_short.get(turn.branch, ""))


def _box(state, title, detail):
    """La caja de un paso, en las coordenadas de su grupo ``cl-cell``."""
    cls, status = STATES[state]
    cx = _BOX_W / 2
    return (
        f"<g class='{cls}' data-state='{state}'><rect class='cl-box' x='0' y='0' width='{_BOX_W}' "
        f"height='{_BOX_H}' rx='5'/><text x='{cx}' y='17' text-anchor='middle' font-size='{FONT}' "
        f"font-weight='bold'>{title}</text><text x='{cx}' y='34' text-anchor='middle' "
        f"font-size='{FONT}'>{html.escape(detail)}</text><text class='cl-st' x='{cx}' y='51' "
        f"text-anchor='middle' font-size='{FONT}'>{status}</text></g>"
    )


_GAP_X = _BOX_W + _GAP / 2  # el centro del hueco que sigue a la caja


def _marker(planned):
    """La cruz donde murió el proceso, o el círculo punteado de la próxima caída elegida."""
    x, y = _GAP_X, _BOX_H / 2
    cross = f"M{x - 5} {y - 5}L{x + 5} {y + 5}M{x + 5} {y - 5}L{x - 5} {y + 5}"
    if planned:
        return (
            f"<g class='cl-mark-next'><title>próxima caída elegida</title><circle class='cl-next' cx='{x}' "
            f"cy='{y}' r='12'/><path class='cl-next-cross' d='{cross}'/></g>"
        )
    return (
        f"<g class='cl-mark-kill'><title>aquí murió el proceso (código 137)</title><circle class='cl-kill' "
        f"cx='{x}' cy='{y}' r='12'/><path class='cl-cross' d='{cross}'/></g>"
    )


def _gap_target(turn, step, variant, chosen):
    """Un hueco que se puede pulsar para elegir la caída «después de este paso» en este turno; el
    elegido lleva ``aria-pressed='true'``. Solo uno entra en el orden del tabulador (la página mueve
    el foco entre huecos con las flechas)."""
    label = label_of(STEP_KINDS[step], turn)
    if turn > len(TURN_TOOLS) or not exists_in(label, variant):
        return ""
    name = html.escape(f"Caída en {describe_label(label, variant)}")
    pressed = "true" if label == chosen else "false"
    return (
        f"<g class='cl-gap' data-label='{label}' role='button' tabindex='-1' aria-pressed='{pressed}' "
        f"aria-label='{name}'>"
        f"<title>{name}</title><rect x='{_BOX_W}' y='0' width='{_GAP}' height='{_BOX_H}'/></g>"
    )


def _cell_parts(turn, step, timeline, chosen, chosen_variant):
    """Lo que dibuja un paso del turno: la caja, la flecha al siguiente y la marca de la caída (la de
    esta corrida o la elegida), en las coordenadas de su paso."""
    state = _box_state(turn if timeline.ran else None, step, timeline)
    parts = [_box(state, *_texts(turn, step, timeline.variant))]
    if step < SAVE_B:
        parts.append(
            f"<text class='cl-arrow' x='{_GAP_X}' y='{_BOX_H / 2 + 4}' text-anchor='middle' "
            f"font-size='{FONT}'>→</text>"
        )
    mark = _mark_at(turn, step, timeline, chosen, chosen_variant)
    if mark is not None:
        parts.append(_marker(planned=mark))
    return parts


def _mark_at(turn, step, timeline, chosen, chosen_variant):
    """False si el proceso murió después de este paso, True si ahí va la caída elegida, o None."""
    here = (turn.number, step)
    if timeline.crash == here:
        return False
    if chosen and exists_in(chosen, chosen_variant):
        kind, number = split_label(chosen)
        if (number, STEP_KINDS.index(kind)) == here:
            return True
    return None


def _cell(turn, step, timeline, chosen, chosen_variant):
    """Un paso del turno en su grupo, con el hueco que elige su caída; la página mueve el grupo entero."""
    parts = _cell_parts(turn, step, timeline, chosen, chosen_variant)
    parts.append(_gap_target(turn.number, step, chosen_variant, chosen))
    x, y = _LEFT + step * _CELL_W, _TOP + (turn.number - 1) * _ROW_H
    return f"<g class='cl-cell' transform='translate({x} {y})'>{''.join(parts)}</g>"


_PAD = 2  # el margen de un paso suelto: el borde grueso de su caja no se corta


def step_svg(turn, step, timeline, chosen, chosen_variant):
    """Un paso solo, como SVG aparte (la vista guardada: una imagen por paso, que pasa a la línea
    siguiente en vez de achicarse). Sin hueco para pulsar: una imagen no tiene botones."""
    parts = "".join(_cell_parts(turn, step, timeline, chosen, chosen_variant))
    width, height = _CELL_W + _PAD, _BOX_H + 2 * _PAD
    return (
        f"<svg class='cl-svg' xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}'>{STYLE}<g transform='translate({_PAD} {_PAD})'>{parts}</g></svg>"
    )


def step_alt(turn, step, timeline, chosen, chosen_variant):
    """Un paso en palabras (el texto alternativo de su imagen): su turno, su caja con su estado y la
    caída que lo sigue, si la hay."""
    title, detail = _texts(turn, step, timeline.variant)
    state = STATES[_box_state(turn if timeline.ran else None, step, timeline)][1]
    alt = (
        f"Turno {turn.number}, {turn.tool}, paso {step + 1} de {len(STEP_KINDS)}: {title} ({detail}): {state}"
    )
    mark = _mark_at(turn, step, timeline, chosen, chosen_variant)
    if mark is not None:
        alt += (
            "; después de este paso va la próxima caída elegida"
            if mark
            else "; después de este paso murió el proceso"
        )
    return alt + "."


def _turn(turn, timeline, chosen, chosen_variant):
    """Un turno: su nombre (el número y la herramienta) y sus cuatro pasos."""
    y = _TOP + (turn.number - 1) * _ROW_H
    name = (
        f"<g class='cl-name' transform='translate(0 {y})'><text x='2' y='22' font-size='{FONT}' "
        f"font-weight='bold'>turno {turn.number}</text><text x='2' y='41' font-size='{FONT}'>"
        f"{html.escape(turn.tool)}</text></g>"
    )
    cells = "".join(_cell(turn, s, timeline, chosen, chosen_variant) for s in range(len(STEP_KINDS)))
    return f"<g class='cl-turn'>{name}{cells}</g>"


def turn_svg(timeline, chosen, chosen_variant):
    """El SVG: los turnos de ``timeline`` y la caída elegida (``chosen``) para el próximo Ejecutar. Sus
    medidas van en ``data-*``: con ellas la página reacomoda los pasos sin repetirlas."""
    turns = shown_turns(timeline)
    body = "".join(_turn(turn, timeline, chosen, chosen_variant) for turn in turns)
    height = _TOP + len(turns) * _ROW_H
    sizes = f"data-cell='{_CELL_W}' data-row='{_ROW_H}' data-left='{_LEFT}' data-top='{_TOP}'"
    return (
        f"<svg class='cl-svg' xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' "
        f"viewBox='0 0 {WIDTH} {height}' {sizes} role='group' aria-label='{picture_title(timeline)}'>"
        f"<title>{picture_title(timeline)}</title>{STYLE}{body}</svg>"
    )


def picture_title(timeline):
    """El nombre del dibujo (su ``<title>`` y el del grupo para un lector de pantalla)."""
    return "Qué pasó en cada turno" if timeline.ran else "Los turnos de la corrida, todavía sin correr"


def shown_turns(timeline):
    """Los turnos que se dibujan: los de la historia o, antes de correr nada, los del guion sin correr."""
    empty = ((),) * len(STEP_KINDS)
    return timeline.turns or tuple(Turn(n, tool, empty, "") for n, tool in enumerate(TURN_TOOLS, 1))


LEGEND = (
    "✓ en la corrida · ↻ al reanudar · ⚠ 2 veces (corrió en los dos procesos) · — no ocurrió · "
    "✕ aquí murió el proceso · ◌ la próxima caída elegida."
)
HOW_TO_CHOOSE = (
    "Pulsa un hueco entre dos pasos para elegir ahí la caída (con el teclado: Tab hasta el dibujo, las "
    "flechas entre huecos, Enter para elegir), o usa el menú «Caída en»."
)

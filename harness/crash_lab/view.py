"""Lo que muestra el laboratorio de caídas, fuera del dibujo: estado, historia, log, disco y resumen.

Solo arma texto y HTML (sin ipywidgets), así que las pruebas lo revisan sin navegador. Todo es
determinista: nada de rutas absolutas, horas ni marcas de tiempo. Los colores son variables CSS del
tema de JupyterLab (claro u oscuro), con valores de reserva fuera de JupyterLab.
"""

import base64
import html
from typing import NamedTuple

from harness.contract import CRASH_VAR, VARIANT_VAR
from harness.crash_lab.ending import DONE, SIGNAL, ending
from harness.crash_lab.picture import LEGEND, shown_turns, step_alt, step_svg
from harness.crash_lab.shown import without_paths
from harness.crash_lab.timeline import STEP_KINDS
from harness.crash_lab.variants import describe_label, get
from harness.crash_lab.words import ACTIONS, times
from harness.text import plural

HISTORY_SHOWN = 8
# La ayuda del laboratorio: cómo se usa con el teclado y adónde va el foco (static/crash_lab.js lo hace así).
KEYBOARD_HELP = (
    "Tab y Mayús+Tab recorren los controles. En el dibujo, las flechas izquierda y derecha van de hueco "
    "en hueco (y pasan al turno siguiente), arriba y abajo van al mismo hueco del turno anterior o "
    "siguiente, Inicio y Fin al primero y al último; Enter o espacio eligen esa caída. Enter o espacio "
    "en un botón lo pulsan; después de esa acción el foco queda en el control que la hizo y, si ese "
    "control se apagó (Reanudar, cuando la corrida llegó a [done]), pasa al siguiente control activo. "
    "Después de un clic con el ratón el foco queda en la celda, como tras un clic en cualquier salida: "
    "Enter y Mayús+Enter hacen lo de siempre (editar y ejecutar la celda), no vuelven a pulsar el botón. "
    "Mayús+Enter, Alt+Enter y las combinaciones con Ctrl o Cmd (Ctrl+Enter, Ctrl+S para guardar, "
    "Ctrl+Mayús+C para la paleta de comandos) llegan al notebook desde cualquier control y nunca pulsan "
    "un botón; las demás teclas son del laboratorio (a, b o d d no tocan las celdas)."
)
PREVIEW_LINE = (
    "Vista guardada: el dibujo del último estado del laboratorio. Ejecuta esta celda para usarlo: "
    "elegir la caída, Ejecutar, Reanudar y Reiniciar."
)


class LabStep(NamedTuple):
    """Un paso del laboratorio: qué se hizo, con qué elección, y cómo quedó el disco."""

    action: str  # una clave de ACTIONS
    label: str  # etiqueta de caída de la corrida (NO_CRASH si ninguna)
    variant: str  # la variante con que corrió el proceso (al reanudar, la de la corrida)
    agent: str  # nombre legible del agente, sin rutas absolutas
    workdir: str  # tal como lo dio la persona (relativo)
    run: object  # harness.runs.launcher.AgentRun, o None si no se lanzó ningún proceso
    disk: object  # lo que dio el read_state de la variante (harness.notebook.disk_state.DiskState u otro con su forma)
    message: str  # qué pasó, en una frase
    number: int = 0  # el número del paso en la historia del laboratorio

    @property
    def branch(self):
        if self.action != "resume" or not self.run:
            return None
        return get(self.variant).read_branch(self.run)


# —— El paso en texto plano ——


def transcript(step):
    """El paso como en la terminal de la lección: comando, salida (sin rutas de la máquina, las dos en su
    orden) y ``EXIT=…``."""
    run = step.run
    if run is None:
        return ""
    variant = get(step.variant)
    env = f"{CRASH_VAR}={step.label} " if step.action == "run" and step.label else ""
    env += f"{VARIANT_VAR}={variant.agent_variant} " if variant.agent_variant else ""
    flag = " --resume" if step.action == "resume" else ""
    output = without_paths(run.output).splitlines()  # stdout y stderr en el orden en que se escribieron
    return "\n".join([f"$ {env}{variant.command}{flag}", *output, f"EXIT={run.returncode}"])


def branch_title(step):
    return get(step.variant).words.branch_title


def branch_parts(step):
    """(la rama de reconcile, o lo que hizo el motor, en palabras; sus palabras en el log, o ''). Sin
    rama, por qué todavía no hay una."""
    words = get(step.variant).words
    if step.branch in words.branches:  # la palabra de la rama, no su clave («hit», «rerun»)
        text = f"{words.branch_short[step.branch]} · {words.branches[step.branch]}"
        return text, words.branch_log.get(step.branch, "")
    return _no_branch(step, words), ""


def branch_text(step):
    """La rama en texto plano, con las palabras del log entre comillas."""
    text, log = branch_parts(step)
    return f"{text} (en el log: «{log}»)" if log else text


def _no_branch(step, words):
    end = ending(step.run) if step.action == "resume" and step.run else None
    if end and end.kind == SIGNAL:  # una señal de verdad, no algo que la reanudación no pudo leer
        return f"ninguna: la reanudación murió por {end.signal} antes de reconciliar"
    if end and end.kind != DONE:
        return f"ninguna: la reanudación no pudo leer {words.unread}"
    if step.action == "resume" and step.run:
        return "ninguna: el flujo ya había terminado, no quedaba ningún paso abierto"
    return "todavía no se reanudó"


def copies_text(step):
    """Cuántas veces quedó el reporte en disco: con la lección, cuántas veces corrió write_report; con la
    escritura idempotente del motor, un paso repetido no agrega copias, así que se cuentan copias."""
    title, one, many = get(step.variant).words.copies
    return title, plural(step.disk.report_copies, one, many)


def twice_warning(step):
    """El aviso de que write_report corrió más de una vez ('' si no pasó)."""
    copies = step.disk.report_copies
    if copies < 2:
        return ""
    why = get(step.variant).twice_why
    return f"⚠ report.txt tiene {copies} copias: ¡write_report se ejecutó {times(copies)}!{why}"


def summary_text(step):
    """El resumen determinista del último paso, en texto plano."""
    crash = (
        f"{describe_label(step.label, step.variant)} ({CRASH_VAR}={step.label})" if step.label else "ninguno"
    )
    lines = [
        f"Agente: {step.agent}",
        f"Variante: {get(step.variant).label} · punto de caída: {crash}",
        f"Paso: {ACTIONS[step.action]} · {step.message}",
    ]
    if step.run:
        lines += ["", transcript(step)]
    lines += ["", f"En disco ({step.workdir}):", str(step.disk)]
    lines.append("{}: {}".format(*copies_text(step)))
    lines.append(f"{branch_title(step)}: {branch_text(step)}")
    warning = twice_warning(step)
    return "\n".join(lines + ([warning] if warning else []))


# —— Los paneles del widget ——


def status_html(step):
    return f"<b>{ACTIONS[step.action]}</b>: {html.escape(step.message)}"


def history_line(step):
    """Una línea de la historia (su número lo pone la lista): qué se pulsó y qué pasó."""
    what = ACTIONS[step.action]
    if step.action == "run":
        what += f" · {describe_label(step.label, step.variant)} · {get(step.variant).label}"
    return f"{what} → {step.message}"


def history_html(steps):
    """Los últimos pasos, el más reciente al final. El número de cada paso va en el texto (no en la
    viñeta de la lista, que se corta pasado el 99)."""
    if not steps:
        return "<p class='cl-muted'>Todavía no diste ningún paso.</p>"
    shown = steps[-HISTORY_SHOWN:]
    more = len(steps) - len(shown)
    head = f"<p class='cl-muted'>(y {plural(more, 'paso anterior', 'pasos anteriores')})</p>" if more else ""
    items = "".join(
        f"<li><span class='cl-n'>{s.number}.</span> {html.escape(history_line(s))}</li>" for s in shown
    )
    return f"{head}<ol class='cl-history'>{items}</ol>"


def log_html(step):
    """El log del último proceso, como en la terminal; las líneas de stderr marcadas con ✗."""
    if step is None:
        return "<p class='cl-muted'>Todavía no se lanzó ningún proceso.</p>"
    err = set(without_paths(step.run.stderr).splitlines())
    rows = (
        f"<span class='cl-err'>✗ {html.escape(line)}</span>" if line in err else html.escape(line)
        for line in transcript(step).splitlines()
    )
    head = f"Log del paso {step.number} ({ACTIONS[step.action]}, un proceso aparte)"
    return f"<div class='cl-caption'>{head}</div><pre class='cl-log'>" + "\n".join(rows) + "</pre>"


def disk_html(step):
    """El panel «qué hay en disco»: tabla, veces que corrió write_report, rama y aviso."""
    warning = twice_warning(step)
    warn = f"<div class='cl-warn' role='alert'>{html.escape(warning)}</div>" if warning else ""
    text, log = branch_parts(step)
    # Las palabras del log, en letra de código: son las de la línea [resume][reconcile].
    said = f" (en el log: <code>{html.escape(log)}</code>)" if log else ""
    branch = f"<div class='cl-branch'><b>{branch_title(step)}:</b> {html.escape(text)}{said}</div>"
    copies, count = copies_text(step)
    return (
        f"<div class='cl-caption'>En disco (<code>{html.escape(step.workdir)}</code>)</div>"
        f"<div class='cl-scroll'>{step.disk._repr_html_()}</div>"
        f"<div>{copies}: <b>{count}</b></div>"
        f"{branch}{warn}"
    )


def preview_html(timeline, chosen, variant):
    """Lo que se guarda en el notebook junto al widget (GitHub, nbviewer, un notebook sin kernel o uno
    guardado muestran esto): el dibujo del último estado y una línea que dice que hay que ejecutar la
    celda. Sin JavaScript ni hoja de estilos: HTML que un notebook sin confianza deja pasar."""
    turns = "".join(_preview_turn(turn, timeline, chosen, variant) for turn in shown_turns(timeline))
    return (
        f"<div class='cl-preview'><p><b>Laboratorio de caídas</b> · {html.escape(PREVIEW_LINE)}</p>"
        f"{turns}<p>{html.escape(LEGEND)}</p></div>"
    )


def _preview_turn(turn, timeline, chosen, variant):
    """Un turno: su nombre y sus pasos, una imagen chica cada uno (con su texto alternativo) que pasa a
    la línea siguiente en vez de achicarse, así la letra queda a su tamaño a cualquier ancho. Los pasos
    van de a dos en un bloque en línea: como el laboratorio vivo, cuatro, dos o uno por línea (donde se
    quitan los estilos, como en GitHub, siguen pasando de línea uno por uno)."""
    images = [
        f'<img alt="{html.escape(step_alt(turn, step, timeline, chosen, variant), quote=True)}" '
        f'src="{_svg_image(step_svg(turn, step, timeline, chosen, variant))}"/>'
        for step in range(len(STEP_KINDS))
    ]
    pairs = "".join(
        f"<span style='display:inline-block'>{''.join(images[i : i + 2])}</span>"
        for i in range(0, len(images), 2)
    )
    return f"<p><b>turno {turn.number}</b> · {html.escape(turn.tool)}<br/>{pairs}</p>"


def _svg_image(svg):
    """El SVG como imagen (data:), con fondo claro propio: un notebook sin confianza limpia el SVG en
    línea del HTML guardado, pero deja una imagen; y una imagen no ve el tema de la página."""
    svg = svg.replace("<style>", "<rect width='100%' height='100%' fill='#ffffff'/><style>", 1)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")

"""El laboratorio de caídas: elige dónde muere el proceso y mira qué dice el disco y qué hace --resume.

    lab = CrashLab(workdir="_trabajo/laboratorio")
    lab                      # el widget (en JupyterLab, VS Code o Colab)
    lab.choose(label="after-tool:3", variant="dos-puntos")
    lab.run()                # proceso nuevo con CRASH_AFTER: muere con código 137
    lab.resume()             # proceso nuevo con --resume
    print(lab.summary())     # resumen determinista del último paso

Cada paso lanza el agente en un proceso aparte (harness.runner.run_agent_process): el que la lección
exporta a ``_trabajo/agent.py`` (relativo a la carpeta del notebook), u otro que se le pase.
El agente nunca importa este módulo: ipywidgets queda fuera de su camino.
"""

import html
import os
import subprocess

import ipywidgets as w

from harness.crash_lab import view
from harness.disk_state import CHECKPOINT_FILE, EFFECTS_FILE, TMP_FILES, read_disk_state
from harness.errors import HarnessError
from harness.runner import run_agent_process
from harness.tools import NOTES_PATH, REPORT_PATH

NOTEBOOK_AGENT = os.path.join("_trabajo", "agent.py")
# Los archivos que deja una corrida: Reiniciar borra solo estos, nunca la carpeta entera.
LAB_FILES = (CHECKPOINT_FILE, EFFECTS_FILE, REPORT_PATH, NOTES_PATH, *TMP_FILES)
# El JSON cortado de la lección: un punto de control escrito a medias.
TRUNCATED_CHECKPOINT = '{"version":1,"turns":3,"pendingT'
DEFAULT_WORKDIR = os.path.join("_trabajo", "laboratorio")
PLAIN_FALLBACK = (
    "Laboratorio de caídas (widget). Si no lo ves, abre el notebook en JupyterLab, o usa "
    "lab.choose(...), lab.run(), lab.resume() y print(lab.summary())."
)


def agent_name(path):
    """Qué agente corre, sin rutas absolutas (la salida guardada de un notebook no las admite)."""
    real = os.path.realpath(path)
    if os.path.basename(os.path.dirname(real)) + os.sep + os.path.basename(real) == NOTEBOOK_AGENT:
        return f"agente armado en el notebook ({NOTEBOOK_AGENT})"
    return f"agente {os.path.basename(path)}"


class CrashLab:
    """El laboratorio: una API de Python (choose/run/resume/reset) y un widget que la usa."""

    def __init__(self, workdir=DEFAULT_WORKDIR, agent=None):
        self.workdir = os.fspath(workdir)
        self._workdir_abs = os.path.abspath(self.workdir)
        # La carpeta del notebook, fijada al crear el laboratorio: ahí busca _trabajo/agent.py.
        self._notebook_agent = os.path.abspath(NOTEBOOK_AGENT)
        self._agent = agent
        self._busy = False
        self._build_widget()
        self.last = self._step("ready", None, "elige un punto de caída y pulsa Ejecutar.")
        self._show(self.last)

    # —— La API ——

    @property
    def agent(self):
        """El agente que se fijó al crear el laboratorio, o el que exportó la lección."""
        path = os.path.abspath(self._agent) if self._agent else self._notebook_agent
        if not os.path.exists(path):
            raise HarnessError(
                f"No está {NOTEBOOK_AGENT}: ejecuta antes la celda de export_agent de la lección (o pásale "
                "al laboratorio otro agente con CrashLab(agent=...))."
            )
        return path

    @property
    def label(self):
        return self.point.value

    @property
    def variant(self):
        return self.variant_picker.value

    def choose(self, label=view.NO_CRASH, variant="dos-puntos"):
        """Elige el punto de caída (``"after-tool:3"``, o ``""`` sin caída) y la variante."""
        if variant not in view.VARIANTS:
            raise ValueError(f"Variante desconocida: {variant}. Usa una de: {', '.join(view.VARIANTS)}.")
        if (label or view.NO_CRASH) not in view.crash_labels():
            raise ValueError(f"Etiqueta desconocida: {label}. Usa <tipo>:<turno> con turno 1, 2 o 3.")
        self.variant_picker.value = variant
        self.point.value = label or view.NO_CRASH

    def run(self):
        """Corrida nueva, en un proceso aparte, que muere en el punto elegido."""
        note = view.missing_note(self.label, self.variant)
        if note:
            return self._finish(self._step("run", None, note))
        return self._launch("run", resume=False, crash_after=self.label or None)

    def resume(self):
        """``--resume`` en un proceso nuevo, que solo tiene lo que quedó en disco."""
        return self._launch("resume", resume=True, crash_after=None)

    def reset(self):
        """Borra los archivos del laboratorio: la próxima corrida empieza de cero."""
        for name in LAB_FILES:
            path = os.path.join(self._workdir_abs, name)
            if os.path.isfile(path):
                os.remove(path)
        return self._finish(self._step("reset", None, "se borraron los archivos del laboratorio."))

    def cut_checkpoint(self):
        """Deja checkpoint.json cortado a medio escribir, como el ejemplo de la lección."""
        os.makedirs(self._workdir_abs, exist_ok=True)
        with open(os.path.join(self._workdir_abs, CHECKPOINT_FILE), "w", encoding="utf-8") as f:
            f.write(TRUNCATED_CHECKPOINT)
        return self._finish(self._step("cut", None, f"checkpoint.json ahora dice {TRUNCATED_CHECKPOINT}"))

    def summary(self):
        """El último paso en texto plano, siempre igual para la misma elección."""
        return view.summary_text(self.last)

    # —— Lanzar procesos y registrar pasos ——

    def _launch(self, action, resume, crash_after):
        if self._busy:  # un segundo clic mientras corre un proceso no lanza otro
            return self.last
        self._set_busy(True)
        try:
            variant = None if self.variant == "dos-puntos" else self.variant
            try:
                os.makedirs(self._workdir_abs, exist_ok=True)
                run = run_agent_process(
                    self._workdir_abs,
                    resume=resume,
                    crash_after=crash_after,
                    variant=variant,
                    agent=self.agent,
                )
            except (OSError, subprocess.SubprocessError) as err:
                return self._finish(self._step(action, None, f"No se pudo lanzar el agente: {err}"))
            return self._finish(self._step(action, run, self._outcome(action, run)))
        finally:
            self._set_busy(False)

    def _outcome(self, action, run):
        """Qué pasó con el proceso, en una frase."""
        if run.killed:
            return f"el proceso murió en {self.label} (código de salida 137, caída simulada)."
        if run.returncode == 0:
            done = "la reanudación terminó" if action == "resume" else "la corrida terminó sin caerse"
            return f"{done} (código de salida 0).{self._surprise(action, run)}"
        first = (run.stderr.strip().splitlines() or ["sin mensaje de error"])[-1]
        return f"el agente terminó con código {run.returncode}: {first}"

    def _surprise(self, action, run):
        """Un aviso si el agente no hizo lo que se le pidió (p. ej. un agente del notebook a medio armar)."""
        if self.variant == "solo-b" and "[save A]" in run.stdout:
            return " Ojo: este agente no implementa AGENT_VARIANT=solo-b (guardó el punto A)."
        if action == "run" and self.label:
            return f" Ojo: la caída {self.label} nunca ocurrió: ¿este agente llama a crash_point ahí?"
        return ""

    def _step(self, action, run, message):
        return view.LabStep(
            action,
            self.label,
            self.variant,
            agent_name(self.agent),
            self.workdir,
            run,
            read_disk_state(self._workdir_abs),
            message,
        )

    def _finish(self, step):
        self.last = step
        self._show(step)
        return step

    # —— El widget ——

    def _build_widget(self):
        self.header = w.HTML()
        self.variant_picker = w.ToggleButtons(
            options=[(text, key) for key, text in view.VARIANTS.items()], description="Variante:"
        )
        self.point = w.Dropdown(
            options=self._point_options("dos-puntos"),
            description="Caída en:",
            layout=w.Layout(width="max-content"),
            style={"description_width": "initial"},
        )
        self.picture = w.HTML()
        self.run_button = w.Button(description="Ejecutar", button_style="danger", icon="bolt")
        self.resume_button = w.Button(description="Reanudar", button_style="success", icon="play")
        self.reset_button = w.Button(description="Reiniciar", icon="trash")
        self.cut_button = w.Button(
            description="Cortar checkpoint.json", icon="cut", layout=w.Layout(width="auto")
        )
        self.status = w.HTML()
        self.log_view = w.HTML(layout=w.Layout(width="50%"))
        self.disk_view = w.HTML(layout=w.Layout(width="50%"))
        for button, action in (
            (self.run_button, self.run),
            (self.resume_button, self.resume),
            (self.reset_button, self.reset),
            (self.cut_button, self.cut_checkpoint),
        ):
            button.on_click(lambda _, action=action: self._click(action))
        self.variant_picker.observe(self._on_variant, names="value")
        self.point.observe(lambda _: self._draw_choice(), names="value")
        self.buttons = (self.run_button, self.resume_button, self.reset_button, self.cut_button)
        self.widget = w.VBox(
            [
                self.header,
                self.variant_picker,
                self.point,
                self.picture,
                w.HBox(list(self.buttons)),
                self.status,
                w.HBox(
                    [self.log_view, self.disk_view],
                    layout=w.Layout(grid_gap="12px"),
                ),
            ]
        )
        self.widget.add_class("laboratorio-de-caidas")
        self._draw_choice()

    def _click(self, action):
        """Un botón nunca muestra una traza: un problema del disco se cuenta en una línea."""
        try:
            action()
        except OSError as err:
            self.status.value = f"<b>No se pudo</b>: {html.escape(str(err))}"

    @staticmethod
    def _point_options(variant):
        return [(view.describe_label(label, variant), label) for label in view.crash_labels()]

    def _on_variant(self, change):
        label = self.point.value
        self.point.options = self._point_options(change["new"])
        self.point.value = label
        self._draw_choice()

    def _draw_choice(self):
        """El dibujo y la explicación de la elección actual; Ejecutar solo si la caída existe."""
        note = view.missing_note(self.label, self.variant)
        self.picture.value = (
            f"<div>{view.turn_svg(self.label, self.variant)}</div>"
            f"<div style='font-size:90%;color:#555'>{view.PICTURE_LEGEND}</div>"
            + (f"<div style='color:#b35c00'>{note}</div>" if note else "")
        )
        self.run_button.disabled = self._busy or bool(note)

    def _set_busy(self, busy):
        self._busy = busy
        for button in self.buttons:
            button.disabled = busy
        if busy:
            self.status.value = "<i>Corriendo el agente en un proceso aparte…</i>"
        else:
            self._draw_choice()

    def _show(self, step):
        self.header.value = (
            f"<h3 style='margin:4px 0'>Laboratorio de caídas</h3><div>Corre el {step.agent} en un "
            f"proceso aparte · carpeta de trabajo <code>{html.escape(step.workdir)}</code></div>"
        )
        self.status.value = f"<b>{view.ACTIONS[step.action]}</b>: {html.escape(step.message)}"
        self.log_view.value = view.log_html(step)
        self.disk_view.value = view.disk_html(step)

    def _repr_mimebundle_(self, **kwargs):
        # El texto plano fijo mantiene estable la salida guardada (nbval ignora el id del widget).
        bundle = self.widget._repr_mimebundle_(**kwargs)
        return {**bundle, "text/plain": PLAIN_FALLBACK}

"""El laboratorio de caídas: elige dónde muere el proceso y mira qué dice el disco y qué hace --resume.

    lab = CrashLab(workdir="_trabajo/laboratorio", agent=AGENT)
    lab                      # el widget (JupyterLab, Notebook 7, VS Code o Colab)
    lab.choose(label="after-tool:3", variant="dos-puntos")
    lab.run()                # proceso nuevo con CRASH_AFTER: muere con código 137
    lab.resume()             # proceso nuevo con --resume
    print(lab.summary())     # resumen determinista del último paso

Cada paso lanza el agente en un proceso aparte (harness.runs.launcher.run_agent_process). La página
(``static/crash_lab.js``, un anywidget) bloquea los controles en cuanto se pulsa un botón, así que un
doble clic lanza un solo proceso; además cada pedido lleva el número de la pantalla en que se hizo y el
kernel descarta uno hecho sobre una pantalla vieja. El agente nunca importa este módulo.

Las teclas sin Ctrl ni Cmd pulsadas en la página quedan en ella (JupyterLab y Notebook 7 no las toman
como atajos); las combinaciones con Ctrl o Cmd (guardar, la paleta de comandos) y Mayús+Enter (ejecutar
la celda) llegan al notebook. Tras una acción con el teclado el foco vuelve al control que actuó o, si
se apagó, al siguiente activo; tras un clic, a la celda (``view.KEYBOARD_HELP``). Al guardar el
notebook, la página guarda también el estado del
laboratorio: abierto otra vez con un kernel nuevo, se ve su último estado con los controles apagados y
una línea que pide ejecutar la celda (la página saluda al dibujarse y solo un kernel vivo contesta);
sin kernel, se ve la vista previa guardada (``view.preview_html``).

El widget nace la primera vez que se muestra el laboratorio (uno que solo se usa desde Python no deja
ninguno en la página), y al mostrarse cierra el que había mostrado antes la misma celda: después de
correrla seis veces, la página tiene un laboratorio, no seis, y el notebook guardado también.
"""

import os
import pathlib
import re

import anywidget
import traitlets

from harness.contract import CHECKPOINT_FILE
from harness.crash_lab import variants, view
from harness.crash_lab.ending import CRASH, DONE, SIGNAL, ending
from harness.crash_lab.picture import HOW_TO_CHOOSE, LEGEND, turn_svg
from harness.crash_lab.shown import shown_path
from harness.crash_lab.variants import describe_label, exists_in, missing_note
from harness.crash_lab.words import ACTIONS, NO_CRASH, crash_labels
from harness.errors import HarnessError
from harness.runs.launcher import RunTimeoutError, run_agent_process
from harness.scenario import TOOL, label

STATIC = pathlib.Path(__file__).parent / "static"
NOTEBOOK_AGENT = os.path.join("_trabajo", "agent.py")
# La lección (también en harness.notebook.exercise_feedback.LESSON): importar ese módulo en el kernel rompe la
# vuelta del widget al recargar la página con el kernel vivo («model not found»), así que no se importa.
LESSON = "leccion_6_puntos_de_control.ipynb"
PRODUCTION = "de_la_leccion_a_produccion.ipynb"  # con la lección, el agente de referencia
# El encabezado que harness.notebook.export pone en cada agente armado, y el notebook que nombra el del taller.
GENERATED = re.compile(r"# GENERADO desde (?P<source>.+?): no lo edites a mano\.")
TALLER_SOURCE = "tu taller"
# El JSON cortado de la lección: un punto de control escrito a medias.
TRUNCATED_CHECKPOINT = '{"version":1,"turns":3,"pendingT'
DEFAULT_WORKDIR = os.path.join("_trabajo", "laboratorio")
DEFAULT_LABEL = label(TOOL, 3)  # el caso central de la lección: write_report sin anotar
PLAIN_FALLBACK = (
    "Laboratorio de caídas (widget). Ejecuta la celda en JupyterLab o Notebook 7 para usarlo, o usa "
    "lab.choose(...), lab.run(), lab.resume() y print(lab.summary())."
)
# Los laboratorios mostrados, por la celda que los mostró (o por su carpeta, si el notebook no la
# dice): {celda: (la ejecución que los mostró, [laboratorios])}.
_SHOWN = {}
OUTSIDE_CHANGE = (
    "la carpeta cambió fuera de este laboratorio (¿otro notebook usa la misma carpeta?): el dibujo "
    "vuelve a empezar con lo que hay en disco."
)


def agent_name(path):
    """Qué agente corre, dicho para quien estudia: tu agente (el del taller), el de la lección, el de
    referencia (la lección y «De la lección a producción») o el de una variante; sin rutas absolutas (la salida guardada de un notebook no las admite)."""
    named = variants.agent_name_of(path)
    if named:
        return named
    shown, source = shown_path(path), generated_from(path)
    if source and source.startswith(TALLER_SOURCE):
        return f"tu agente ({shown}, armado en {source})"
    real = os.path.realpath(path)
    from_notebook = (
        os.path.basename(os.path.dirname(real)) + os.sep + os.path.basename(real) == NOTEBOOK_AGENT
    )
    notebooks = {os.path.basename(part) for part in (source or "").split(" y ")}
    if PRODUCTION in notebooks:
        return f"agente de referencia ({shown})"
    if LESSON in notebooks or (not source and from_notebook):
        return f"agente de la lección ({shown})"
    return f"agente {shown}"


def generated_from(path):
    """De qué notebook se armó el agente, según su encabezado (harness.notebook.export), o None."""
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
    except (OSError, UnicodeDecodeError):
        return None
    found = GENERATED.match(first)
    return found["source"] if found else None


def _running_cell():
    """(la celda que se está ejecutando, el id de esta ejecución): JupyterLab y Notebook 7 mandan el id
    de la celda en cada pedido. (None, None) fuera de un kernel o si el notebook no lo manda."""
    from IPython import get_ipython  # solo dentro de un kernel

    kernel = getattr(get_ipython(), "kernel", None)
    parent = (kernel.get_parent() if kernel else None) or {}
    return parent.get("metadata", {}).get("cellId"), parent.get("header", {}).get("msg_id")


def _replace_shown(lab):
    """Anota que ``lab`` se muestra y cierra los que mostró su celda en una ejecución anterior (dos
    laboratorios mostrados por la misma ejecución quedan los dos)."""
    cell, run = _running_cell()
    key = cell or lab._workdir_abs
    before, labs = _SHOWN.get(key, (None, []))
    if run is None or before != run:
        for old in labs:
            if old is not lab:
                old.close()
        labs = []
    _SHOWN[key] = (run, [*labs, lab])


def with_article(name):
    """«el agente de la lección (…)», pero «tu agente (…)»: la frase del encabezado del laboratorio."""
    return name if name.startswith("tu ") else f"el {name}"


class LabWidget(anywidget.AnyWidget):
    """La página del laboratorio: dibuja ``view`` y manda cada clic al kernel como un mensaje."""

    _esm = STATIC / "crash_lab.js"
    _css = STATIC / "crash_lab.css"
    view = traitlets.Dict().tag(sync=True)


class CrashLab:
    """El laboratorio: una API de Python (choose/run/resume/reset) y un widget que la usa."""

    def __init__(self, workdir=DEFAULT_WORKDIR, agent=None):
        self.workdir = os.fspath(workdir)
        self._workdir_abs = os.path.abspath(self.workdir)
        # La carpeta del notebook, fijada al crear el laboratorio: ahí busca _trabajo/agent.py.
        self._agent = os.path.abspath(agent) if agent else os.path.abspath(NOTEBOOK_AGENT)
        self.label, self.variant = DEFAULT_LABEL, "dos-puntos"
        self.history = []  # los pasos dados, en orden
        self._story = []  # [(acción, AgentRun)] desde el último Ejecutar
        self._story_variant = None  # la variante que dejó el punto de control de esta historia
        self._story_label = NO_CRASH
        self._seen = None  # cómo estaba la carpeta después del último paso
        self._screens = 0  # cuántas pantallas se mandaron a la página: el número de cada pedido
        self._widget = None  # nace al mostrarse (``widget``)
        self.last = self._step("ready", None, "elige un punto de caída y pulsa Ejecutar.")

    @property
    def widget(self):
        """La página del laboratorio, creada la primera vez que se pide. Cierra la que mostró antes la
        misma celda (o, sin celda, la de la misma carpeta): su modelo deja la página y el notebook."""
        if self._widget is None:
            _replace_shown(self)
            self._widget = LabWidget()
            self._widget.on_msg(self._on_message)
            self._publish()
        return self._widget

    def close(self):
        """Cierra la página del laboratorio (la API de Python sigue andando; mostrarlo otra vez la rehace)."""
        if self._widget is not None:
            self._widget.close()
            self._widget = None

    # —— La API ——

    @property
    def agent(self):
        """El agente que se le pasó al laboratorio (o el que exportó la lección a _trabajo/agent.py)."""
        if not os.path.exists(self._agent):
            raise HarnessError(
                f"No está {agent_name(self._agent)}: ejecuta antes la celda de export_agent de la lección "
                "(o pásale al laboratorio otro agente con CrashLab(agent=...))."
            )
        return self._agent

    def cut_blocker(self, variant=None):
        """Por qué cortar checkpoint.json no tiene sentido con esta variante ('' si lo tiene)."""
        return variants.get(variant or self.variant).cut_blocker

    def choose(self, label=NO_CRASH, variant="dos-puntos"):
        """Elige el punto de caída (``"after-tool:3"``, o ``""`` sin caída) y la variante del próximo Ejecutar."""
        variants.get(variant)  # un ValueError si no está registrada, que dice qué hacer
        if (label or NO_CRASH) not in crash_labels():
            raise ValueError(f"Etiqueta desconocida: {label}. Usa <tipo>:<turno> con turno 1, 2 o 3.")
        self.label, self.variant = label or NO_CRASH, variant
        self._publish()

    def run(self):
        """Corrida nueva, en un proceso aparte, que muere en el punto elegido."""
        note = missing_note(self.label, self.variant)
        if note:
            return self._finish(self._step("run", None, note))
        self._notice_outside_change()
        self._story, self._story_variant, self._story_label = [], self.variant, self.label
        return self._launch("run", resume=False, crash_after=self.label or None)

    def resume(self):
        """``--resume`` en un proceso nuevo, con la variante que dejó el punto de control."""
        self._notice_outside_change()
        return self._launch("resume", resume=True, crash_after=None)

    def reset(self):
        """Borra los archivos del laboratorio: la próxima corrida empieza de cero."""
        for name in variants.lab_files():  # los de todas las variantes: nunca la carpeta entera
            path = os.path.join(self._workdir_abs, name)
            if os.path.isfile(path):
                os.remove(path)
        self._story, self._story_variant = [], None
        return self._finish(self._step("reset", None, "se borraron los archivos del laboratorio."))

    def cut_checkpoint(self):
        """Deja checkpoint.json cortado a medio escribir, como el ejemplo de la lección."""
        if self.cut_blocker():
            return self._finish(self._step("ready", None, self.cut_blocker()))
        os.makedirs(self._workdir_abs, exist_ok=True)
        with open(os.path.join(self._workdir_abs, CHECKPOINT_FILE), "w", encoding="utf-8") as f:
            f.write(TRUNCATED_CHECKPOINT)
        return self._finish(self._step("cut", None, f"{CHECKPOINT_FILE} ahora dice {TRUNCATED_CHECKPOINT}"))

    def summary(self):
        """El último paso en texto plano, siempre igual para la misma elección."""
        return view.summary_text(self.last)

    def resume_blocker(self):
        """Por qué Reanudar no tiene sentido ahora ('' si lo tiene)."""
        state = variants.get(self._run_variant).resume_file
        if not os.path.exists(os.path.join(self._workdir_abs, state)):
            if self._story and self.last.action == "run":  # recién se ejecutó y no lo escribió
                return f"{self._why_nothing_written(state)}: no hay nada que reanudar. {self._what_next()}"
            return f"No hay {state} en la carpeta: no hay nada que reanudar. Pulsa Ejecutar primero."
        if self._story and self._story[-1][1].returncode == 0 and self.last.action in ("run", "resume"):
            return "La última corrida llegó a [done]: no queda nada que reanudar. Elige una caída y pulsa Ejecutar."
        return ""

    def _why_nothing_written(self, state):
        """Por qué la corrida recién ejecutada no dejó ``state``, según cómo terminó (no según la caída
        elegida: un agente que falla antes de llegar a ella no «murió en» ella)."""
        end = ending(self._story[-1][1])
        if end.kind == CRASH:
            return f"La corrida murió en «{describe_label(end.label, self._run_variant)}», antes de escribir {state}"
        if end.kind == SIGNAL:
            return f"La corrida murió por {end.signal} (código {end.code}) antes de escribir {state}"
        if end.kind == DONE:
            return f"La corrida terminó (código 0) sin escribir {state}"
        return f"La corrida terminó con un error (código {end.code}) antes de escribir {state}"

    def _what_next(self):
        if ending(self._story[-1][1]).kind == CRASH:
            return "Elige una caída más adelante y vuelve a Ejecutar."
        return "Mira el log del paso y vuelve a Ejecutar."

    # —— Lanzar procesos y registrar pasos ——

    @property
    def _run_variant(self):
        return self._story_variant or self.variant

    def _agent_path(self, variant):
        """El agente que corre con ``variant``: el suyo si lo tiene, el del laboratorio si no."""
        return variants.get(variant).agent or self._agent

    def _launch(self, action, resume, crash_after):
        variant = variants.get(self._run_variant)
        try:
            os.makedirs(self._workdir_abs, exist_ok=True)
            run = run_agent_process(
                self._workdir_abs,
                resume=resume,
                crash_after=crash_after,
                variant=variant.agent_variant,
                agent=variant.agent or self.agent,
                env=variant.env,
            )
        except (OSError, RunTimeoutError) as err:
            return self._finish(self._step(action, None, f"No se pudo lanzar el agente: {err}"))
        self._story.append((action, run))
        return self._finish(self._step(action, run, self._outcome(action, run)))

    def _outcome(self, action, run):
        """Qué pasó con el proceso, en una frase, dicho desde su código de salida."""
        end = ending(run)
        if end.kind == CRASH:
            where = describe_label(end.label, self._run_variant)
            return f"el proceso murió en «{where}» (código de salida 137, caída simulada)."
        if end.kind == SIGNAL:
            return (
                f"el proceso murió por {end.signal} (código de salida {end.code}): una señal de verdad, "
                "no una caída simulada del laboratorio."
            )
        if end.kind == DONE:
            done = "la reanudación terminó" if action == "resume" else "la corrida terminó sin caerse"
            return f"{done} (código de salida 0).{self._surprise(action, run)}"
        return f"el agente terminó con un error (código de salida {end.code}), no con una caída: {end.line}"

    def _surprise(self, action, run):
        """Un aviso si el agente no hizo lo que se le pidió (p. ej. un agente del notebook a medio armar)."""
        marker, warning = variants.get(self._run_variant).not_followed or (None, "")
        if marker and marker in run.stdout:
            return warning
        if action == "run" and self._story_label:
            return (
                f" Ojo: la caída «{describe_label(self._story_label, self._run_variant)}» nunca ocurrió: ¿este agente llama "
                "a crash_point ahí?"
            )
        return ""

    def _step(self, action, run, message):
        variant = self._run_variant if action in ("run", "resume") else self.variant
        return view.LabStep(
            action,
            self._story_label if action in ("run", "resume") else self.label,
            variant,
            agent_name(self._agent_path(variant)),
            self.workdir,
            run,
            variants.get(variant).read_state(self._workdir_abs),
            message,
            len(self.history) + 1,
        )

    def _finish(self, step):
        self.last = step
        self.history.append(step)
        self._seen = self._fingerprint()
        self._publish()
        return step

    def _fingerprint(self):
        """Cómo está la carpeta (tamaño y hora de cada archivo del laboratorio), para notar cambios ajenos."""
        marks = []
        for name in variants.lab_files():
            try:
                st = os.stat(os.path.join(self._workdir_abs, name))
            except OSError:
                continue
            marks.append((name, st.st_size, st.st_mtime_ns))
        return tuple(marks)

    def _notice_outside_change(self):
        """Si otro proceso (otro notebook) tocó la carpeta, la historia de este laboratorio ya no vale."""
        if self._seen is not None and self._fingerprint() != self._seen and self._story:
            self._story, self._story_variant = [], None
            self._finish(self._step("ready", None, OUTSIDE_CHANGE))

    # —— El widget ——

    def _timeline(self):
        variant = self._run_variant
        return variants.get(variant).build_timeline(variant, self._story, self.last.disk)

    def _publish(self):
        """Manda a la página todo lo que dibuja, en un solo mensaje (un clic, una actualización); sin
        página (todavía no se mostró), nada."""
        if self._widget is None:
            return
        processes = [s for s in self.history if s.run is not None]
        resume_blocker = self.resume_blocker()
        run_blocker = missing_note(self.label, self.variant)
        shown = self._story_variant
        self._screens += 1
        self._widget.view = {
            "ticket": self._screens,
            "model": self._widget.model_id,  # la página sabe así qué laboratorios muestra al guardar
            "header": (
                f"Corre {view.html.escape(with_article(agent_name(self._agent_path(self._run_variant))))} "
                f"en un proceso aparte · carpeta de trabajo <code>{view.html.escape(self.workdir)}</code>"
            ),
            "help": view.KEYBOARD_HELP,
            "variants": [(name, variants.get(name).label) for name in variants.names()],
            "variant": self.variant,
            "options": [
                [lab, describe_label(lab, self.variant), exists_in(lab, self.variant)]
                for lab in crash_labels()
            ],
            "label": self.label,
            "picture": turn_svg(self._timeline(), self.label, self.variant),
            "legend": f"{LEGEND} {HOW_TO_CHOOSE}",
            "story": (
                f"El dibujo muestra la corrida con «{variants.get(shown).label}» "
                f"({describe_label(self._story_label, shown)}); Reanudar usa esa misma variante."
                if shown
                else "El dibujo muestra los turnos antes de correr: pulsa Ejecutar."
            ),
            "run_blocker": run_blocker,
            "resume_blocker": resume_blocker,
            "cut_blocker": self.cut_blocker(),
            "status": view.status_html(self.last),
            "history": view.history_html(self.history),
            "log": view.log_html(processes[-1] if processes else None),
            "disk": view.disk_html(self.last),
        }

    def _on_message(self, _widget, content, _buffers):
        """Un clic de la página. Uno hecho sobre una pantalla vieja (un segundo clic que llegó mientras
        corría el primero) se descarta: el kernel no lanza un segundo proceso. «hello» lo manda cada
        vista al dibujarse y la respuesta le dice que hay un kernel detrás (sin cambiar la pantalla); una
        vista restaurada de un notebook guardado no la recibe y sigue pidiendo ejecutar la celda."""
        if not isinstance(content, dict):
            return
        if content.get("action") == "hello":
            return self.widget.send({"action": "hello"})
        if content.get("ticket") != self.widget.view.get("ticket"):
            return
        self.click(content.get("action"), content.get("label"), content.get("variant"))

    def click(self, action, label=None, variant=None):
        """Lo que hace cada control de la página; un problema se cuenta en una línea, sin traza."""
        try:
            if action == "choose":
                self.choose(label, variant)
            elif action == "resume" and self.resume_blocker():
                return  # el botón está apagado: un pedido así solo llega de una pantalla vieja
            elif action in ACTIONS and action != "ready":
                {"run": self.run, "resume": self.resume, "reset": self.reset, "cut": self.cut_checkpoint}[
                    action
                ]()
        except (OSError, ValueError, HarnessError) as err:
            self._finish(self._step("ready", None, f"No se pudo: {err}"))

    def _repr_mimebundle_(self, **kwargs):
        # La vista del widget, y para quien no la puede mostrar (GitHub, nbviewer, un notebook sin
        # correr) el dibujo en SVG con una línea que dice que hay que ejecutar la celda.
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["text/plain"] = PLAIN_FALLBACK
        data["text/html"] = view.preview_html(self._timeline(), self.label, self.variant)
        return bundle

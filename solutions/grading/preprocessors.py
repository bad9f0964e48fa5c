"""Dos pasos propios de ``nbgrader autograde`` (los registra ``nbgrader_config.py``).

- ``RestoreStructure`` (al sanear la entrega): rearma el notebook sobre el repartido. Las celdas
  bloqueadas y el texto vuelven tal como se repartieron; de cada celda de respuesta se toma solo su
  texto (o el esqueleto, si la borraron); las celdas que agregó la persona quedan donde estaban. Así
  borrar la preparación no deja sin nombres a lo demás, y borrar una respuesta con su prueba da 0 en
  esa pregunta y nada más.
- ``WarmExecute`` (al ejecutar): el ``Execute`` de nbgrader, que toma el kernel que ``grade_class``
  adelantó para esa carpeta (``ahead``), si lo hay.
- ``DisarmFolder`` (apenas termina la ejecución): deja en la carpeta de la entrega solo archivos
  comunes y carpetas, antes de que quien califica escriba ahí fuera del aislamiento (``sandbox.disarm``).
- ``JudgeAnswers`` (después de ejecutar): reemplaza la salida de cada celda de prueba por el
  veredicto de ``judge``, calculado fuera del kernel. nbgrader cuenta los puntos desde esa salida: un
  error es 0, un ``execute_result`` con un número es crédito parcial, lo demás es todo.
"""

import copy
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from queue import Empty

import nbformat
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import ensure_async, run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer, Unicode
from traitlets.utils.importstring import import_item

from solutions.grading import ahead, puntos, sandbox
from solutions.grading.judge import ANSWER_MARK, CHECKS, PARTIAL_MARK, AnswerError, PartlyRight, parse_answer
from solutions.grading.paths import NOTEBOOKS

# El error que queda en una celda que mató a su kernel.
DEAD_NOTE = (
    "el kernel murió mientras corría esta celda (¿os._exit, una falla fatal?); se reinició con la "
    "preparación del notebook y la calificación siguió en la celda siguiente"
)
# El error que queda en una celda que no terminó a tiempo ni se dejó interrumpir.
STUCK_NOTE = (
    "la celda no terminó a tiempo y no respondió a la interrupción (¿ignora SIGINT?); se mató su "
    "kernel, se reinició con la preparación del notebook y la calificación siguió en la celda siguiente"
)
# La línea que queda en una celda cuya salida se recortó.
CUT_NOTE = "quien califica descartó el resto de la salida de esta celda; caracteres guardados:"


def grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _is_answer(cell):
    return cell.metadata.get("nbgrader", {}).get("solution")


class RestoreStructure(NbGraderPreprocessor):
    released_directory = Unicode(NOTEBOOKS, help="dónde están los notebooks repartidos").tag(config=True)

    def released(self, notebook):
        return nbformat.read(os.path.join(self.released_directory, f"{notebook}.ipynb"), 4)

    def preprocess(self, nb, resources):
        released = self.released(resources["nbgrader"]["notebook"])
        known_ids = {cell.get("id") for cell in released.cells}
        answers, extras, anchor = {}, {}, None
        for cell in nb.cells:
            if _is_answer(cell) and grade_id(cell) not in answers:
                answers[grade_id(cell)] = cell
            elif cell.get("id") in known_ids or grade_id(cell):
                anchor = cell.get("id")
            else:
                extras.setdefault(anchor, []).append(cell)
        cells = extras.get(None, [])
        for cell in released.cells:
            restored = copy.deepcopy(cell)
            if _is_answer(cell) and grade_id(cell) in answers:
                restored.source = answers[grade_id(cell)].source
            cells += [restored, *extras.get(cell.get("id"), [])]
        nb.cells = cells
        return nb, resources


def verdict(cell, problem):
    """La salida de la celda de prueba: un error (0 puntos), una línea en stdout (todos) o, si la
    predicción acertó algunos datos (``PartlyRight``), la línea que nombra los equivocados (sin los
    valores medidos) y los puntos como ``execute_result``: nbgrader los lee como crédito parcial."""
    if problem is None:
        return [new_output("stream", name="stdout", text="✓ comprobado fuera de tu kernel\n")]
    if isinstance(problem, PartlyRight):
        points = problem.points(cell.metadata.nbgrader["points"])
        return [
            new_output("stream", name="stdout", text=f"{PARTIAL_MARK}{problem}\n"),
            new_output("execute_result", data={"text/plain": puntos.text(points)}, execution_count=None),
        ]
    return [new_output("error", ename="RespuestaIncorrecta", evalue=problem, traceback=[f"✗ {problem}"])]


def printed_answer(cell):
    """El JSON que la celda de prueba imprimió tras la marca (el último, si hay varios)."""
    text = "".join(
        o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout"
    )
    lines = [line for line in text.splitlines() if line.startswith(ANSWER_MARK)]
    if not lines:
        raise AnswerError("la celda de prueba no entregó ninguna respuesta (¿la celda de respuesta falló?)")
    return parse_answer(lines[-1][len(ANSWER_MARK) :])


def text_size(content):
    """Cuántos caracteres lleva un mensaje del kernel (sus textos, en cualquier nivel)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, dict):
        return sum(text_size(v) for v in content.values())
    if isinstance(content, list):
        return sum(text_size(v) for v in content)
    return 0


def _naming_the_limit(msg):
    """El mensaje de error del kernel con la frase que nombra el límite de la calificación que lo
    causó (``sandbox.limit_note``), si fue uno: «No space left on device» solo no dice que /dev/shm
    tiene 64 MiB."""
    content = msg["content"]
    note = sandbox.limit_note(f"{content.get('ename', '')}: {content.get('evalue', '')}")
    if note is None:
        return msg
    content = {**content, "evalue": f"{content.get('evalue', '')} {note}"}
    return {**msg, "content": {**content, "traceback": [*content.get("traceback", []), note]}}


class WarmExecute(Execute):
    output_budget = Integer(1 << 20, help="caracteres de salida que se guardan por celda").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._output_used = {}  # caracteres de salida recibidos, por celda
        return super().preprocess(nb, resources, km=km)

    def output(self, outs, msg, display_id, cell_index):
        """Una celda que imprime sin parar hasta su corte no llena la memoria de quien califica: de cada
        celda se guardan hasta ``output_budget`` caracteres y una línea que dice que se recortó. Los
        errores se guardan siempre: nbgrader cuenta los puntos desde ellos."""
        if msg["msg_type"] == "error":
            return super().output(outs, _naming_the_limit(msg), display_id, cell_index)
        used = self._output_used.get(cell_index, 0)
        self._output_used[cell_index] = used + text_size(msg["content"])
        if self._output_used[cell_index] <= self.output_budget:
            return super().output(outs, msg, display_id, cell_index)
        if used <= self.output_budget:  # el primer mensaje que no cabe: se dice una vez
            outs.append(new_output("stream", name="stderr", text=f"[{CUT_NOTE} {self.output_budget}]\n"))
        return None

    def preprocess_cell(self, cell, resources, index):
        """Una celda que mata a su kernel, o que no termina a tiempo y no se deja interrumpir, pierde su
        pregunta, no la entrega: queda con un error, el kernel se mata y se reinicia con la preparación
        y se sigue en la celda siguiente."""
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            ename, note = "KernelMuerto", DEAD_NOTE
        except CellTimeoutError:  # interrumpida, no volvió a estar libre (nbclient espera su aviso)
            ename, note = "CellTimeoutError", STUCK_NOTE
        cell.outputs.append(new_output("error", ename=ename, evalue=note, traceback=[note]))
        self._revive(index)
        return cell, resources

    def _revive(self, index):
        """Un kernel nuevo (otro administrador, el mismo aislamiento) con la preparación corrida: las
        celdas bloqueadas antes de la primera respuesta, en copias (sus salidas no se repiten). No se
        reinicia el muerto: su reinicio reusa el archivo de conexión, que pudo no sobrevivirle."""
        self.kc.stop_channels()
        run_sync(self.km.shutdown_kernel)(now=True)
        NotebookClient.create_kernel_manager(self)  # no el adelantado: ese es del notebook siguiente
        run_sync(self.async_start_new_kernel)()
        run_sync(self.async_start_new_kernel_client)()
        for position, cell in enumerate(self.nb.cells[:index]):
            if _is_answer(cell):
                break
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("locked"):
                self.execute_cell(copy.deepcopy(cell), position, store_history=False)

    @staticmethod
    def manager_class(config):
        """La clase de kernel configurada (la del aislamiento): la que ``preprocess`` usa. Al construir
        el paso, nbgrader la tapa con AsyncKernelManager; ``preprocess`` la vuelve a leer de ``config``."""
        sections = [s for s in ("WarmExecute", "Execute") if "kernel_manager_class" in config.get(s, {})]
        value = config[sections[0]]["kernel_manager_class"] if sections else AsyncKernelManager
        return import_item(value) if isinstance(value, str) else value

    def create_kernel_manager(self):
        """El kernel adelantado para la carpeta de este notebook, si lo hay; si no, uno nuevo."""
        folder = self.resources.get("metadata", {}).get("path") or os.getcwd()
        kernel = self.nb.metadata.get("kernelspec", {}).get("name")
        warm = ahead.take_kernel(self.kernel_manager_class, folder, kernel)
        if warm is None:
            return super().create_kernel_manager()
        self.km, self._warm_client = warm
        return self.km

    async def async_start_new_kernel_client(self):
        client = getattr(self, "_warm_client", None)
        if client is None:
            client = await super().async_start_new_kernel_client()
        else:  # conectado desde que el kernel arrancó: solo falta su respuesta
            self.kc, self._warm_client = client, None
            await self._answered(client)
            client.allow_stdin = False
        ahead.release()  # el kernel ya arrancó: lo adelantado ya no le quita núcleo
        return client

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    async def _answered(self, client):
        """Como ``wait_for_ready`` de jupyter_client (responde ``kernel_info`` y llegan avisos por IOPub),
        sin su pausa final de 0,2 s para vaciar IOPub: nbclient ya filtra cada aviso por su pedido."""
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            client.kernel_info()
            try:
                reply = await client.shell_channel.get_msg(timeout=1)
                await client.iopub_channel.get_msg(timeout=0.2)
            except Empty:
                if not await ensure_async(self.km.is_alive()):
                    raise RuntimeError("el kernel murió antes de responder") from None
                continue
            if reply["msg_type"] == "kernel_info_reply":
                return
        raise RuntimeError(f"el kernel no respondió en {self.startup_timeout} s")


class DisarmFolder(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        """El kernel de la entrega ya terminó: lo que dejó en su carpeta que lleve a otro lado se borra
        antes de que nbgrader escriba ahí el notebook calificado y cambie permisos."""
        folder = resources.get("metadata", {}).get("path") or os.getcwd()
        sandbox.disarm(folder)
        # Una carpeta con el nombre del notebook calificado haría fallar su escritura.
        where = os.path.join(folder, f"{resources['unique_key']}.ipynb")
        if os.path.isdir(where):
            shutil.rmtree(where)
        return nb, resources


class JudgeAnswers(NbGraderPreprocessor):
    timeout = Integer(30, help="segundos por corrida del código de la entrega").tag(config=True)

    def preprocess(self, nb, resources):
        notebook = resources["nbgrader"]["notebook"]
        checks = CHECKS.get(notebook, {})
        sources = {grade_id(c): c.source for c in nb.cells if grade_id(c)}
        judged = [cell for cell in nb.cells if grade_id(cell) in checks]
        # Quién entregó (la carpeta de la entrega) y la lista de la clase repartida: los momentos del Nivel 1.
        who = (resources["nbgrader"].get("student"), RestoreStructure(config=self.config).released_directory)
        # Cada comprobación corre sus propios procesos en su carpeta: van a la vez, no una tras otra.
        with ThreadPoolExecutor(max(1, len(judged))) as pool:
            futures = [self.verdict(pool, notebook, cell, checks, sources, who) for cell in judged]
            for cell, future in zip(judged, futures, strict=True):
                cell.outputs = verdict(cell, future.result())
        return nb, resources

    def verdict(self, pool, notebook, cell, checks, sources, who=()):
        """El Future del problema de la respuesta que comprueba ``cell`` (None si pasa): el
        adelantado para este mismo texto, o uno nuevo. ``who``: (estudiante, carpeta de lo repartido)."""
        test_id = grade_id(cell)
        kind, check = checks[test_id]
        try:
            answer = printed_answer(cell) if kind == "json" else sources[kind.split(":")[1]]
        except AnswerError as wrong:
            return pool.submit(str, wrong)
        if kind != "json":
            early = ahead.take_verdict((notebook, test_id, answer))
            if early is not None:
                return early
        return pool.submit(self.problem, check, answer, *who)

    def problem(self, check, answer, *who):
        """Lo que no pasa de ``answer`` (un texto, o ``PartlyRight`` si acertó en parte), o None. Las
        corridas van en una carpeta fuera del alcance del kernel de la entrega (que puede seguir vivo
        mientras tanto) y se borran al terminar."""
        with tempfile.TemporaryDirectory(prefix="calificacion-") as scratch:
            try:
                return check(answer, scratch, self.timeout, *who)
            except AnswerError as wrong:
                return str(wrong)

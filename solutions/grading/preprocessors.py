"""Dos pasos propios de ``nbgrader autograde`` (los registra ``nbgrader_config.py``).

- ``RestoreStructure`` (al sanear la entrega): rearma el notebook sobre el repartido. Las celdas
  bloqueadas y el texto vuelven tal como se repartieron; de cada celda de respuesta se toma solo su
  texto (o el esqueleto, si la borraron); las celdas que agregó la persona quedan donde estaban. Así
  borrar la preparación no deja sin nombres a lo demás, y borrar una respuesta con su prueba da 0 en
  esa pregunta y nada más.
- ``JudgeAnswers`` (después de ejecutar): reemplaza la salida de cada celda de prueba por el
  veredicto de ``judge``, calculado fuera del kernel. nbgrader cuenta los puntos desde esa salida.
"""

import copy
import os
from concurrent.futures import ThreadPoolExecutor

import nbformat
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from maintainer.paths import NOTEBOOKS
from solutions.grading.judge import ANSWER_MARK, CHECKS, AnswerError, parse_answer


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


class RestoreStructure(NbGraderPreprocessor):
    released_directory = Unicode(NOTEBOOKS, help="dónde están los notebooks repartidos").tag(config=True)

    def preprocess(self, nb, resources):
        name = f"{resources['nbgrader']['notebook']}.ipynb"
        released = nbformat.read(os.path.join(self.released_directory, name), 4)
        known_ids = {cell.get("id") for cell in released.cells}
        answers, extras, anchor = {}, {}, None
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("solution") and _grade_id(cell) not in answers:
                answers[_grade_id(cell)] = cell
            elif cell.get("id") in known_ids or _grade_id(cell):
                anchor = cell.get("id")
            else:
                extras.setdefault(anchor, []).append(cell)
        cells = extras.get(None, [])
        for cell in released.cells:
            restored = copy.deepcopy(cell)
            if cell.metadata.get("nbgrader", {}).get("solution") and _grade_id(cell) in answers:
                restored.source = answers[_grade_id(cell)].source
            cells += [restored, *extras.get(cell.get("id"), [])]
        nb.cells = cells
        return nb, resources


def verdict(cell, problem):
    """La salida de la celda de prueba: un error (0 puntos) o una línea en stdout (todos)."""
    if problem is None:
        return [new_output("stream", name="stdout", text="✓ comprobado fuera de tu kernel\n")]
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


class JudgeAnswers(NbGraderPreprocessor):
    timeout = Integer(30, help="segundos por corrida del código de la entrega").tag(config=True)

    def preprocess(self, nb, resources):
        checks = CHECKS.get(resources["nbgrader"]["notebook"], {})
        folder = resources["metadata"]["path"]
        sources = {_grade_id(c): c.source for c in nb.cells if _grade_id(c)}
        judged = [cell for cell in nb.cells if _grade_id(cell) in checks]
        # Cada comprobación corre sus propios procesos en su carpeta: van a la vez, no una tras otra.
        with ThreadPoolExecutor(max(1, len(judged))) as pool:
            problems = pool.map(lambda cell: self.judge(cell, checks, sources, folder), judged)
            for cell, problem in zip(judged, problems, strict=True):
                cell.outputs = verdict(cell, problem)
        return nb, resources

    def judge(self, cell, checks, sources, folder):
        """El problema de la respuesta que comprueba ``cell``, o None si pasa."""
        kind, check = checks[_grade_id(cell)]
        scratch = os.path.join(folder, "_trabajo", "calificacion", _grade_id(cell))
        try:
            answer = printed_answer(cell) if kind == "json" else sources[kind.split(":")[1]]
            check(answer, scratch, self.timeout)
        except AnswerError as wrong:
            return str(wrong)
        return None

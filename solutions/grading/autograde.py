"""El ``autograde`` de una entrega sin esperas evitables: el de ``grade_class``.

nbgrader califica los notebooks de una entrega uno tras otro: sanea uno (lo rearma y lo escribe),
lo vuelve a leer, arranca su kernel, lo ejecuta, lo juzga y guarda sus notas; después, el siguiente.
``AheadAutograde`` da los mismos pasos, con la misma configuración, pero al empezar la entrega:

- arranca el kernel aislado del primer notebook, que no ejecuta nada hasta su turno (``ahead``);
- mientras arranca, sanea todos los notebooks y guarda en memoria cada uno saneado: su ejecución
  parte de ahí, no de releer el archivo, que está en la carpeta donde escribe el código de la entrega;
- arranca los kernels de los demás notebooks (antes, le quitarían núcleo al primero);
- deja listas las comprobaciones que juzgan solo el texto de una respuesta (las del Nivel 2), que
  arrancan cuando el primer kernel está listo.

Los notebooks se ejecutan de a uno a propósito: el código de uno no corre mientras se juzga otro.
"""

import functools
import os

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.converters import Autograde

from solutions.grading import ahead, report
from solutions.grading.judge import CHECKS
from solutions.grading.preprocessors import JudgeAnswers, RestoreStructure, WarmExecute, grade_id


class AheadAutograde(Autograde):
    def init_assignment(self, assignment_id, student_id):
        super().init_assignment(assignment_id, student_id)
        # Un notebook que no se puede leer vale 0, como uno que falta, y el resto se califica
        # (``report.absent``); si no se puede leer ninguno, nbgrader dice por qué no pudo calificar.
        readable = [p for p in self.notebooks if report.missing_reason(p) is None]
        if readable and len(readable) < len(self.notebooks):
            self._zero([p for p in self.notebooks if p not in readable], assignment_id, student_id)
            self.notebooks = readable
        folder = self._format_dest(assignment_id, student_id)
        os.makedirs(folder, exist_ok=True)
        first, *others = self.notebooks
        self._start_kernel(folder, first)
        self._sanitized = {path: self._sanitize(path) for path in self.notebooks}
        # Los kernels de los demás, después de sanear: antes le quitarían núcleo al primero.
        for path in others:
            self._start_kernel(folder, path)

    def _zero(self, paths, assignment_id, student_id):
        """Lo que nbgrader hace con un notebook que falta: cada pregunta en 0, sin nota a mano pendiente."""
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            for path in paths:
                name = os.path.splitext(os.path.basename(path))[0]
                for grade in gb.find_submission_notebook(name, assignment_id, student_id).grades:
                    grade.auto_score, grade.needs_manual_grade = 0, False
            gb.db.commit()

    def _start_kernel(self, folder, path):
        released = RestoreStructure(config=self.config).released(os.path.splitext(os.path.basename(path))[0])
        kernel = released.metadata.get("kernelspec", {}).get("name")
        ahead.start_kernel(WarmExecute.manager_class(self.config), folder, kernel, self.config)

    def _sanitize(self, path):
        """La primera mitad del ``convert_single_notebook`` de nbgrader (sanear y escribir); devuelve
        el notebook saneado y deja listas las comprobaciones de su texto."""
        self._sanitizing = True
        self._init_preprocessors()
        resources = self.init_single_notebook_resources(path)
        output, resources = self.exporter.from_filename(path, resources=resources)
        self.write_single_notebook(output, resources)
        nb = nbformat.reads(output, as_version=4)
        self._judge_ahead(resources["nbgrader"]["notebook"], nb)
        return nb

    def _judge_ahead(self, notebook, nb):
        judge, sources = JudgeAnswers(config=self.config), {grade_id(c): c.source for c in nb.cells}
        for test_id, (kind, check) in CHECKS.get(notebook, {}).items():
            text = sources.get(kind.partition(":")[2])
            if kind.startswith("source:") and text is not None:
                ahead.plan_verdict((notebook, test_id, text), functools.partial(judge.problem, check, text))

    def convert_single_notebook(self, notebook_filename):
        """La segunda mitad (ejecutar, juzgar, guardar las notas), desde el notebook saneado en memoria."""
        nb = getattr(self, "_sanitized", {}).pop(notebook_filename, None)
        if nb is None:
            return super().convert_single_notebook(notebook_filename)
        built = os.path.join(self.writer.build_directory, os.path.basename(notebook_filename))
        self.log.info("Autograding %s", built)
        self._sanitizing = False
        self._init_preprocessors()
        try:
            resources = self.init_single_notebook_resources(built)
            # Lo que nbconvert toma del archivo al leerlo: su nombre y su carpeta (la de ejecución).
            name = os.path.splitext(os.path.basename(built))[0]
            resources["metadata"] = ResourcesDict(name=name, path=os.path.dirname(built))
            with utils.setenv(NBGRADER_EXECUTION="autograde"):
                output, resources = self.exporter.from_notebook_node(nb, resources)
            self.write_single_notebook(output, resources)
        finally:
            self._sanitizing = True

    def start(self):
        try:
            super().start()
        finally:
            ahead.discard()  # lo adelantado que nadie tomó (una entrega que falló a mitad)

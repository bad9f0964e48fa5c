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

from solutions.grading import ahead
from solutions.grading.judge import CHECKS
from solutions.grading.preprocessors import JudgeAnswers, RestoreStructure, WarmExecute, grade_id


class AheadAutograde(Autograde):
    # {notebook: por qué no cuenta como entregado} de los que nbgrader no pudo sanear (vale 0).
    rejected = None

    def init_assignment(self, assignment_id, student_id):
        super().init_assignment(assignment_id, student_id)
        folder = self._format_dest(assignment_id, student_id)
        os.makedirs(folder, exist_ok=True)
        self.rejected, self._sanitized = {}, {}
        first, *others = self.notebooks
        self._start_kernel(folder, first)
        for path in self.notebooks:
            self._sanitize_or_reject(path)
        # Un notebook que no se pudo sanear vale 0, como uno que falta, y el resto se califica.
        if self.rejected:
            self._zero([p for p in self.notebooks if p not in self._sanitized], assignment_id, student_id)
            self.notebooks = [p for p in self.notebooks if p in self._sanitized]
        # Los kernels de los demás, después de sanear: antes le quitarían núcleo al primero.
        for path in others:
            if path in self._sanitized:
                self._start_kernel(folder, path)

    def _sanitize_or_reject(self, path):
        """Sanea ``path``; si nbgrader no puede (un notebook con metadatos de nbgrader rotos, por
        ejemplo), lo anota en ``rejected`` con la razón: es lo entregado, no una falla de quien califica."""
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            self._sanitized[path] = self._sanitize(path)
        except Exception as err:  # noqa: BLE001 (lo que sea que no deja leerlo: vale 0 con su razón)
            said = str(err).strip().splitlines()[:1]
            self.rejected[name] = (
                f"nbgrader no lo pudo leer como notebook de la tarea ({type(err).__name__}: {said[0] if said else ''})"
            )

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

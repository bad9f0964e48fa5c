"""El Nivel 1 se califica por razonamiento: escenarios que nada de lo que se reparte corre, claves
dichas en el enunciado, verdad medida con procesos matados de verdad y crédito parcial por dato.

El camino entero (grade_class con nbgrader autograde) lo prueba ``tests/test_grading.py`` con la clase
de muestra (la entrega «a_medias»); aquí, cada pieza por separado y rápido.
"""

import glob
import os
import re
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell
from nbgrader.utils import determine_grade
from sample_class import NIVEL_1, solution

from harness import tools
from harness.contract import EXIT_KILLED, crash_message
from harness.notebook import assignment, moment_run, moments
from harness.notebook.assignment import show_my_moments
from harness.notebook.exercise_feedback import BRANCHES, FIELDS, check_prediction_format
from harness.notebook.moments import DEFAULT, GRADED
from solutions.grading import escenarios, judge, truth
from solutions.grading.judge import AnswerError, PartlyRight, read_verdict, wrong_fields
from solutions.grading.paths import LESSON_AGENT, NOTEBOOKS, REFERENCE_AGENT, ROOT
from solutions.grading.preprocessors import verdict

RELEASED_1 = os.path.join(NOTEBOOKS, f"{NIVEL_1}.ipynb")


def source_answer(n):
    """La respuesta de la fuente de instructor para su momento ``n`` (uno de los tres de siempre)."""
    found = {"prediction": {}}
    exec(solution(NIVEL_1, f"momento_{n}"), found)
    return found["prediction"][DEFAULT[n - 1]]


# —— El enunciado ——


def test_the_released_level_1_states_every_key_and_its_values():
    prose = "\n".join(c.source for c in nbformat.read(RELEASED_1, 4).cells if c.cell_type == "markdown")
    for key in FIELDS:
        assert re.search(rf"^\| `{key}` \| .+ \| .+ \|$", prose, re.MULTILINE), key
    for branch in BRANCHES:
        assert f'`"{branch}"`' in prose, branch
    assert "`True` o `False`" in prose and "`None`" in prose and "un entero ≥ 0" in prose


def test_the_released_level_1_shows_no_graded_answer():
    """Ninguna salida guardada muestra un valor medido que no sea también uno de los permitidos."""
    outputs = " ".join(str(c.get("outputs", "")) for c in nbformat.read(RELEASED_1, 4).cells)
    assert "@@respuesta@@" not in outputs
    for n in (1, 2, 3):
        assert repr(source_answer(n)) not in outputs


def test_the_local_check_gives_hints_without_answers(capsys, tmp_path):
    assert show_my_moments(folder=str(tmp_path)) == DEFAULT  # sin lista de la clase: los de siempre
    almost = {**source_answer(1), "reconcile_branch": "no reanudó"}  # un dato mal
    assert check_prediction_format(1, {DEFAULT[0]: almost})
    assert "formato correcto" in capsys.readouterr().out  # la forma, no el acierto
    assert not check_prediction_format(1, {DEFAULT[1]: almost})  # la de otro momento no es la del 1
    assert f'prediction["{DEFAULT[0]}"]' in capsys.readouterr().out
    broken = {k: v for k, v in almost.items() if k != "notices_after_resume"}
    assert not check_prediction_format(1, {DEFAULT[0]: {**broken, "resume_finishes": "sí"}})
    said = capsys.readouterr().out
    assert "notices_after_resume: falta esta clave" in said
    assert "resume_finishes: valor no válido: 'sí' es un texto; usa True o False" in said


# —— El crédito parcial ——


def graded_cell(outputs):
    cell = new_code_cell("", metadata={"nbgrader": {"grade": True, "grade_id": "prueba", "points": 2}})
    cell.outputs = outputs
    return cell


@pytest.mark.parametrize(
    ("problem", "points"),
    [
        (None, 2),
        (PartlyRight(("reconcile_branch", "resume_finishes", "notices_after_resume"), 7), 1.14),
        (PartlyRight(tuple(FIELDS), 7), 0),
        ("tiene que ser un diccionario con las claves …", 0),
    ],
    ids=["todo-bien", "cuatro-de-siete", "ninguno-bien", "sin-formato"],
)
def test_each_field_earns_its_share_as_nbgrader_reads_it(problem, points):
    cell = graded_cell([])
    cell.outputs = verdict(cell, problem)
    assert determine_grade(cell) == (points, 2.0)
    expected = [] if problem is None else wrong_fields(tuple(FIELDS), read_verdict(cell.outputs))
    assert expected == (
        [] if problem is None else [f for f in FIELDS if f in getattr(problem, "wrong", FIELDS)]
    )


def test_the_judge_names_wrong_fields_and_refuses_a_wrong_format(monkeypatch):
    monkeypatch.setattr(truth, "measured", lambda ids: {"M34": source_answer(1)})
    assert judge.check_prediction("M34", source_answer(1)) is None
    half = {
        **source_answer(1),
        "resume_finishes": not source_answer(1)["resume_finishes"],
        "notices_after_resume": 9,
    }
    assert judge.check_prediction("M34", half) == PartlyRight(("resume_finishes", "notices_after_resume"), 7)
    with pytest.raises(AnswerError):
        judge.check_prediction("M34", {k: v for k, v in half.items() if k != "ledger_has_entry"})
    with pytest.raises(AnswerError):  # una lista no es una predicción: 0 puntos, no datos sueltos
        judge.check_prediction("M34", [half])
    typed = {**source_answer(1), "report_copies_after_resume": True}  # en JSON, true no es 1
    assert judge.check_prediction("M34", typed).wrong == ("report_copies_after_resume",)


# —— La verdad, medida ——


def test_the_truth_is_measured_from_killed_processes_and_matches_the_source(monkeypatch, tmp_path):
    """Cada momento: un proceso del agente del momento que muere en su etiqueta (137, con su línea
    [kill]) y otro, nuevo, que reanuda. Lo medido es lo que la fuente de instructor responde, y queda
    guardado con su huella: pedirlo otra vez no corre nada."""
    monkeypatch.delenv(truth.TRUTH_FILE_ENV, raising=False)
    monkeypatch.setattr(truth, "CACHE", str(tmp_path / "verdades.json"))
    monkeypatch.setattr(truth, "PARALLEL", 1)  # las corridas, en orden: de a pares por momento
    runs = []

    def recorded(workdir, **kwargs):
        done = real(workdir, **kwargs)
        runs.append((kwargs, done))
        return done

    real = moment_run.run_agent_process
    monkeypatch.setattr(moment_run, "run_agent_process", recorded)
    measured = truth.measured(DEFAULT)
    assert len(runs) == 2 * len(DEFAULT)
    for moment, (crash, resume) in zip(sorted(DEFAULT), zip(runs[::2], runs[1::2], strict=True), strict=True):
        label = GRADED[moment].label
        (how, died), (again, _) = crash, resume
        assert how["crash_after"] == label and died.returncode == EXIT_KILLED
        assert f"[kill] {crash_message(label)}" in died.stdout
        assert again["resume"] and os.path.basename(how["agent"]) == "agente_del_momento.py"
    for n, moment in enumerate(DEFAULT, 1):
        assert measured[moment] == source_answer(n), n
    assert truth.measured(DEFAULT) == measured and len(runs) == 2 * len(DEFAULT)


# —— Nada de lo que se reparte corre los escenarios ——


def shipped_code():
    """(ruta, texto) de lo que se reparte y se puede ejecutar: cada archivo de harness/ y las celdas de
    código de notebooks/ (la prosa del Nivel 1 describe los escenarios; ninguna celda los corre)."""
    for folder in ("harness", "notebooks"):
        for path in glob.glob(os.path.join(ROOT, folder, "**", "*"), recursive=True):
            if not os.path.isfile(path) or "_trabajo" in path or "__pycache__" in path:
                continue
            if path.endswith(".ipynb"):
                cells = nbformat.read(path, 4).cells
                yield path, "\n".join(c.source for c in cells if c.cell_type == "code")
            else:
                with open(path, encoding="utf-8", errors="replace") as f:
                    yield path, f.read()


def test_nothing_the_course_ships_can_run_the_graded_scenarios(tmp_path):
    """Ni harness/ ni el código de notebooks/ tienen la segunda herramienta ni su paso en el guion: solo
    la tabla de la familia la nombra (para describir los momentos), y el agente de la lección no llega
    a un turno 4. Las variantes sí se reparten (la Práctica las corre con la tarea de la lección)."""
    family = {moments.__file__, moment_run.__file__, assignment.__file__}
    for path, text in shipped_code():
        words = ("escenarios",) if path in family else ("escenarios", moments.NOTIFY, moments.NOTICES_PATH)
        for word in words:
            assert word not in text, (path, word)
    assert moments.NOTIFY not in tools.TOOL_IMPLS
    with open(LESSON_AGENT, encoding="utf-8") as f:
        source = f.read()
    for agent in (moments.ONLY_B, moments.LATE_A):  # cada cambio cambia el texto de la lección
        assert moments.agent_source(agent, source) != source
    env = {**os.environ, "AGENT_WORKDIR": str(tmp_path), "CRASH_AFTER": "after-tool:4"}
    done = subprocess.run([sys.executable, LESSON_AGENT], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "[kill]" not in done.stdout, done.stderr


def test_each_scenario_changes_only_what_its_words_say():
    """«Solo el punto B» quita el bloque del punto A y nada más; «punto A tarde» mueve una línea."""
    with open(LESSON_AGENT, encoding="utf-8") as f:
        source = f.read()
    only_b = moments.only_b(source)
    assert "save A" not in only_b and 'crash_point("after-save-a")' not in only_b
    assert set(only_b.splitlines()) <= set(source.splitlines())
    assert len(source.splitlines()) - len(only_b.splitlines()) == 5
    late = moments.point_a_late(source)
    assert sorted(late.splitlines()) == sorted(source.splitlines())
    assert late.index(moments.ASSISTANT_PUSH) < late.index(moments.POINT_A)
    assert source.index(moments.ASSISTANT_PUSH) > source.index(moments.POINT_A)


def test_the_student_edition_leaves_the_scenarios_out():
    """Los escenarios y las respuestas viven bajo solutions/grading/, que la edición no copia."""
    from solutions.grading.edicion_estudiantes import INCLUDED

    for module in (escenarios, truth, judge):
        relative = os.path.relpath(module.__file__, ROOT).replace(os.sep, "/")
        assert relative.startswith("solutions/grading/")
        assert not any(relative.startswith(prefix) for prefix in INCLUDED), relative


# —— Los ejercicios, sobre lo enseñado antes de ellos ——


def defined_names(path):
    """Las funciones y clases de un agente, y lo que importa de las defensas de producción
    (``harness.defenses``): lo que su código le da a quien lo lee, más allá de la base del arnés."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defenses = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and "defenses" in (n.module or "")]
    return names | {a.asname or a.name for n in defenses for a in n.names}


def test_the_exercises_name_nothing_that_only_production_teaches():
    """Ninguna palabra de código que solo el agente de referencia tiene y la lección no nombra («De la
    lección a producción» viene después de los ejercicios) aparece en el texto de los dos niveles."""
    lesson = nbformat.read(os.path.join(NOTEBOOKS, "leccion_6_puntos_de_control.ipynb"), 4).cells
    taught = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(c.source for c in lesson)))
    production_only = defined_names(REFERENCE_AGENT) - defined_names(LESSON_AGENT) - taught
    assert "check_resumable" in production_only  # la que el Nivel 1 daba por «de la lección»
    for name in (NIVEL_1, "ejercicio_nivel_2"):
        prose = "\n".join(c.source for c in nbformat.read(os.path.join(NOTEBOOKS, f"{name}.ipynb"), 4).cells)
        named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", prose))
        assert not named & production_only, (name, named & production_only)
        assert "AGENT_VARIANT" not in prose, name  # el agente de la lección no la lee


def test_no_stored_output_answers_the_warm_up():
    """Las caídas del calentamiento no aparecen en las salidas guardadas de la lección ni del laboratorio:
    ni su etiqueta ni la línea de reconcile de la llamada de ese turno."""
    warm_up = next(
        c.source for c in nbformat.read(RELEASED_1, 4).cells if c.source.startswith("## Calentamiento")
    )
    labels = set(re.findall(r"`(after-[a-z-]+:\d+)`", warm_up))
    assert len(labels) == 4
    for name in ("leccion_6_puntos_de_control", "laboratorio_de_caidas"):
        cells = nbformat.read(os.path.join(NOTEBOOKS, f"{name}.ipynb"), 4).cells
        outputs = " ".join(str(c.get("outputs", "")) for c in cells)
        for label in labels:
            assert label not in outputs, (name, label)
            turn = int(label.split(":")[1])
            assert f"[reconcile] tool_use_id=toolu_{turn:02d}" not in outputs, (name, label)

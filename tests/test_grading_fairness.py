"""Calificar con justicia, cada pieza por separado y rápido: texto en NFC (y sin mayúsculas donde el
enunciado lo dice), una corrección que es de quien la entrega, puntos en centésimos, notas a mano desde
un CSV que se revisa entero antes de tocar nada, el informe con la distribución y las entregas casi
iguales.

El camino entero (una clase de verdad, con nbgrader y aislamiento) lo prueba
``tests/test_grading_class_fair.py``.
"""

import json
import os
import shutil
import unicodedata

import nbformat
import pytest
from sample_class import NIVEL_1, NIVEL_2, submission

from harness.notebook.exercise_feedback import FIELDS, format_problems, ledger_only
from harness.runs.launcher import load_agent
from solutions.grading import judge, parecidas, puntos, truth
from solutions.grading.handed_in import MISSING
from solutions.grading.manual import ManualError, problem, read_marks
from solutions.grading.paths import NOTEBOOKS, REFERENCE_AGENT
from solutions.grading.release import ASSIGNMENT, EXERCISES
from solutions.grading.report import Totals

NFD = unicodedata.normalize("NFD", "no reanudó")
MEASURED = {
    "pending_tool_use": "write_report",
    "tool_result_in_messages": False,
    "ledger_has_entry": False,
    "reconcile_branch": "no reanudó",
    "resume_finishes": False,
    "report_copies_after_resume": 1,
    "notices_after_resume": 0,
}


@pytest.fixture
def measured(monkeypatch):
    monkeypatch.setattr(truth, "measured", lambda ids: {"M34": MEASURED})


# —— Texto justo ——


def test_nfd_and_nfc_earn_the_same_points(measured):
    assert NFD != "no reanudó"
    for typed in (NFD, "no reanudó", "No Reanudó", unicodedata.normalize("NFD", "NO REANUDÓ")):
        # Sale del kernel como JSON (con \\u0301), igual que al calificar.
        answer = judge.parse_answer(json.dumps({**MEASURED, "reconcile_branch": typed}))
        assert judge.check_prediction("M34", answer) is None, typed


def test_case_matters_only_where_the_statement_says_so(measured):
    wrong = judge.check_prediction("M34", {**MEASURED, "pending_tool_use": "Write_Report"})
    assert wrong.wrong == ("pending_tool_use",)
    released = nbformat.read(os.path.join(NOTEBOOKS, f"{NIVEL_1}.ipynb"), 4)
    prose = "\n".join(c.source for c in released.cells if c.cell_type == "markdown")
    assert "en `reconcile_branch`, además, las mayúsculas no\nimportan" in prose
    assert "NFC" in prose


def test_the_local_check_accepts_nfd_and_says_why_it_rejects():
    assert format_problems({**MEASURED, "reconcile_branch": NFD}, FIELDS) == []
    assert format_problems({**MEASURED, "reconcile_branch": "No reanudó"}, FIELDS) == []
    ((key, said),) = format_problems({**MEASURED, "reconcile_branch": "no reanudo"}, FIELDS)
    assert key == "reconcile_branch" and "¿quisiste decir «no reanudó»?" in said
    ((_, said),) = format_problems({**MEASURED, "reconcile_branch": "no\u00a0reanudó"}, FIELDS)
    assert "U+00A0" in said and "posición 3" in said
    ((_, said),) = format_problems({**MEASURED, "resume_finishes": "False"}, FIELDS)
    assert "escribe False sin comillas" in said
    ((_, said),) = format_problems({**MEASURED, "notices_after_resume": ...}, FIELDS)
    assert "reemplázalo por tu predicción" in said


# —— La corrección es de quien la entrega ——


def test_the_lent_agent_has_only_its_ledger(tmp_path, monkeypatch):
    path = tmp_path / "agent.py"
    with open(REFERENCE_AGENT, encoding="utf-8") as f:
        path.write_text(ledger_only(f.read()), encoding="utf-8")
    lent = load_agent(str(path), "prestado")
    for name in ("run_tool_uses", "reconcile", "run_agent", "main", "resume_scene"):
        with pytest.raises(AttributeError, match="tiene que ser tu propio código"):
            getattr(lent, name)
    monkeypatch.chdir(tmp_path)  # y vuelve al terminar: nada queda en una carpeta borrada
    lent.save_effect("toolu_03", {"name": "write_report", "result": "ok", "at": lent.now_ms()})
    assert json.loads((tmp_path / "effects.json").read_text())["toolu_03"]["result"] == "ok"


# —— Puntos en centésimos ——


def test_points_are_written_with_two_decimals_and_add_up():
    parts = [judge.PartlyRight(("a",) * k, 7).points(2) for k in (6, 5, 7)]  # 1, 2 y 0 datos bien
    assert parts == [0.29, 0.57, 0.0]
    total = sum(parts)
    assert str(total) == "0.8599999999999999" and puntos.text(total) == "0.86"
    assert puntos.text(3.4299999999999997) == "3.43"
    assert [puntos.text(v) for v in (12.0, 10, 0, 0.5, -0.0)] == ["12", "10", "0", "0.5", "0"]
    assert puntos.has_more_decimals(1.333) and not puntos.has_more_decimals(1.33)


def test_the_distribution_counts_every_student_once():
    totals = Totals({"a": 0, "b": 1.99, "c": 2, "d": 18.57, "e": 19, "f": 3.4299999999999997}, 19)
    bins = totals.bins()
    assert bins[0] == (0, 2, 2) and bins[1] == (2, 4, 2) and bins[-1] == (18, 19, 2)
    assert sum(count for *_, count in bins) == 6


# —— Notas a mano desde un CSV ——


def test_a_csv_of_marks_is_read_row_by_row(tmp_path):
    path = tmp_path / "notas.csv"
    path.write_text(
        "estudiante,pregunta,puntos,comentario\nana,explicacion,2.5,bien\nbeto,explicacion_error,3\n"
        "\ncarla,explicacion,tres,\nsolo,dos\n",
        encoding="utf-8",
    )
    marks, lines, unread = read_marks(path)
    assert marks == [("ana", "explicacion", 2.5, "bien"), ("beto", "explicacion_error", 3.0, None)]
    assert lines == [2, 3]
    assert [line.split(": ", 1)[1] for _, line in unread] == [
        "los puntos «tres» no son un número",
        "tiene 2 columnas; van estudiante, pregunta, puntos, comentario (el comentario, opcional)",
    ]
    (tmp_path / "vacio.csv").write_text("estudiante,pregunta,puntos\n", encoding="utf-8")
    with pytest.raises(ManualError, match="no tiene notas"):
        read_marks(tmp_path / "vacio.csv")


def test_each_mark_is_checked_before_anything_is_written():
    questions = {"explicacion": (NIVEL_1, 3), "explicacion_error": (NIVEL_2, 4)}
    graded = {"ana": {NIVEL_2: MISSING}}
    assert problem(("ana", "explicacion", 2.5, None), graded, questions) is None
    # Una nota para un notebook que no entregó no vale: no hay respuesta que calificar.
    assert problem(("ana", "explicacion_error", 2, None), graded, questions) == (
        "«ana»: falta ejercicio_nivel_2.ipynb, así que vale 0 y explicacion_error no lleva nota a mano"
    )
    assert "no hay una entrega calificada de «beto»" in problem(
        ("beto", "explicacion", 1, None), graded, questions
    )
    assert "no hay una pregunta a mano «otra»" in problem(("ana", "otra", 1, None), graded, questions)
    assert (
        problem(("ana", "explicacion", 4, None), graded, questions)
        == "explicacion vale de 0 a 3 puntos, no 4"
    )
    assert "más de dos decimales" in problem(("ana", "explicacion", 1.333, None), graded, questions)


# —— Entregas casi iguales ——


def graded_copy(course_dir, student, changes):
    """Una entrega «calificada» (en autograded/) armada desde el notebook repartido."""
    folder = course_dir / "autograded" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    for name in EXERCISES:
        released = os.path.join(NOTEBOOKS, f"{name}.ipynb")
        nbformat.write(submission(released, name, changes and changes[name]), folder / f"{name}.ipynb")


def test_identical_submissions_are_listed_and_blank_ones_are_not(tmp_path):
    release = tmp_path / "release" / ASSIGNMENT
    release.mkdir(parents=True)
    for name in EXERCISES:
        shutil.copy(os.path.join(NOTEBOOKS, f"{name}.ipynb"), release)
    own = {NIVEL_1: {"explicacion": "Lo razonamos juntas: ① y ② dejan el mismo disco."}, NIVEL_2: {}}
    other = {
        NIVEL_1: {
            "explicacion": "Otra explicación, con otras palabras y otro orden de ideas, bien distinta."
        },
        NIVEL_2: {
            "corregida": "def run_tool_uses_fixed(content):\n    return []\n",
            "script": "%%writefile x\n",
        },
    }
    for student, changes in (
        ("ana", own),
        ("beto", own),
        ("carla", other),
        ("vacia", None),
        ("vacia2", None),
    ):
        graded_copy(tmp_path, student, changes)
    found = parecidas.groups(tmp_path, ["ana", "beto", "carla", "vacia", "vacia2"])
    assert [g.students for g in found] == [("ana", "beto")]
    assert found[0].similarity == 1.0 and not found[0].different
    assert f"{NIVEL_1}:explicacion" in found[0].same

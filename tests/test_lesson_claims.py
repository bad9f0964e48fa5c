"""Cada afirmación comprobable de la lección tiene su celda ejecutada, con salida guardada, al lado del
código del que habla; más los dibujos guardados, las predicciones antes de cada experimento y el orden
de las definiciones (ninguna celda llama a algo que define una celda posterior).

La lista de afirmaciones sale de la lección (issue 11): sus dos transcripciones, el guardado atómico,
los tres errores de carga, la ventana A/B, «ejecutar → anotar», la falla del registro, las tres ramas
de reconcile, la apertura limpia, «solo el punto B», el límite del guion, CRASH_AFTER → 137, una
llamada colgante por turno, ① ≡ ② en disco, el marcador de posición del Nivel 2 y la proporción.
"""

import ast
import builtins
import copy
import glob
import os
import re

import nbformat
import pytest
from course_files import LESSON_NOTEBOOK, output_text

CLAIMS = (
    "transcripcion-caida",
    "transcripcion-reanudar",
    "guardado-atomico",
    "carga-sin-archivo",
    "carga-truncado",
    "carga-otra-version",
    "ventana-a-b",
    "ejecutar-luego-anotar",
    "falla-del-registro",
    "rama-acierto",
    "rama-solo-lectura",
    "rama-is-error",
    "arranque-limpio",
    "solo-punto-b",
    "limite-del-guion",
    "crash-after-137",
    "una-llamada-por-turno",
    "uno-igual-dos",
    "marcador-de-posicion",
    "proporcion",
)
PREDICTION = "**Antes de ejecutar:**"


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(LESSON_NOTEBOOK, as_version=4)


def claim_problems(notebook):
    """Lo que le falta a cada afirmación: su celda etiquetada, única, con salida y sin error."""
    problems = []
    for claim in CLAIMS:
        cells = [c for c in notebook.cells if f"claim:{claim}" in c.metadata.get("tags", [])]
        if len(cells) != 1:
            problems.append(f"claim:{claim}: {len(cells)} celdas etiquetadas (tiene que haber una)")
            continue
        cell = cells[0]
        if cell.cell_type != "code" or not output_text(cell).strip():
            problems.append(f"claim:{claim}: la celda no tiene salida guardada")
        elif any(o.output_type == "error" for o in cell.outputs):
            problems.append(f"claim:{claim}: la celda guardó un error")
    return problems


def test_every_claim_has_one_executed_cell_with_output(notebook):
    assert claim_problems(notebook) == []


@pytest.mark.parametrize("how", ["sin etiqueta", "sin salida"])
def test_the_check_fails_when_a_demonstration_disappears(notebook, how):
    broken = copy.deepcopy(notebook)
    cell = next(c for c in broken.cells if "claim:falla-del-registro" in c.metadata.get("tags", []))
    if how == "sin etiqueta":
        cell.metadata["tags"] = []
    else:
        cell.outputs = []
    assert [p for p in claim_problems(broken) if "falla-del-registro" in p]


def claim_output(notebook, claim):
    return output_text(next(c for c in notebook.cells if f"claim:{claim}" in c.metadata.get("tags", [])))


def test_moments_one_and_two_differ_only_in_the_report(notebook):
    # Lección, ejercicio: ① y ② dejan el mismo checkpoint.json y effects.json; report.txt no.
    text = claim_output(notebook, "uno-igual-dos")
    # Las filas de la comparación: pregunta | tu predicción | lo que pasó | marca.
    assert re.search(r"^checkpoint\.json \| .* \| True \|", text, re.M)
    assert re.search(r"^effects\.json \(sin las horas at\) \| .* \| True \|", text, re.M)
    assert re.search(r"^report\.txt \| .* \| False \|", text, re.M)
    assert (
        "[kill] caída simulada en after-save-a:3" in text and "[kill] caída simulada en after-tool:3" in text
    )


def test_a_failed_ledger_write_returns_the_result_without_is_error_and_warns(notebook):
    text = claim_output(notebook, "falla-del-registro")
    assert "[falló la escritura del registro] tool_use_id=toolu_03: el efecto secundario ya ocurrió" in text
    returned = next(line for line in text.splitlines() if line.startswith("[{"))
    assert "'tool_use_id': 'toolu_03'" in returned and "is_error" not in returned
    assert re.search(r"^el modelo recibe is_error \| .* \| False \|", text, re.M)


def test_a_run_without_resume_wipes_the_old_checkpoint_and_ledger(notebook):
    before, after = claim_output(notebook, "arranque-limpio").split("EXIT=137")
    assert "3 anotaciones" in before and "1 copia del reporte" in before
    assert "effects.json | no existe" in after and "report.txt | no existe" in after


def test_the_lessons_crash_table_covers_turn_three_only(notebook):
    # Los momentos de un turno de solo lectura quedan para el ejercicio de Nivel 1.
    labels = re.findall(r"^(after-[a-z-]+:\d+) \|", claim_output(notebook, "crash-after-137"), re.M)
    assert labels == ["after-save-a:3", "after-tool:3", "after-effect-write:3", "after-save-b:3"]


def svg_outputs(notebook):
    return [
        (o.data["image/svg+xml"], o.data.get("text/plain", ""))
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/svg+xml" in o.get("data", {})
    ]


def test_at_least_three_pictures_are_stored_as_readable_deterministic_svg(notebook):
    pictures = svg_outputs(notebook)
    assert len(pictures) >= 3
    for svg, text in pictures:
        assert "<title>" in svg and "<desc>" in svg and text.strip(), "un dibujo sin versión en texto"
        assert not re.search(r"\sid=", svg), "un dibujo con ids (pueden cambiar entre corridas)"


def test_each_prediction_is_answered_by_the_run_that_follows(notebook):
    # La celda de la predicción (tests/test_predicciones.py) y, después, la corrida que la responde.
    cells = notebook.cells
    asked = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and PREDICTION in c.source]
    assert len(asked) >= 15
    for i in asked:
        answer = [c for c in cells[i + 1 :] if c.cell_type == "code"][1]
        assert output_text(answer).strip(), (
            f"la predicción de la celda {i} no tiene una corrida que la responda"
        )


def names(tree):
    """(definidos, llamados) por una celda: def/class/asignaciones/imports y cada nombre llamado."""
    defined, called = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func.id)
    return defined, called


def test_no_cell_calls_a_function_that_a_later_cell_defines(notebook):
    seen, later_problems = set(dir(builtins)) | {"display"}, []
    for i, cell in enumerate(c for c in notebook.cells if c.cell_type == "code"):
        defined, called = names(ast.parse(cell.source))
        seen |= defined
        later_problems += [f"celda de código {i + 1}: {name}" for name in sorted(called - seen)]
    assert later_problems == []


def test_the_first_code_cell_of_plumbing_is_a_few_lines(notebook):
    plumbing = [c for c in notebook.cells if c.cell_type == "code" and not c.source.startswith("#|")][0]
    assert len([line for line in plumbing.source.splitlines() if line.strip()]) <= 8


# —— Afirmaciones mostradas con una corrida de verdad (issue 23) ——


def test_the_atomic_save_survives_a_process_killed_mid_save(notebook):
    out = claim_output(notebook, "guardado-atomico")
    assert "código de salida del proceso: -9" in out  # SIGKILL de verdad
    assert "checkpoint.json.tmp" in out and "load_checkpoint lee el turno 1" in out


def test_the_script_refuses_a_call_past_its_end(notebook):
    assert "ScriptError: el guion se terminó" in claim_output(notebook, "limite-del-guion")


def test_both_orders_killed_at_the_same_point(notebook):
    out = claim_output(notebook, "marcador-de-posicion")
    prod, _, lesson = out.partition("run_tool_uses_leccion")
    assert '"result": null' in prod and "sin anotación de toolu_03" in lesson
    assert out.count("(código -9)") == 2


def test_the_proportion_shows_bytes_and_time_per_turn(notebook):
    out = claim_output(notebook, "proporcion")
    assert re.search(r"bytes escritos en el turno 20: \d+", out)
    assert re.search(r"tiempo de la maquinaria por turno: [\d.]+ ms", out)


def tagged(notebook, tag):
    return [c for c in notebook.cells if tag in c.metadata.get("tags", [])]


def test_the_ending_has_a_self_check_a_glossary_and_the_exercises_before_the_close(notebook):
    (check,) = tagged(notebook, "autoevaluacion")
    assert len(re.findall(r"^\d+\. ", check.source, re.M)) >= 8
    (glossary,) = tagged(notebook, "glosario")
    for term in ("Punto A", "Punto B", "Llamada colgante", "Registro", "reconcile", "after-tool"):
        assert term in glossary.source
    sources = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    exercises = next(i for i, s in enumerate(sources) if s.startswith("## Ejercicios"))
    closing = next(i for i, s in enumerate(sources) if "Con esto terminaste" in s)
    assert exercises < closing


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(os.path.dirname(LESSON_NOTEBOOK), "*.ipynb"))))
def test_no_stored_output_has_lazy_plurals(path):
    text = "".join(output_text(c) for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert not re.search(r"\w\(s\)|\w\(es\)", text)

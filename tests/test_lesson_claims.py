"""Cada afirmación comprobable de la lección tiene su celda ejecutada, con salida guardada, al lado del
código del que habla; más los dibujos guardados, las predicciones antes de cada experimento y el orden
de las definiciones (ninguna celda llama a algo que define una celda posterior).

La lista de afirmaciones sale de la lección (issue 11): sus dos transcripciones, el guardado atómico,
los tres errores de carga (y el truncado con una corrida de verdad), la ventana A/B, «ejecutar →
anotar», la falla del registro, las tres ramas de reconcile, la apertura limpia, «solo el punto B», el
límite del guion, una llamada colgante por turno y la proporción. Lo que responde los ejercicios (las
ramas de cada momento del Nivel 1, ① ≡ ② en disco, el orden al revés del Nivel 2) no se corre aquí: es
del laboratorio y de las soluciones de quien califica.
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
    "carga-truncado-proceso",
    "una-llamada-por-turno",
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


def test_a_failed_ledger_write_warns_at_once_on_stderr_and_returns_the_result(notebook):
    # La lección: console.error en el acto; el modelo recibe el resultado real, sin is_error.
    text = claim_output(notebook, "falla-del-registro")
    warning = "[falló la escritura del registro] tool_use_id=toolu_01: el efecto secundario ya ocurrió"
    assert warning in text
    assert "[kill] caída simulada en after-save-b:3" in text
    # «En el acto», visible como en una terminal: el aviso sale entre el punto A y el B, antes de la caída.
    order = [text.index(line) for line in ("[turn 1][save A]", warning, "[turn 1][save B]", "[kill]")]
    assert order == sorted(order), text
    assert re.search(r"^avisos por stderr \| .* \| 3 \|", text, re.M)  # uno por herramienta
    received = text.split("el tool_result de write_report que recibió el modelo:")[1].splitlines()[0]
    assert "toolu_03" in received and "is_error" not in received
    assert re.search(r"^anotaciones en effects\.json \| .* \| 0 \|", text, re.M)
    assert re.search(r"^copias del reporte \| .* \| 1 \|", text, re.M)  # el efecto ocurrió igual


def test_a_run_without_resume_wipes_the_old_checkpoint_and_ledger(notebook):
    before, after = claim_output(notebook, "arranque-limpio").split("EXIT=137")
    assert "3 anotaciones" in before and "1 copia del reporte" in before
    assert "effects.json | no existe" in after and "report.txt | no existe" in after


def resumed_moments(notebook):
    """{(variable, etiqueta)} de cada directorio que se reanuda con --resume después de morir en esa
    etiqueta, en el orden de las celdas."""
    crashed, resumed = {}, set()
    for cell in (c for c in notebook.cells if c.cell_type == "code"):
        for node in ast.walk(ast.parse(cell.source)):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)):
                continue
            name, options = node.args[0].id, {k.arg: k.value for k in node.keywords}
            if isinstance(options.get("resume"), ast.Constant) and options["resume"].value is True:
                resumed |= {(name, crashed[name])} if name in crashed else set()
            if isinstance(options.get("crash_after"), ast.Constant):
                crashed[name] = options["crash_after"].value
    return resumed


def test_the_lesson_does_not_answer_its_exercises(notebook):
    # Nivel 1: qué rama toma reconcile en ① (after-save-a) y ② (after-tool) se mira en el laboratorio.
    moments = ("after-save-a", "after-tool")
    answered = {(n, label) for n, label in resumed_moments(notebook) if label.startswith(moments)}
    assert answered == set(), f"la lección reanuda un momento del Nivel 1: {answered}"
    # Nivel 2: ninguna celda anota un marcador de posición antes de ejecutar.
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert '"result": None' not in code and "run_tool_uses_prod" not in code


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
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
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


def test_one_pending_call_a_turn_is_shown_by_running_the_loop(notebook):
    out = claim_output(notebook, "una-llamada-por-turno")
    assert "anotadas en effects.json: ['toolu_01', 'toolu_02']" in out  # se ejecutaron las dos
    assert re.search(r"^llamadas en pendingToolUse tras el punto A \| .* \| 1 \|", out, re.M)


def test_the_proportion_compares_the_writes_with_a_model_turn(notebook):
    """Claim 20: las escrituras de un turno frente a un turno del modelo REAL: medido con --live, o
    dicho que no se mide y de dónde sale la cifra. El modelo guionado (en memoria) no es un turno."""
    cells = notebook.cells
    index = next(i for i, c in enumerate(cells) if "claim:proporcion" in c.metadata.get("tags", []))
    out, source = output_text(cells[index]), cells[index].source
    for what in ("tres escrituras atómicas por turno", "con fsync (write_durable)"):
        assert re.search(re.escape(what) + r":\s+[\d.,]+ ms", out), what
    measured = "un turno del modelo real (--live), medido ahora" in out
    cited = "no se mide aquí" in out and "no es una medición: la lección" in out
    assert measured or cited, out
    assert "guionado" not in out and "ScriptedModel" not in source and "ask_model" not in source
    assert source.startswith("# NBVAL_IGNORE_OUTPUT\n")  # los tiempos no se comparan
    assert "1 s" not in source  # la cifra citada sale del arnés, con su fuente
    assert len(source.splitlines()) <= 25
    sizes = [
        int(n)
        for n in re.findall(r"bytes escritos en el turno (?:1|20): (\d+)", output_text(cells[index + 1]))
    ]
    assert len(sizes) == 2 and sizes[1] > sizes[0]  # el registro se reescribe entero: crece


def tagged(notebook, tag):
    return [c for c in notebook.cells if tag in c.metadata.get("tags", [])]


def test_the_ending_has_a_glossary_and_the_exercises_before_the_close(notebook):
    (glossary,) = tagged(notebook, "glosario")
    for term in ("Punto A", "Punto B", "Llamada colgante", "Registro", "reconcile", "after-tool"):
        assert term in glossary.source
    sources = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    exercises = next(i for i, s in enumerate(sources) if s.startswith("## Ejercicios"))
    closing = next(i for i, s in enumerate(sources) if "Con esto terminaste" in s)
    assert exercises < closing
    # Después de los ejercicios, el notebook siguiente: el de las defensas.
    assert "de_la_leccion_a_produccion.ipynb" in sources[exercises]


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(os.path.dirname(LESSON_NOTEBOOK), "*.ipynb"))))
def test_no_stored_output_has_lazy_plurals(path):
    text = "".join(output_text(c) for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert not re.search(r"\w\(s\)|\w\(es\)", text)

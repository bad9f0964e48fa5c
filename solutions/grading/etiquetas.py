"""Cómo se llama, en español, cada cosa que se califica: lo que leen el informe y la devolución.

Los ids (``prueba_momento_1``, ``ledger_has_entry``…) siguen en los datos (``data-*`` del informe,
``gradebook.db``); a la vista va esto.
"""

NOTEBOOKS = {"ejercicio_nivel_1": "Nivel 1", "ejercicio_nivel_2": "Nivel 2"}
# La prueba de cada momento del Nivel 1 y cuál de los tres del estudiante juzga: cada quien tiene los
# suyos (la lista de la clase), así que una fila del informe junta momentos distintos. Cuáles tuvo
# cada estudiante lo dicen el informe (su lista de momentos) y la devolución (el id de cada uno).
MOMENT_SLOTS = {f"prueba_momento_{n}": n for n in (1, 2, 3)}
# Cada pregunta con puntos (su celda de prueba o su respuesta a mano).
QUESTIONS = {
    **{test: f"momento {n} (el de cada estudiante)" for test, n in MOMENT_SLOTS.items()},
    "explicacion": "explicación del calentamiento (a mano)",
    "prueba_corregida": "la función corregida",
    "explicacion_error": "explicación del error (a mano)",
    "prueba_script": "el script que lo reproduce",
}
# Cada dato de una predicción del Nivel 1 y cada mecanismo del Nivel 2.
PARTS = {
    "pending_tool_use": "llamada colgante en checkpoint.json",
    "tool_result_in_messages": "tool_result en messages",
    "ledger_has_entry": "anotación en effects.json",
    "reconcile_branch": "rama de reconcile al reanudar",
    "resume_finishes": "--resume termina",
    "report_copies_after_resume": "copias del reporte tras reanudar",
    "notices_after_resume": "avisos en avisos.txt tras reanudar",
    "orden": "ejecuta la herramienta antes de anotarla",
    "caida_superada": "con SIGKILL al anotar, lo anotado ya ocurrió",
    "prueba_script": "muere en su crash_point con los dos órdenes",
}
# Cada celda de respuesta (lo que se compara entre entregas).
ANSWERS = {
    **{f"momento_{n}": f"predicción de su momento {n}" for n in MOMENT_SLOTS.values()},
    "explicacion": "explicación del calentamiento",
    "corregida": "función corregida",
    "explicacion_error": "explicación del error",
    "script": "script de reproducción",
    "celdas_agregadas": "celdas que agregó",
}


def question(notebook, grade_id):
    return f"{NOTEBOOKS.get(notebook, notebook)} · {QUESTIONS.get(grade_id, grade_id)}"


def answer(notebook, grade_id):
    return f"{NOTEBOOKS.get(notebook, notebook)} · {ANSWERS.get(grade_id, grade_id)}"

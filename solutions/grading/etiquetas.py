"""Cómo se llama, en español, cada cosa que se califica: lo que leen el informe y la devolución.

Los ids (``prueba_momento_1``, ``ledger_has_entry``…) siguen en los datos (``data-*`` del informe,
``gradebook.db``); a la vista va esto.
"""

NOTEBOOKS = {"ejercicio_nivel_1": "Nivel 1", "ejercicio_nivel_2": "Nivel 2"}
# Cada pregunta con puntos (su celda de prueba o su respuesta a mano).
QUESTIONS = {
    "prueba_momento_1": "momento 1: punto A tarde, after-tool:3",
    "prueba_momento_2": "momento 2: dos puntos, after-tool:4",
    "prueba_momento_3": "momento 3: solo el punto B, after-effect-write:4",
    "explicacion": "explicación del calentamiento (a mano)",
    "prueba_corregida": "la función corregida",
    "explicacion_error": "explicación del error (a mano)",
    "prueba_script": "el script que lo reproduce",
}
# Cada dato de una predicción del Nivel 1 y cada mecanismo del Nivel 2.
PARTS = {
    "pending_tool_use": "llamada pendiente en checkpoint.json",
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
    "momento_1": "predicción del momento 1",
    "momento_2": "predicción del momento 2",
    "momento_3": "predicción del momento 3",
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

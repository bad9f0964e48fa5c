"""El código de quien califica la Lección 6 (solo para instructores; ver docs/instructores.md).

Al importarse, deja afuera ``rfc3987_syntax``: nbformat valida cada notebook con jsonschema, y
jsonschema, si lo encuentra, arma al importarse la gramática de ese paquete (unos 4 s de procesador por
intérprete) para revisar el formato «iri», que ningún notebook usa. Sin él, jsonschema no revisa ese
formato y nada más cambia. Tiene que pasar antes de importar nbformat: por eso vive aquí.
"""

import sys

# «import rfc3987_syntax» da ImportError, que jsonschema ya espera (el paquete es opcional).
sys.modules.setdefault("rfc3987_syntax", None)

# Un comando de quien califica (``python -m solutions.grading.…``) corrido sin el entorno del curso o
# sin el extra de instructor: una línea que dice qué activar o instalar, no la traza de un
# ModuleNotFoundError. nbgrader se revisa antes: grade_class lo corre en otro proceso.
if sys.argv[:1] == ["-m"]:
    from harness.conformidad.spanish_args import explain_missing_modules
    from solutions.grading.paths import ROOT

    explain_missing_modules(("nbgrader",), "instructor", ROOT)

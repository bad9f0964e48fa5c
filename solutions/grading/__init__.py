"""El código de quien califica la Lección 6 (solo para instructores; ver docs/instructores.md).

Al importarse, deja afuera ``rfc3987_syntax``: nbformat valida cada notebook con jsonschema, y
jsonschema, si lo encuentra, arma al importarse la gramática de ese paquete (unos 4 s de procesador por
intérprete) para revisar el formato «iri», que ningún notebook usa. Sin él, jsonschema no revisa ese
formato y nada más cambia. Tiene que pasar antes de importar nbformat: por eso vive aquí.
"""

import importlib.util
import sys

# «import rfc3987_syntax» da ImportError, que jsonschema ya espera (el paquete es opcional).
sys.modules.setdefault("rfc3987_syntax", None)

# Un comando de quien califica (``python -m solutions.grading.…``) sin el extra de instructor: una
# línea que dice qué instalar y desde dónde, no la traza de un ModuleNotFoundError.
if sys.argv[:1] == ["-m"] and importlib.util.find_spec("nbgrader") is None:
    raise SystemExit(
        "falta nbgrader (el extra de instructor): instálalo desde la raíz del repositorio con "
        'python -m pip install -e ".[instructor]" y vuelve a correr el comando'
    )

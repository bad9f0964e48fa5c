"""El proceso hijo de ``processes.call``: carga el agente como módulo, llama una función suya en la
carpeta actual e imprime una línea JSON con lo que devolvió o el error que lanzó (tipo y texto).

Con ``function`` en null solo lo importa (``processes.import_problem``, antes de la primera fila): si
no se puede, la respuesta dice también el archivo, la línea y su código."""

import json
import linecache
import os
import sys
import traceback

from harness.runs.launcher import load_agent


def where(err, agent):
    """{"file", "line", "code"} del error: el de sintaxis dice su línea; otro, la última línea del
    agente (o de lo que importó) por la que pasó."""
    if isinstance(err, SyntaxError) and err.lineno:
        return {
            "file": os.path.basename(err.filename or agent),
            "line": err.lineno,
            "code": (err.text or "").strip(),
        }
    frames = [f for f in traceback.extract_tb(err.__traceback__) if os.path.abspath(f.filename) == agent]
    if not frames:
        return {}
    last = frames[-1]
    return {
        "file": os.path.basename(agent),
        "line": last.lineno,
        "code": linecache.getline(agent, last.lineno).strip(),
    }


def main(spec):
    spec = json.loads(spec)
    agent = os.path.abspath(spec["agent"])
    try:
        module = load_agent(agent, "agente")
        value = getattr(module, spec["function"])(*spec["args"]) if spec["function"] else None
        out = {"value": value}
    except BaseException as err:  # noqa: BLE001 (lo que sea que lance el código juzgado es el resultado)
        out = {"error": type(err).__name__, "message": str(err)}
        if not spec["function"]:
            out.update(where(err, agent))
    print(json.dumps(out, ensure_ascii=False, default=repr))


if __name__ == "__main__":
    main(sys.argv[1])

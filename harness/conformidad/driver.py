"""El proceso hijo de ``processes.call``: carga el agente como módulo, llama una función suya en la
carpeta actual e imprime una línea JSON con lo que devolvió o el error que lanzó (tipo y texto)."""

import json
import sys

from harness.runner import load_agent


def main(spec):
    spec = json.loads(spec)
    try:
        agent = load_agent(spec["agent"], "agente")
        value = getattr(agent, spec["function"])(*spec["args"])
        out = {"value": value}
    except BaseException as err:  # noqa: BLE001 (lo que sea que lance el código juzgado es el resultado)
        out = {"error": type(err).__name__, "message": str(err)}
    print(json.dumps(out, ensure_ascii=False, default=repr))


if __name__ == "__main__":
    main(sys.argv[1])

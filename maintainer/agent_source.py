"""La lección es la fuente de los agentes (como en nbdev), y «De la lección a producción» la de sus defensas.

    python -m maintainer.agent_source write    # regenera solutions/agent_leccion.py y solutions/agent.py
    python -m maintainer.agent_source check    # falla si un archivo guardado no es el que se genera
    python -m maintainer.agent_source update   # lleva a sus celdas lo editado en los dos archivos
    python -m maintainer.agent_source sync     # update y después write: el flujo de quien edita un agente

``solutions/agent_leccion.py`` sale de las celdas ``#| export`` de la lección; ``solutions/agent.py``, de
las de la lección y después las de producción (``harness.notebook.export``: una definición posterior reemplaza a
la anterior en su lugar). ``update`` es el ``nbdev_update`` de nbdev: cada bloque vuelve a la celda que
nombra su línea ``# %%``; los de la lección, desde ``agent_leccion.py`` (en ``agent.py`` una celda de la
lección puede estar partida por las defensas).
"""

import json
import sys
from pathlib import Path

from harness.notebook.export import CELL_MARKER, EXPORT_MARKER, MAIN_GUARD, render_agent
from maintainer import paths

ROOT = Path(paths.ROOT)
LESSON, PRODUCTION = Path(paths.LESSON), Path(paths.PRODUCTION)
LESSON_AGENT, AGENT = Path(paths.LESSON_AGENT), Path(paths.REFERENCE_AGENT)


def shown(path):
    return path.relative_to(ROOT).as_posix() if ROOT in path.parents else path.name


def sources(agent, lesson=LESSON, production=PRODUCTION):
    """Los notebooks de los que sale ``agent`` (la ruta de uno de los dos agentes)."""
    return [lesson] if Path(agent).name == LESSON_AGENT.name else [lesson, production]


def rendered(agent=AGENT, lesson=LESSON, production=PRODUCTION):
    """El texto que generan las celdas ``#| export`` para ``agent``."""
    notebooks = sources(agent, lesson, production)
    return render_agent(notebooks, " y ".join(f"notebooks/{p.name}" for p in notebooks))


def blocks(text):
    """[(notebook, id de celda, código)] de un agente generado, en orden."""
    found = []
    for line in text.splitlines():
        marker = CELL_MARKER.fullmatch(line)
        if marker:
            found.append((marker["notebook"], marker["id"], []))
        elif found:
            found[-1][2].append(line)
    code = [(nb, cell, "\n".join(lines).strip("\n")) for nb, cell, lines in found]
    if code:  # el último bloque lleva detrás el sys.exit(main()) que agrega la exportación
        nb, cell, last = code[-1]
        code[-1] = (nb, cell, last.removesuffix(MAIN_GUARD.strip("\n")).strip("\n"))
    return code


def update(agent, notebook):
    """Escribe en las celdas de ``notebook`` los bloques de ``agent`` que vienen de él; devuelve las ids
    cambiadas. Una celda partida en varios bloques no tiene cómo volver: mejor parar que perderla."""
    mine = [
        (cell, code)
        for (nb, cell, code) in blocks(Path(agent).read_text(encoding="utf-8"))
        if nb == Path(notebook).name
    ]
    ids = [cell for cell, _ in mine]
    split = sorted({cell for cell in ids if ids.count(cell) > 1})
    if split:
        raise SystemExit(
            f"En {Path(agent).name} las celdas {', '.join(split)} están partidas: edítalas en el notebook."
        )
    data = json.loads(Path(notebook).read_text(encoding="utf-8"))
    exported = {
        c["id"]: c
        for c in data["cells"]
        if c["cell_type"] == "code" and EXPORT_MARKER.fullmatch("".join(c["source"]).partition("\n")[0])
    }
    orphans = sorted(set(ids) - set(exported))
    if orphans:
        raise SystemExit(
            f"En {Path(agent).name} hay bloques de celdas que {Path(notebook).name} ya no tiene: "
            f"{', '.join(orphans)}. Pasa ese código a una celda «#| export» del notebook y vuelve a exportar."
        )
    changed = []
    for cell_id, code in mine:
        source = f"#| export\n{code}"
        if "".join(exported[cell_id]["source"]) != source:
            exported[cell_id]["source"] = source.splitlines(keepends=True)
            changed.append(cell_id)
    Path(notebook).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return changed


def main(argv=None):
    command = (argv or sys.argv[1:] or ["check"])[0]
    agents = (LESSON_AGENT, AGENT)
    if command == "write":
        for agent in agents:
            agent.write_text(rendered(agent), encoding="utf-8")
            print(f"{shown(agent)} regenerado desde {' y '.join(p.name for p in sources(agent))}")
    elif command == "check":
        stale = [agent for agent in agents if agent.read_text(encoding="utf-8") != rendered(agent)]
        for agent in stale:
            print(f"{shown(agent)} no es lo que generan sus notebooks: corre «write».", file=sys.stderr)
        if stale:
            return 1
        print("solutions/agent_leccion.py y solutions/agent.py coinciden con sus notebooks")
    elif command in ("update", "sync"):
        changed = update(LESSON_AGENT, LESSON) + update(AGENT, PRODUCTION)
        print(f"celdas actualizadas: {', '.join(changed) or 'ninguna'}")
        if command == "sync":
            return main(["write"])
    else:
        print("uso: python -m maintainer.agent_source [write|check|update|sync]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""La lección es la fuente del agente: ``solutions/agent.py`` se genera de sus celdas ``#| export``.

    python -m maintainer.agent_source write    # regenera solutions/agent.py desde la lección
    python -m maintainer.agent_source check    # falla si el archivo guardado no es el que se genera
    python -m maintainer.agent_source update   # lleva a sus celdas lo editado en solutions/agent.py
    python -m maintainer.agent_source sync     # update y después write: el flujo de quien edita agent.py

``update`` es el ``nbdev_update`` de nbdev: cada bloque de ``solutions/agent.py`` vuelve a la celda que
nombra su línea ``# %%``. Sirve para editar el agente con un editor de código; después, ``write``.
"""

import json
import sys
from pathlib import Path

from harness.export import CELL_MARKER, EXPORT_MARKER, MAIN_GUARD, render_agent
from maintainer import paths

ROOT, LESSON, AGENT = Path(paths.ROOT), Path(paths.LESSON), Path(paths.REFERENCE_AGENT)

SHOWN_AS = "notebooks/leccion_6_puntos_de_control.ipynb"


def rendered(lesson=LESSON, shown_as=SHOWN_AS):
    """El texto de ``solutions/agent.py`` que generan las celdas ``#| export`` de ``lesson``."""
    return render_agent(lesson, shown_as)


def blocks(text):
    """{id de celda: código} de un agent.py generado, en orden."""
    found, current = {}, None
    for line in text.splitlines():
        marker = CELL_MARKER.fullmatch(line)
        if marker:
            current = marker["id"]
            found[current] = []
        elif current:
            found[current].append(line)
    code = {cell_id: "\n".join(lines).strip("\n") for cell_id, lines in found.items()}
    if code:  # el último bloque lleva detrás el sys.exit(main()) que agrega la exportación
        last = next(reversed(code))
        code[last] = code[last].removesuffix(MAIN_GUARD.strip("\n")).strip("\n")
    return code


def update(agent=AGENT, lesson=LESSON):
    """Escribe en las celdas de la lección los bloques de ``agent``; devuelve las ids cambiadas."""
    edited = blocks(Path(agent).read_text(encoding="utf-8"))
    notebook = json.loads(Path(lesson).read_text(encoding="utf-8"))
    exported = {
        c["id"]: c
        for c in notebook["cells"]
        if c["cell_type"] == "code" and EXPORT_MARKER.fullmatch("".join(c["source"]).partition("\n")[0])
    }
    # Una celda nueva de la lección todavía no está en agent.py: queda como está y «write» la suma.
    # Un bloque cuya celda ya no existe no tiene adónde volver: mejor parar que perderlo.
    orphans = sorted(set(edited) - set(exported))
    if orphans:
        raise SystemExit(
            f"En agent.py hay bloques de celdas que la lección ya no tiene: {', '.join(orphans)}. "
            "Pasa ese código a una celda «#| export» del notebook y vuelve a exportar."
        )
    changed = []
    for cell_id, code in edited.items():
        source = f"#| export\n{code}"
        if "".join(exported[cell_id]["source"]) != source:
            exported[cell_id]["source"] = source.splitlines(keepends=True)
            changed.append(cell_id)
    text = json.dumps(notebook, ensure_ascii=False, indent=1) + "\n"
    Path(lesson).write_text(text, encoding="utf-8")
    return changed


def main(argv=None):
    command = (argv or sys.argv[1:] or ["check"])[0]
    if command == "write":
        AGENT.write_text(rendered(), encoding="utf-8")
        print(f"{AGENT.relative_to(ROOT)} regenerado desde {SHOWN_AS}")
    elif command == "check":
        if AGENT.read_text(encoding="utf-8") != rendered():
            print(
                f"{AGENT.relative_to(ROOT)} no es lo que genera {SHOWN_AS}: corre «write».", file=sys.stderr
            )
            return 1
        print("solutions/agent.py coincide con la lección")
    elif command in ("update", "sync"):
        changed = update()
        print(f"celdas actualizadas: {', '.join(changed) or 'ninguna'}")
        if command == "sync":
            return main(["write"])
    else:
        print("uso: python -m maintainer.agent_source [write|check|update|sync]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

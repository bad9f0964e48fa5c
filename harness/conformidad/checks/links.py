"""enlaces: un enlace o una carpeta donde el agente espera un archivo propio: nunca se escribe a
través de un enlace, y una carpeta se rechaza antes de cambiar nada."""

import os

from harness.contract import EFFECTS_FILE, EXIT_DONE, EXIT_FAILED, LOCK_FILE
from harness.tools import NOTES_PATH, REPORT_PATH

from ..processes import run, scratch
from ..rows import judged
from .diagnosis import ended

PIECE, TITLE = "enlaces", "enlaces y carpetas en lugar de archivos"
SECTION = "Un enlace donde debería haber un archivo"
CHECKS = (
    "report.txt es un enlace a un archivo de fuera: la corrida nueva termina y el archivo de fuera no cambia",
    f"{EFFECTS_FILE} es una carpeta: la corrida nueva termina con código 1 y una línea, sin escribir nada",
)
OUTSIDE = "de otra persona\n"


def report_link(ctx):
    scenario, expected = (
        "report.txt es un enlace a un archivo de fuera",
        "[done]; el archivo de fuera, intacto",
    )
    with scratch() as outside, scratch() as w:
        target = os.path.join(outside, "ajeno.txt")
        with open(target, "w", encoding="utf-8") as f:
            f.write(OUTSIDE)
        os.symlink(target, os.path.join(w, REPORT_PATH))
        done = run(ctx, w)
        with open(target, encoding="utf-8") as f:
            intact = f.read() == OUTSIDE
    ok = done.returncode == EXIT_DONE and intact
    hint = (
        "el agente escribió a través del enlace: un enlace en lugar de un archivo propio se borra (el enlace, no su destino) y se escribe un archivo nuevo"
        if not intact
        else "un enlace viejo no impide la corrida: se quita y se sigue"
    )
    return judged(
        scenario,
        expected,
        "intacto" if intact else "el archivo de fuera cambió",
        ok,
        hint,
        done.stderr,
        SECTION,
    )


def ledger_folder(ctx):
    scenario, expected = f"{EFFECTS_FILE} es una carpeta", "código 1, una línea en stderr, nada escrito"
    with scratch() as w:
        os.mkdir(os.path.join(w, EFFECTS_FILE))
        done = run(ctx, w)
        written = sorted(n for n in os.listdir(w) if n not in (EFFECTS_FILE, LOCK_FILE, NOTES_PATH))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    ok = done.returncode == EXIT_FAILED and len(lines) == 1 and not written
    hint = (
        "una carpeta donde irá un archivo propio se rechaza antes de la primera escritura, no a mitad de la tarea"
        if written
        else "el rechazo es una salida esperada: una línea en español, código 1, sin traza"
    )
    return judged(
        scenario,
        expected,
        f"{ended(done)}; escritos: {', '.join(written) or 'nada'}",
        ok,
        hint,
        done.stderr,
        SECTION,
    )


ROWS = (report_link, ledger_folder)

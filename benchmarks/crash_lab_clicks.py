"""Mide en el navegador cuánto tarda un clic del laboratorio de caídas en mostrar la pantalla nueva.

    python -m benchmarks.crash_lab_clicks [--rounds 2]

Arranca JupyterLab (servidor en esta máquina) y Chromium de Debian (Playwright), corre un notebook con
el laboratorio y, para cada punto de caída de la variante de dos puntos, lo elige en el menú (no lanza
ningún agente), pulsa Ejecutar y Reanudar (cada uno lanza el agente en un proceso) y después Cortar
checkpoint.json y Reiniciar (tampoco lanzan nada). El tiempo va desde el clic (dentro de la página)
hasta que la página ya pintó la pantalla nueva que mandó el kernel. Imprime la mediana, el mínimo y el
máximo de cada acción. La meta es una mediana de 150 ms o menos.
"""

import argparse
import statistics
import tempfile
from pathlib import Path

import nbformat

from harness.crash_lab.words import crash_labels
from maintainer.jupyter_browser import jupyter_server, launch, open_notebook, run_all
from maintainer.paths import REFERENCE_AGENT

GOAL_MS = 150
# Dentro de la página: el clic (o elegir en el menú), y espera a que cambie el número de pantalla y se
# pinte un cuadro. Devuelve null si no hizo falta hacer nada (la caída ya estaba elegida).
TIMED = """async ([action, label]) => {
  const root = document.querySelector('.cl-root');
  const before = root.dataset.ticket;
  const select = root.querySelector('select');
  if (action === 'choose' && select.value === label) return null;
  const start = performance.now();
  if (action === 'choose') {
    select.value = label;
    select.dispatchEvent(new Event('change'));
  } else {
    root.querySelector(`button[data-action="${action}"]`).click();
  }
  await new Promise((done) => {
    const seen = new MutationObserver(() => {
      if (root.dataset.ticket !== before) { seen.disconnect(); requestAnimationFrame(() => done()); }
    });
    seen.observe(root, { attributes: true, attributeFilter: ['data-ticket'] });
  });
  return performance.now() - start;
}"""
# (acción de la página, nombre, ¿lanza el agente?), en el orden en que se pulsan en cada punto de caída.
ACTIONS = [
    ("choose", "Elegir caída", False),
    ("run", "Ejecutar", True),
    ("resume", "Reanudar", True),
    ("cut", "Cortar", False),
    ("reset", "Reiniciar", False),
]


def write_notebook(root):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"from harness.crash_lab import CrashLab\nlab = CrashLab(workdir='laboratorio', agent={REFERENCE_AGENT!r})\nlab"
        )
    ]
    nbformat.write(nb, root / "medida.ipynb")


def measure(rounds):
    from playwright.sync_api import sync_playwright

    times = {name: [] for _, name, _ in ACTIONS}
    with tempfile.TemporaryDirectory() as tmp:
        root, private = Path(tmp) / "raiz", Path(tmp) / "jupyter"
        root.mkdir()
        write_notebook(root)
        with jupyter_server(root, private) as server, sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            open_notebook(page, server, "lab", "medida.ipynb")
            run_all(page)
            page.locator(".cl-root:not(.cl-saved)").wait_for()  # el kernel ya contestó a la vista
            for _ in range(rounds):
                for label in crash_labels():
                    for action, name, _ in ACTIONS:
                        if action == "resume" and not label:
                            continue  # tras una corrida que llegó a [done] no hay nada que reanudar
                        ms = page.evaluate(TIMED, [action, label])
                        if ms is not None:
                            times[name].append(ms)
            browser.close()
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="vueltas por todas las etiquetas")
    times = measure(parser.parse_args().rounds)
    print(f"{'clic':<13} {'mediana':>9} {'mín':>9} {'máx':>9}   (meta: mediana ≤ {GOAL_MS} ms)")
    for _, name, starts_agent in ACTIONS:
        ms = times[name]
        what = "lanza el agente" if starts_agent else "sin agente"
        print(
            f"{name:<13} {statistics.median(ms):7.1f}ms {min(ms):7.1f}ms {max(ms):7.1f}ms  "
            f"({len(ms)} clics, {what})"
        )


if __name__ == "__main__":
    main()

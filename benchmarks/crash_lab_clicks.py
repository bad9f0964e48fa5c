"""Mide en el navegador cuánto tarda un clic del laboratorio de caídas en mostrar la pantalla nueva.

    python -m benchmarks.crash_lab_clicks [--rounds 2]

Arranca JupyterLab (servidor en esta máquina) y Chromium de Debian (Playwright), corre un notebook con
el laboratorio y, para cada punto de caída de la variante de dos puntos, pulsa Ejecutar y luego
Reanudar. El tiempo va desde el clic (dentro de la página) hasta que la página ya pintó la pantalla
nueva que mandó el kernel (el agente corrió en su proceso, se leyó el disco y se dibujó). Imprime la
mediana, el mínimo y el máximo. La meta es una mediana de 150 ms o menos.
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
# Dentro de la página: clic, y espera a que cambie el número de pantalla y se pinte un cuadro.
TIMED_CLICK = """async (action) => {
  const root = document.querySelector('.cl-root');
  const before = root.dataset.ticket;
  const button = root.querySelector(`button[data-action="${action}"]`);
  const start = performance.now();
  button.click();
  await new Promise((done) => {
    const seen = new MutationObserver(() => {
      if (root.dataset.ticket !== before) { seen.disconnect(); requestAnimationFrame(() => done()); }
    });
    seen.observe(root, { attributes: true, attributeFilter: ['data-ticket'] });
  });
  return performance.now() - start;
}"""
CHOOSE = """async (label) => {
  const root = document.querySelector('.cl-root');
  const select = root.querySelector('select');
  if (select.value === label) return;
  const before = root.dataset.ticket;
  select.value = label;
  select.dispatchEvent(new Event('change'));
  await new Promise((done) => {
    const seen = new MutationObserver(() => {
      if (root.dataset.ticket !== before) { seen.disconnect(); done(); }
    });
    seen.observe(root, { attributes: true, attributeFilter: ['data-ticket'] });
  });
}"""


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

    times = {"Ejecutar": [], "Reanudar": []}
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
                    page.evaluate(CHOOSE, label)
                    times["Ejecutar"].append(page.evaluate(TIMED_CLICK, "run"))
                    if label:  # tras una corrida que llegó a [done] no hay nada que reanudar
                        times["Reanudar"].append(page.evaluate(TIMED_CLICK, "resume"))
            browser.close()
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="vueltas por todas las etiquetas")
    times = measure(parser.parse_args().rounds)
    print(f"{'clic':<10} {'mediana':>9} {'mín':>9} {'máx':>9}   (meta: mediana ≤ {GOAL_MS} ms)")
    for name, ms in times.items():
        print(
            f"{name:<10} {statistics.median(ms):7.1f}ms {min(ms):7.1f}ms {max(ms):7.1f}ms  ({len(ms)} clics)"
        )


if __name__ == "__main__":
    main()

"""El laboratorio de caídas en un navegador de verdad: Chromium de Debian, JupyterLab y Notebook 7.

Cada prueba abre un notebook copiado a una carpeta temporal (correrlo escribe ``_trabajo/`` a su lado).
Los procesos se cuentan por un hecho, no por tiempos: el agente de la prueba anota cada arranque en
``procesos.log`` antes de correr el agente de referencia; y el kernel atiende los mensajes en orden,
así que cuando la página muestra el resultado de un clic posterior, un segundo clic perdido ya habría
lanzado su proceso. Deja capturas en ``test-output/browser/`` (ignorada por git).
"""

import os

import nbformat
import pytest

from maintainer.jupyter_browser import CHROMIUM, copy_notebook, jupyter_server, launch, open_notebook, run_all
from maintainer.paths import NOTEBOOKS, REFERENCE_AGENT
from maintainer.paths import ROOT as REPO_ROOT

SCREENSHOT_DIR = os.path.join(REPO_ROOT, "test-output", "browser")
STEP_MS = 30_000  # límite de espera de un paso (red de seguridad, no una medida)
LAB_NOTEBOOK = os.path.join(NOTEBOOKS, "laboratorio_de_caidas.ipynb")
COUNTING_AGENT = """\
import os, runpy, sys
with open({log!r}, "a", encoding="utf-8") as f:
    f.write(" ".join(["corrida", *sys.argv[1:]]) + "\\n")
sys.argv[0] = {agent!r}
runpy.run_path({agent!r}, run_name="__main__")
"""

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM) and not os.environ.get("CI"),
    reason="Falta el Chromium de Debian (/usr/bin/chromium): «apt-get install chromium».",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("raiz")
    with jupyter_server(root, tmp_path_factory.mktemp("jupyter")) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = launch(pw)
        yield chromium
        chromium.close()


def lab_notebook(server, name):
    """Un notebook con solo el laboratorio, que corre el agente contador en su propia carpeta."""
    folder = server.root / name
    folder.mkdir()
    agent = folder / "contador.py"
    agent.write_text(COUNTING_AGENT.format(log=str(folder / "procesos.log"), agent=REFERENCE_AGENT))
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from harness.crash_lab import CrashLab\n"
            'lab = CrashLab(workdir="_trabajo/laboratorio", agent="contador.py")\nlab'
        )
    ]
    nbformat.write(nb, folder / "lab.ipynb")
    return f"{name}/lab.ipynb", folder


def processes(folder):
    path = folder / "procesos.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def open_lab(page, server, app, name):
    from playwright.sync_api import expect

    open_notebook(page, server, app, name)
    run_all(page)
    lab = page.locator(".cl-root")
    expect(lab).to_be_visible(timeout=STEP_MS)
    return lab


def step(lab, action):
    """Pulsa y espera la pantalla nueva (el número de pantalla cambia)."""
    from playwright.sync_api import expect

    before = lab.get_attribute("data-ticket")
    action()
    expect(lab).not_to_have_attribute("data-ticket", before, timeout=STEP_MS)


def shot(page, name):
    os.makedirs(SCREENSHOT_DIR, exist_ok=True)
    page.locator(".cl-root").screenshot(path=os.path.join(SCREENSHOT_DIR, f"{name}.png"))


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_double_click_starts_one_process_and_the_picture_shows_the_resume(server, browser, app):
    from playwright.sync_api import expect

    name, folder = lab_notebook(server, f"doble_{app}")
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        lab = open_lab(page, server, app, name)
        # Antes de correr nada el dibujo no dice que algo ocurrió.
        expect(lab.locator("svg [data-state='plan']")).to_have_count(12)
        expect(lab.get_by_role("button", name="Reanudar")).to_be_disabled()
        expect(lab.locator(".cl-reason")).to_contain_text("no hay nada que reanudar")

        # La caída se elige pulsando el hueco del dibujo: después de la herramienta del turno 3.
        step(lab, lambda: lab.locator("svg [data-label='after-tool:3']").click())
        expect(lab.locator("select")).to_have_value("after-tool:3")

        step(lab, lambda: lab.get_by_role("button", name="Ejecutar").dblclick())
        expect(lab.locator(".cl-status")).to_contain_text("código de salida 137")
        expect(lab.locator("svg .cl-mark-kill")).to_have_count(1)
        # Un clic posterior como barrera: cuando su pantalla llega, todo lo anterior ya se atendió.
        step(lab, lambda: lab.get_by_role("button", name="Reanudar").dblclick())
        assert processes(folder) == ["corrida", "corrida --resume"]

        expect(lab.locator(".cl-branch")).to_contain_text("is_error")
        expect(lab.locator(".cl-diskpanel")).to_contain_text("write_report se ejecutó de verdad: 1 vez")
        # El dibujo muestra lo que hizo la reanudación: el save B rellenado y el turno 4 entero.
        expect(lab.locator("svg text", has_text="turno 4")).to_have_count(1)
        expect(lab.locator("svg [data-state='reanudación']")).to_have_count(5)
        expect(lab.locator("svg", has_text="reconcile: is_error")).to_have_count(1)
        expect(lab.locator(".cl-history li")).to_have_count(2)
        expect(lab.get_by_role("button", name="Reanudar")).to_be_disabled()  # terminó en [done]

        step(lab, lambda: lab.get_by_role("button", name="Reiniciar").click())
        assert processes(folder) == ["corrida", "corrida --resume"]
        expect(lab.locator(".cl-logpanel")).to_contain_text("[done]")  # el log no se pierde
        shot(page, f"doble_clic_{app}")
    finally:
        page.close()
        server.shutdown_kernels()

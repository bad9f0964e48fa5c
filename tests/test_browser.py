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

from maintainer.jupyter_browser import CHROMIUM, jupyter_server, launch, open_notebook, run_all
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
        expect(lab.get_by_role("button", name="Reanudar", exact=True)).to_be_disabled()
        expect(lab.locator(".cl-reason")).to_contain_text("no hay nada que reanudar")

        # La caída se elige pulsando el hueco del dibujo: después de la herramienta del turno 3.
        step(lab, lambda: lab.locator("svg [data-label='after-save-b:1']").click())
        expect(lab.locator("select")).to_have_value("after-save-b:1")
        step(lab, lambda: lab.locator("svg [data-label='after-tool:3']").click())
        expect(lab.locator("select")).to_have_value("after-tool:3")

        step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).dblclick())
        expect(lab.locator(".cl-status")).to_contain_text("código de salida 137")
        expect(lab.locator("svg .cl-mark-kill")).to_have_count(1)
        # Un clic posterior como barrera: cuando su pantalla llega, todo lo anterior ya se atendió.
        step(lab, lambda: lab.get_by_role("button", name="Reanudar", exact=True).dblclick())
        assert processes(folder) == ["corrida", "corrida --resume"]

        expect(lab.locator(".cl-branch")).to_contain_text("is_error")
        expect(lab.locator(".cl-diskpanel")).to_contain_text("write_report se ejecutó de verdad: 1 vez")
        # El dibujo muestra lo que hizo la reanudación: el save B rellenado y el turno 4 entero.
        expect(lab.locator("svg text", has_text="turno 4")).to_have_count(1)
        expect(lab.locator("svg [data-state='reanudación']")).to_have_count(5)
        expect(lab.locator("svg", has_text="reconcile: is_error")).to_have_count(1)
        expect(lab.locator(".cl-history li")).to_have_count(2)
        expect(lab.get_by_role("button", name="Reanudar", exact=True)).to_be_disabled()  # terminó en [done]

        step(lab, lambda: lab.get_by_role("button", name="Reiniciar", exact=True).click())
        assert processes(folder) == ["corrida", "corrida --resume"]
        expect(lab.locator(".cl-logpanel")).to_contain_text("[done]")  # el log no se pierde
        shot(page, f"doble_clic_{app}")
    finally:
        page.close()
        server.shutdown_kernels()


# Contraste WCAG de cada texto del laboratorio, con los estilos calculados por el navegador: el color
# del texto (``fill`` en el SVG) contra el primer fondo opaco detrás (la caja del SVG, o un ancestro).
CONTRAST = """(root) => {
  const rgba = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const over = (fg, bg) => {
    const a = fg.length > 3 ? fg[3] : 1;
    return [0, 1, 2].map((i) => fg[i] * a + bg[i] * (1 - a));
  };
  const background = (node) => {
    const box = node.closest('g') && node.closest('g').querySelector(':scope > rect.cl-box');
    if (box) return rgba(getComputedStyle(box).fill);
    for (let n = node; n; n = n.parentElement) {
      const bg = rgba(getComputedStyle(n).backgroundColor);
      if (bg.length >= 3 && (bg.length === 3 || bg[3] > 0.99)) return bg;
    }
    return [255, 255, 255];
  };
  const found = [];
  for (const node of root.querySelectorAll('*')) {
    const text = [...node.childNodes].filter((c) => c.nodeType === 3).map((c) => c.textContent).join('').trim();
    if (!text || node.closest('title, style, option')) continue;
    const style = getComputedStyle(node);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    const bg = background(node);
    const fg = over(rgba(node instanceof SVGElement ? style.fill : style.color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    found.push({ text: text.slice(0, 40), ratio: (hi + 0.05) / (lo + 0.05) });
  }
  return found;
}"""
# Un elemento más ancho que su caja solo está bien si se puede desplazar (nunca cortado sin barra).
CUT = """(root) => [...root.querySelectorAll('*'), root]
  .filter((n) => n.scrollWidth > n.clientWidth + 1 && n.clientWidth > 0)
  .filter((n) => !['auto', 'scroll'].includes(getComputedStyle(n).overflowX))
  .map((n) => n.className.baseVal ?? n.className)"""


def test_solo_b_warning_blames_the_right_design(server, browser):
    from playwright.sync_api import expect

    name, folder = lab_notebook(server, "solo_b")
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        lab = open_lab(page, server, "lab", name)
        step(lab, lambda: lab.get_by_label("solo el punto B").check())
        expect(lab.locator("svg [data-label^='after-save-a']")).to_have_count(0)
        step(lab, lambda: lab.locator("svg [data-label='after-effect-write:3']").click())
        step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
        # La trampa del informe: cambiar de variante entre Ejecutar y Reanudar.
        step(lab, lambda: lab.get_by_label("dos puntos (A y B)").check())
        step(lab, lambda: lab.get_by_role("button", name="Reanudar", exact=True).click())
        assert processes(folder) == ["corrida", "corrida --resume"]
        expect(lab.locator(".cl-warn")).to_contain_text("¡write_report se ejecutó 2 veces!")
        expect(lab.locator(".cl-warn")).to_contain_text("sin el punto A")
        expect(lab.locator(".cl-story")).to_contain_text("«solo el punto B»")
        expect(lab.locator(".cl-logpanel")).to_contain_text("AGENT_VARIANT=solo-b python agent.py --resume")
        expect(lab.locator("svg [data-state='absent']")).to_have_count(3)
        expect(lab.locator("svg [data-state='twice']")).not_to_have_count(0)
        shot(page, "solo_b")
    finally:
        page.close()
        server.shutdown_kernels()


@pytest.fixture
def dark_server(tmp_path):
    root = tmp_path / "raiz"
    root.mkdir()
    with jupyter_server(root, tmp_path / "jupyter", theme="JupyterLab Dark") as srv:
        yield srv


def test_dark_theme_contrast_and_a_1024_window(dark_server, browser):
    from playwright.sync_api import expect

    server = dark_server
    name, _ = lab_notebook(server, "oscuro")
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        lab = open_lab(page, server, "lab", name)
        expect(page.locator("body[data-jp-theme-light='false']")).to_have_count(1, timeout=STEP_MS)
        if not page.locator("#filebrowser").is_visible():  # con el explorador de archivos abierto
            page.locator("[data-id='filebrowser']").click()
        expect(page.locator("#filebrowser")).to_be_visible()
        step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
        step(lab, lambda: lab.get_by_role("button", name="Cortar checkpoint.json", exact=True).click())
        step(lab, lambda: lab.get_by_role("button", name="Reanudar", exact=True).click())
        expect(lab.locator(".cl-err")).not_to_have_count(0)  # la línea de error, en su color
        page.wait_for_timeout(300)  # el cambio de tema aplica sus variables CSS con una transición
        texts = lab.evaluate(CONTRAST)
        assert len(texts) > 50
        low = [t for t in texts if t["ratio"] < 4.5]
        assert not low, f"contraste por debajo de AA (4.5:1): {low[:5]}"
        assert lab.evaluate(CUT) == []
        box = lab.bounding_box()
        panel = page.locator(".jp-NotebookPanel").bounding_box()
        assert box["x"] + box["width"] <= panel["x"] + panel["width"] + 1
        shot(page, "oscuro_1024")
    finally:
        page.close()
        server.shutdown_kernels()


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_the_saved_notebook_shows_a_preview(server, browser, app):
    from playwright.sync_api import expect

    from harness.crash_lab.view import PREVIEW_LINE

    name = f"guardado_{app}.ipynb"
    nb = nbformat.read(LAB_NOTEBOOK, as_version=4)
    nbformat.write(nb, server.root / name)
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        open_notebook(page, server, app, name, wait_kernel=False)
        preview = page.locator(".jp-OutputArea-output", has_text=PREVIEW_LINE)
        expect(preview).to_be_visible(timeout=STEP_MS)
        image = preview.locator("img[src^='data:image/svg+xml']")
        expect(image).to_be_visible()
        assert image.evaluate("(img) => img.complete && img.naturalWidth") > 0  # la imagen se dibujó
    finally:
        page.close()
        server.shutdown_kernels()

"""El laboratorio de caídas en un navegador de verdad: Chromium de Debian, JupyterLab y Notebook 7.

Un solo servidor para el módulo, y una página por interfaz que queda abierta entre pruebas
(``SharedLab``): cada prueba vuelve a correr su única celda, que crea un laboratorio nuevo con su propia
carpeta de trabajo; la ventana y el tema se cambian en esa misma página, como lo haría una persona. Las
pruebas que recargan la página o apagan su kernel abren la suya. Los procesos se cuentan por un hecho,
no por tiempos: el agente de la prueba anota cada arranque en su registro antes de correr el agente de
referencia; y el kernel atiende los mensajes en orden, así que cuando la página muestra el resultado de
un clic posterior, un segundo clic perdido ya habría lanzado su proceso. Deja capturas en
``test-output/browser/`` (ignorada por git).
"""

import contextlib
import os
import re
import time

import nbformat
import pytest

from maintainer.jupyter_browser import choose_theme, jupyter_server, launch, open_notebook, run_all
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

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # sin Chromium, se salta (tests/conftest.py)


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


def write_lab(folder, test, before=""):
    """Lo que corre la celda del laboratorio para la prueba ``test``: el agente contador con su registro
    y un laboratorio con su carpeta de trabajo (``before``: código que corre antes de mostrarlo)."""
    agent = folder / "contador.py"
    agent.write_text(COUNTING_AGENT.format(log=str(folder / f"{test}.log"), agent=REFERENCE_AGENT))
    (folder / "antes.py").write_text(
        "from harness.crash_lab import CrashLab\n"
        f'lab = CrashLab(workdir="_trabajo/{test}", agent="contador.py")\n{before}',
        encoding="utf-8",
    )


def lab_notebook(server, name, before=""):
    """Un notebook con solo el laboratorio, en su propia carpeta: ``(ruta del notebook, carpeta)``."""
    folder = server.root / name
    folder.mkdir()
    write_lab(folder, "laboratorio", before)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    # Y una celda vacía debajo: Mayús+Enter en la del laboratorio pasa a ella, sin agregar otra.
    nb.cells = [
        nbformat.v4.new_code_cell('exec(open("antes.py", encoding="utf-8").read())\nlab'),
        nbformat.v4.new_code_cell(""),
    ]
    nbformat.write(nb, folder / "lab.ipynb")
    return f"{name}/lab.ipynb", folder


def processes(folder, test="laboratorio"):
    """Los arranques del agente que anotó el contador de la prueba ``test``, en orden."""
    path = folder / f"{test}.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def run_lab(page, root=".cl-root"):
    """Run All Cells, y el laboratorio ``root`` que muestra la celda, ya con sus controles encendidos."""
    run_all(page)
    return live_lab(page, root)


def rerun_lab(page, action):
    """``action`` (Run All, Mayús+Enter) vuelve a correr la celda: el laboratorio nuevo que muestra."""
    # El laboratorio anterior queda marcado: se espera el que crea esta corrida de la celda.
    page.evaluate("() => document.querySelectorAll('.cl-root').forEach((n) => n.dataset.old = '1')")
    action()
    return live_lab(page, ".cl-root:not([data-old])")


def live_lab(page, root):
    from playwright.sync_api import expect

    lab = page.locator(root)
    expect(lab).to_be_visible(timeout=STEP_MS)
    # Los controles se encienden cuando el kernel contesta a la vista (una vista guardada no tiene quién).
    expect(lab).not_to_have_class(re.compile(r"\bcl-saved\b"), timeout=STEP_MS)
    return lab


def open_lab(page, server, app, name):
    open_notebook(page, server, app, name)
    return run_lab(page)


def step(lab, action):
    """Pulsa y espera la pantalla nueva (el número de pantalla cambia)."""
    from playwright.sync_api import expect

    before = lab.get_attribute("data-ticket")
    action()
    expect(lab).not_to_have_attribute("data-ticket", before, timeout=STEP_MS)


def shot(page, name):
    os.makedirs(SCREENSHOT_DIR, exist_ok=True)
    page.locator(".cl-root").screenshot(path=os.path.join(SCREENSHOT_DIR, f"{name}.png"))


@contextlib.contextmanager
def own_page(server, browser, name):
    """Una página solo para la prueba que abre el notebook ``name``; al salir la cierra y apaga el
    kernel de ese notebook (no los de las páginas compartidas)."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    try:
        yield page
    finally:
        page.close()
        server.shutdown_kernels(name)


class SharedLab:
    """La página de una interfaz, abierta una vez en el módulo con un notebook de una sola celda, que
    cada prueba vuelve a correr (``fresh``): abrir la interfaz y arrancar un kernel era casi todo el
    tiempo de cada prueba."""

    def __init__(self, server, browser, app):
        self.name, self.folder = lab_notebook(server, f"compartido_{app}")
        self.page = browser.new_page(viewport={"width": 1280, "height": 1000})
        open_notebook(self.page, server, app, self.name)

    def fresh(self, test, before="", width=1280, height=1000):
        """El laboratorio de la prueba ``test``, recién creado en una ventana de ``width``×``height``."""
        write_lab(self.folder, test, before)
        self.page.set_viewport_size({"width": width, "height": height})
        return self.page, rerun_lab(self.page, lambda: run_all(self.page))

    def processes(self, test):
        return processes(self.folder, test)


@pytest.fixture(scope="module")
def labs(server, browser):
    """La ``SharedLab`` de cada interfaz, creada la primera vez que una prueba la pide."""
    opened = {}

    def get(app):
        if app not in opened:
            opened[app] = SharedLab(server, browser, app)
        return opened[app]

    yield get
    for shared in opened.values():
        shared.page.close()


THEMES = {"claro": "JupyterLab Light", "oscuro": "JupyterLab Dark"}


@contextlib.contextmanager
def in_theme(page, theme):
    """La página con el tema ``theme`` («claro», el de siempre, u «oscuro») mientras dure el bloque."""
    if theme == "claro":
        yield
        return
    choose_theme(page, THEMES[theme])
    try:
        yield
    finally:
        choose_theme(page, THEMES["claro"])


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_double_click_starts_one_process_and_the_picture_shows_the_resume(labs, app):
    from playwright.sync_api import expect

    shared, test = labs(app), f"doble_{app}"
    page, lab = shared.fresh(test)
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
    assert shared.processes(test) == ["corrida", "corrida --resume"]

    expect(lab.locator(".cl-branch")).to_contain_text("is_error")
    expect(lab.locator(".cl-diskpanel")).to_contain_text("write_report se ejecutó de verdad: 1 vez")
    # El dibujo muestra lo que hizo la reanudación: el save B rellenado y el turno 4 entero.
    expect(lab.locator("svg text", has_text="turno 4")).to_have_count(1)
    expect(lab.locator("svg [data-state='reanudación']")).to_have_count(5)
    expect(lab.locator("svg", has_text="reconcile: is_error")).to_have_count(1)
    expect(lab.locator(".cl-history li")).to_have_count(2)
    expect(lab.get_by_role("button", name="Reanudar", exact=True)).to_be_disabled()  # terminó en [done]

    step(lab, lambda: lab.get_by_role("button", name="Reiniciar", exact=True).click())
    assert shared.processes(test) == ["corrida", "corrida --resume"]
    expect(lab.locator(".cl-logpanel")).to_contain_text("[done]")  # el log no se pierde
    shot(page, f"doble_clic_{app}")


# Contraste WCAG de cada texto del laboratorio, con los estilos calculados por el navegador: el color
# del texto (``fill`` en el SVG) contra el primer fondo opaco detrás (la caja del SVG, o un ancestro).
# El cambio de tema aplica sus variables CSS con una transición: se mide cuando no queda ninguna en
# curso (las animaciones que no terminan, como el parpadeo del cursor, no son transiciones).
TRANSITIONS_DONE = """() => document.getAnimations()
  .every((a) => !(a instanceof CSSTransition) || a.playState !== 'running')"""
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
  .map((n) => `${n.localName}.${n.className.baseVal ?? n.className} «${n.textContent.slice(0, 60)}» \
${n.scrollWidth} > ${n.clientWidth}`)"""


@pytest.mark.parametrize("app", ["lab"])
def test_solo_b_warning_blames_the_right_design(labs, app):
    from playwright.sync_api import expect

    shared, test = labs(app), "solo_b"
    page, lab = shared.fresh(test)
    step(lab, lambda: lab.get_by_label("solo el punto B").check())
    expect(lab.locator("svg [data-label^='after-save-a']")).to_have_count(0)
    step(lab, lambda: lab.locator("svg [data-label='after-effect-write:3']").click())
    step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
    # La trampa del informe: cambiar de variante entre Ejecutar y Reanudar.
    step(lab, lambda: lab.get_by_label("dos puntos (A y B)").check())
    step(lab, lambda: lab.get_by_role("button", name="Reanudar", exact=True).click())
    assert shared.processes(test) == ["corrida", "corrida --resume"]
    expect(lab.locator(".cl-warn")).to_contain_text("¡write_report se ejecutó 2 veces!")
    expect(lab.locator(".cl-warn")).to_contain_text("sin el punto A")
    expect(lab.locator(".cl-story")).to_contain_text("«solo el punto B»")
    expect(lab.locator(".cl-logpanel")).to_contain_text("AGENT_VARIANT=solo-b python agent.py --resume")
    expect(lab.locator("svg [data-state='absent']")).to_have_count(3)
    expect(lab.locator("svg [data-state='twice']")).not_to_have_count(0)
    shot(page, "solo_b")


@pytest.mark.parametrize("app", ["lab"])
def test_dark_theme_contrast_and_a_1024_window(labs, app):
    from playwright.sync_api import expect

    page, lab = labs(app).fresh("oscuro", width=1024, height=768)
    with in_theme(page, "oscuro"):
        if not page.locator("#filebrowser").is_visible():  # con el explorador de archivos abierto
            page.locator("[data-id='filebrowser']").click()
        expect(page.locator("#filebrowser")).to_be_visible()
        step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
        step(lab, lambda: lab.get_by_role("button", name="Cortar checkpoint.json", exact=True).click())
        step(lab, lambda: lab.get_by_role("button", name="Reanudar", exact=True).click())
        expect(lab.locator(".cl-err")).not_to_have_count(0)  # la línea de error, en su color
        page.wait_for_function(TRANSITIONS_DONE, timeout=STEP_MS)  # los colores ya son los del tema
        texts = lab.evaluate(CONTRAST)
        assert len(texts) > 50
        low = [t for t in texts if t["ratio"] < 4.5]
        assert not low, f"contraste por debajo de AA (4.5:1): {low[:5]}"
        assert lab.evaluate(CUT) == []
        box = lab.bounding_box()
        panel = page.locator(".jp-NotebookPanel").bounding_box()
        assert box["x"] + box["width"] <= panel["x"] + panel["width"] + 1
        shot(page, "oscuro_1024")


# Cada imagen de la vista guardada se dibujó (y hay al menos una).
ALL_DRAWN = """(out) => {
  const imgs = [...out.querySelectorAll("img[src^='data:image/svg+xml']")];
  return imgs.length > 0 && imgs.every((img) => img.complete && img.naturalWidth > 0);
}"""


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_the_saved_notebook_shows_a_preview(server, browser, app):
    from playwright.sync_api import expect

    from harness.crash_lab.view import PREVIEW_LINE

    name = f"guardado_{app}.ipynb"
    nb = nbformat.read(LAB_NOTEBOOK, as_version=4)
    nbformat.write(nb, server.root / name)
    with own_page(server, browser, name) as page:
        open_notebook(page, server, app, name, wait_kernel=False)
        preview = page.locator(".jp-OutputArea-output", has_text=PREVIEW_LINE)
        expect(preview).to_be_visible(timeout=STEP_MS)
        expect(preview.locator("img[src^='data:image/svg+xml']").first).to_be_visible()
        page.wait_for_function(ALL_DRAWN, arg=preview.element_handle(), timeout=STEP_MS)  # cada paso


# —— Teclado, lectores de pantalla, notebooks guardados y pantallas chicas (issue 27) ——

CELLS = ".jp-Notebook .jp-Cell"
FOCUS_INSIDE = "(root) => root.contains(document.activeElement) && document.activeElement !== root"
# El contraste del borde de foco de un hueco: el trazo de su rectángulo contra el fondo del dibujo.
FOCUS_RING = """(gap) => {
  const rgba = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  let bg = [255, 255, 255];
  for (let n = gap.closest('.cl-root'); n; n = n.parentElement) {
    const c = rgba(getComputedStyle(n).backgroundColor);
    if (c.length === 3 || (c.length > 3 && c[3] > 0.99)) { bg = c; break; }
  }
  const rect = gap.querySelector('rect');
  const style = getComputedStyle(rect);
  if (style.stroke === 'none' || parseFloat(style.strokeWidth) < 2) return 0;
  const [hi, lo] = [lum(rgba(style.stroke)), lum(bg)].sort((a, b) => b - a);
  return (hi + 0.05) / (lo + 0.05);
}"""
# El texto más chico del dibujo, en píxeles de pantalla (tamaño de letra × escala del SVG).
SMALLEST_TEXT = """(svg) => Math.min(...[...svg.querySelectorAll('text')]
  .map((t) => parseFloat(getComputedStyle(t).fontSize) * svg.getScreenCTM().a))"""
ENGLISH = re.compile(r"\b(rerun|hit|none)\b|\w\(s\)|\(es\)")


def focused_label(page):
    return page.evaluate("() => document.activeElement && document.activeElement.getAttribute('data-label')")


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_keys_stay_in_the_lab_and_focus_comes_back(labs, app):
    from playwright.sync_api import expect

    shared, test = labs(app), f"teclado_{app}"
    page, lab = shared.fresh(test)
    cells = page.locator(CELLS).count()
    select = lab.locator("select")
    # ArrowDown en «Caída en» cambia la caída elegida (no la celda activa del notebook).
    select.focus()
    expect(select).to_have_value("after-tool:3")
    step(lab, lambda: page.keyboard.press("ArrowDown"))
    expect(select).to_have_value("after-effect-write:3")
    expect(select).to_be_focused()  # el foco vuelve al menú con la pantalla nueva
    # Los atajos del notebook no ven las teclas del laboratorio: ni «a», «b» (celdas nuevas) ni
    # «x», «d d» (cortar o borrar la celda del laboratorio).
    run = lab.get_by_role("button", name="Ejecutar", exact=True)
    run.focus()
    for key in ["a", "b", "x", "d", "d"]:
        page.keyboard.press(key)
    # Enter en Ejecutar: el clic llega, y su pantalla es la barrera para las teclas de antes.
    step(lab, lambda: page.keyboard.press("Enter"))
    expect(lab.locator(".cl-status")).to_contain_text("código de salida 137")
    assert page.locator(CELLS).count() == cells
    expect(lab).to_have_count(1)
    expect(run).to_be_focused()
    # Espacio en Reanudar; al terminar en [done] Reanudar se apaga y el foco pasa al siguiente control
    # activo (Reiniciar), como dice la ayuda del laboratorio.
    lab.get_by_role("button", name="Reanudar", exact=True).focus()
    step(lab, lambda: page.keyboard.press(" "))
    assert shared.processes(test) == ["corrida", "corrida --resume"]
    expect(lab.get_by_role("button", name="Reanudar", exact=True)).to_be_disabled()
    assert lab.evaluate(FOCUS_INSIDE)
    expect(lab.get_by_role("button", name="Reiniciar", exact=True)).to_be_focused()
    expect(lab.locator(".cl-help")).to_contain_text("pasa al siguiente control activo")
    # El dibujo es una sola parada del tabulador (el hueco elegido); las flechas van entre huecos.
    gaps = lab.locator("svg [role='button']")
    expect(gaps).to_have_count(12)
    expect(lab.locator("svg [tabindex='0']")).to_have_count(1)
    chosen = lab.locator("svg [aria-pressed='true']")
    expect(chosen).to_have_attribute("data-label", "after-effect-write:3")
    chosen.focus()
    page.keyboard.press("ArrowRight")
    assert focused_label(page) == "after-save-b:3"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert focused_label(page) == "after-tool:3"
    # Arriba y abajo van entre turnos (el mismo hueco), sin pasar del primero ni del último.
    page.keyboard.press("ArrowUp")
    assert focused_label(page) == "after-tool:2"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    assert focused_label(page) == "after-tool:1"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert focused_label(page) == "after-tool:3"
    assert page.evaluate(f"() => ({FOCUS_RING})(document.activeElement)") >= 3  # foco visible, 3:1
    step(lab, lambda: page.keyboard.press("Enter"))
    expect(select).to_have_value("after-tool:3")
    expect(lab.locator("svg [aria-pressed='true']")).to_have_attribute("data-label", "after-tool:3")
    assert focused_label(page) == "after-tool:3"  # el foco vuelve al hueco nuevo
    assert page.locator(CELLS).count() == cells
    shot(page, f"teclado_{app}")


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_screen_reader_names_reasons_and_spanish_words(labs, app):
    from playwright.sync_api import expect

    # 104 pasos antes de mostrarlo: la historia cuenta pasado el 99 sin perder un dígito.
    page, lab = labs(app).fresh(f"lector_{app}", before="for _ in range(104):\n    lab.reset()\n")
    svg = lab.locator(".cl-picture svg")
    expect(svg).to_have_attribute("role", "group")  # un grupo con botones, no una imagen
    expect(svg).to_have_attribute("aria-label", re.compile(r"\S"))
    expect(lab.get_by_role("button", name=re.compile(r"^Caída en turno"))).to_have_count(12)
    expect(lab.locator("svg [aria-pressed='true']")).to_have_count(1)
    expect(lab.locator("svg [aria-pressed='false']")).to_have_count(11)
    names = lab.locator(".cl-radio").evaluate_all("(nodes) => nodes.map((n) => n.textContent)")
    assert names and all(n == n.strip() for n in names), names  # nombres sin espacios delante
    expect(lab.get_by_role("radio", name="solo el punto B", exact=True)).to_have_count(1)
    expect(lab.get_by_role("combobox", name="Caída en", exact=True)).to_have_count(1)
    last = lab.locator(".cl-history li").last
    expect(last).to_contain_text("104.")
    number = last.locator(".cl-n").bounding_box()
    box = lab.bounding_box()
    assert number["x"] >= box["x"] and number["width"] > 0  # el número entero, dentro del laboratorio

    # «solo B» con la caída después de la herramienta del turno 1: no queda punto de control.
    step(lab, lambda: lab.get_by_label("solo el punto B").check())
    step(lab, lambda: lab.locator("svg [data-label='after-tool:1']").click())
    step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
    resume = lab.get_by_role("button", name="Reanudar", exact=True)
    expect(resume).to_be_disabled()
    reason = resume.evaluate("(b) => document.getElementById(b.getAttribute('aria-describedby')).textContent")
    assert "murió" in reason and "Pulsa Ejecutar primero" not in reason, reason
    menu = lab.locator("select").evaluate(
        "(s) => document.getElementById(s.getAttribute('aria-describedby')).textContent"
    )
    assert menu == "", menu  # la razón de Reanudar no describe al menú

    step(lab, lambda: lab.get_by_label("dos puntos (A y B)").check())
    step(lab, lambda: lab.locator("svg [data-label='after-effect-write:2']").click())
    step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
    step(lab, lambda: resume.click())
    expect(lab.locator(".cl-branch")).to_contain_text("acierto")
    # Las palabras del log de la lección van en letra de código.
    expect(lab.locator(".cl-branch code")).to_have_text("acierto en el registro")
    text = lab.inner_text()
    assert not ENGLISH.findall(text), ENGLISH.findall(text)


# Cada caja y cada hueco del dibujo en la pantalla: [qué es, izquierda, derecha].
PICTURE_PARTS = """(svg) => [...svg.querySelectorAll('g[data-state], [data-label]')].map((n) => {
  const r = n.getBoundingClientRect();
  return [n.dataset.label || n.textContent, r.left, r.right];
})"""
# Los dibujos de la lección (figures.py: cada paso, una imagen SVG): [texto alternativo, la letra más
# chica del SVG por la escala con que se muestra la imagen, su borde derecho].
FIGURE_TEXT = """(cell) => [...cell.querySelectorAll('img[src^="data:image/svg+xml;base64,"]')].map((img) => {
  const sizes = [...atob(img.src.split(',')[1]).matchAll(/font-size="([\\d.]+)"/g)].map((m) => Number(m[1]));
  const box = img.getBoundingClientRect();
  return [img.alt, Math.min(...sizes) * box.width / img.naturalWidth, box.right];
})"""
FIGURES = (
    "from harness.notebook import figures\n"
    "figures.turn_timeline('after-effect-write')\nfigures.ab_window()\nfigures.solo_b()\n"
    "figures.messages_at_points()\n"
)
LONG_NAME = "una_carpeta_de_trabajo_con_un_nombre_larguisimo_y_sin_un_solo_espacio"
MIN_PX = 11
# (interfaz, ancho, alto, con el explorador de archivos abierto): el de JupyterLab por omisión a 1280,
# Notebook 7, 800 y 400 px.
WINDOWS = [
    ("lab", 1280, 720, True),
    ("lab", 800, 600, True),
    ("lab", 400, 720, False),
    ("notebook", 1280, 720, False),
    ("notebook", 400, 720, False),
]


def file_browser(page, app, shown):
    """Abre o cierra el explorador de archivos de JupyterLab (Notebook 7 no lo tiene al lado)."""
    from playwright.sync_api import expect

    if app != "lab":
        return
    if page.locator("#filebrowser").is_visible() != shown:
        page.locator("[data-id='filebrowser']").click()
    expect(page.locator("#filebrowser")).to_be_visible(visible=shown)


@pytest.mark.parametrize(
    ("app", "width", "height", "files"), WINDOWS, ids=[f"{a}-{w}{'-archivos' * f}" for a, w, _, f in WINDOWS]
)
def test_every_column_of_the_picture_fits_and_no_picture_letter_is_under_11_px(
    labs, app, width, height, files
):
    from playwright.sync_api import expect

    shared = labs(app)
    page, lab = shared.fresh(
        f"columnas_{app}_{width}_{LONG_NAME}", before=FIGURES, width=width, height=height
    )
    file_browser(page, app, files)
    step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
    picture, svg = lab.locator(".cl-picture"), lab.locator(".cl-picture svg")
    # Los cuatro pasos de cada turno (punto A, herramienta, registro, punto B) y sus huecos, dentro del
    # dibujo y de la ventana, sin desplazar nada a lo ancho.
    box = picture.bounding_box()
    right = min(box["x"] + box["width"], width)
    parts = svg.evaluate(PICTURE_PARTS)
    assert len(parts) == 12 + 12
    outside = [name for name, left, end in parts if left < box["x"] - 0.5 or end > right + 0.5]
    assert outside == [], f"pasos fuera de la vista a {width} px: {outside}"
    assert picture.evaluate("(p) => p.scrollWidth <= p.clientWidth")
    assert lab.evaluate(CUT) == []
    assert lab.locator(".cl-picture svg").evaluate(OUT_OF_BOX) == []
    # El nombre largo de la carpeta se corta en líneas, dentro del laboratorio.
    name = lab.locator(".cl-header code")
    name_box, lab_box = name.bounding_box(), lab.bounding_box()
    assert name_box["x"] + name_box["width"] <= lab_box["x"] + lab_box["width"] + 0.5
    assert lab_box["x"] + lab_box["width"] <= width
    if lab_box["width"] < 400:  # el nombre (unos 800 px) no cabe en una línea: va en varias
        assert name.evaluate("(c) => c.getClientRects().length") > 1
    # Ninguna letra del laboratorio ni de los dibujos de la lección por debajo de 11 px en la pantalla.
    assert page.evaluate(SMALL_TEXT, [lab.element_handle(), MIN_PX]) == []
    cell = page.locator(CELLS, has=lab)
    figures = cell.evaluate(FIGURE_TEXT)
    assert len(figures) >= 4 * 3
    small = [(alt, px) for alt, px, _ in figures if px < MIN_PX]
    assert small == [], f"letra de menos de {MIN_PX} px en los dibujos: {small[:3]}"
    assert max(end for _, _, end in figures) <= width
    # La última caída se elige con un clic, en su lugar.
    step(lab, lambda: lab.locator("svg [data-label='after-save-b:3']").click())
    expect(lab.locator("select")).to_have_value("after-save-b:3")
    shot(page, f"columnas_{app}_{width}")


# Cada imagen de la vista guardada: [texto alternativo, la letra más chica del SVG por la escala con que
# se muestra, izquierda, derecha, arriba].
PREVIEW_IMAGES = """(root) => [...root.querySelectorAll('img[src^="data:image/svg+xml;base64,"]')].map((img) => {
  const sizes = [...atob(img.src.split(',')[1]).matchAll(/font-size=["']([\\d.]+)["']/g)].map((m) => Number(m[1]));
  const box = img.getBoundingClientRect();
  return [img.alt, Math.min(...sizes) * box.width / img.naturalWidth, box.left, box.right, box.top];
})"""


def preview_notebook(folder):
    """Un notebook con la vista guardada del laboratorio tal como la arma el código de hoy (lo que el
    notebook del curso guarda: el HTML, sin la vista del widget), de una corrida que murió en el turno 3
    y con otra caída elegida: las dos marcas."""
    from harness.crash_lab import CrashLab

    lab = CrashLab(workdir=folder / "_trabajo", agent=REFERENCE_AGENT)
    lab.choose(label="after-tool:3", variant="dos-puntos")
    lab.run()
    lab.choose(label="after-save-b:2", variant="dos-puntos")
    data, _ = lab._repr_mimebundle_()
    output = nbformat.v4.new_output("display_data", {k: data[k] for k in ("text/html", "text/plain")})
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("lab", outputs=[output])]
    nbformat.write(nb, folder / "vista.ipynb")
    return nb


def check_preview(page, root, width):
    """La vista guardada a este ancho: cada paso a su tamaño (nunca achicado), dentro de la salida y de
    la ventana, sin desplazar nada a lo ancho, y ninguna letra (del HTML o de las imágenes) de menos de
    11 px. Y los pasos van de a cuatro, dos o uno por línea, los más que quepan (como el laboratorio vivo)."""
    images = root.evaluate(PREVIEW_IMAGES)
    assert len(images) == 3 * 4
    small = [(alt, px) for alt, px, *_ in images if px < MIN_PX]
    assert small == [], f"letra de menos de {MIN_PX} px en la vista guardada a {width} px: {small[:3]}"
    box = root.bounding_box()
    right = min(box["x"] + box["width"], width)
    outside = [alt for alt, _, left, end, _ in images if left < box["x"] - 0.5 or end > right + 0.5]
    assert outside == [], f"pasos fuera de la vista a {width} px: {outside[:3]}"
    assert root.evaluate("(r) => r.scrollWidth <= r.clientWidth")
    assert page.evaluate(SMALL_TEXT, [root.element_handle(), MIN_PX]) == []
    first_turn = [(left, end, top) for alt, _, left, end, top in images if alt.startswith("Turno 1,")]
    per_line = sum(abs(top - first_turn[0][2]) < 1 for _, _, top in first_turn)
    step = first_turn[0][1] - first_turn[0][0]
    room = root.evaluate("(r) => r.clientWidth")
    assert per_line == (4 if room >= 4 * step else 2 if room >= 2 * step else 1), (width, room, per_line)


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_the_saved_preview_reflows_and_no_letter_is_under_11_px(server, browser, app):
    """La vista guardada (sin kernel ni JavaScript del laboratorio) a cada ancho de WINDOWS: los pasos
    pasan de línea como en el laboratorio vivo (cuatro, dos o uno), nunca se achican."""
    from playwright.sync_api import expect

    from harness.crash_lab.view import PREVIEW_LINE

    folder = server.root / f"vista_{app}"
    folder.mkdir()
    preview_notebook(folder)
    name = f"vista_{app}/vista.ipynb"
    with own_page(server, browser, name) as page:
        open_notebook(page, server, app, name, wait_kernel=False)
        root = page.locator(".jp-OutputArea-output .cl-preview", has_text=PREVIEW_LINE)
        expect(root).to_be_visible(timeout=STEP_MS)
        for shown_app, width, height, files in WINDOWS:
            if shown_app != app:
                continue
            page.set_viewport_size({"width": width, "height": height})
            file_browser(page, app, files)
            page.wait_for_function("() => [...document.images].every((i) => i.complete)")
            check_preview(page, root, width)
            page.screenshot(path=os.path.join(SCREENSHOT_DIR, f"vista_{app}_{width}.png"), full_page=True)


@pytest.mark.parametrize("width", [1280, 800, 400])
def test_the_saved_preview_without_scripts_or_styles_keeps_its_letters(browser, tmp_path, width):
    """Lo que muestra nbviewer (el HTML de nbconvert) y GitHub (sin scripts): la vista guardada en una
    página sin JavaScript, a cada ancho; sin red, nada que cargar de afuera."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(preview_notebook(tmp_path))
    context = browser.new_context(java_script_enabled=False, viewport={"width": width, "height": 720})
    try:
        page = context.new_page()
        page.route(re.compile(r"^(?!data:)"), lambda route: route.abort())
        page.set_content(body, wait_until="domcontentloaded")
        root = page.locator(".cl-preview")
        page.wait_for_function("() => [...document.images].every((i) => i.complete)")
        check_preview(page, root, width)
    finally:
        context.close()


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_shift_enter_on_a_button_runs_the_cell_and_never_presses_it(labs, app):
    """Mayús+Enter ejecuta la celda, como en todo el notebook, también con el foco en Reiniciar (que
    borraría los archivos). El kernel atiende los mensajes en orden: cuando se ve el laboratorio que
    crea la celda, un Reiniciar pulsado antes ya habría borrado los archivos."""
    shared, test = labs(app), f"mayus_enter_{app}"
    page, lab = shared.fresh(test, width=1280, height=1000)
    checkpoint = shared.folder / "_trabajo" / test / "checkpoint.json"
    step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
    assert checkpoint.exists()
    # Con el teclado: el foco en Reiniciar.
    lab.get_by_role("button", name="Reiniciar", exact=True).focus()
    lab = rerun_lab(page, lambda: page.keyboard.press("Shift+Enter"))
    assert checkpoint.exists()
    # Con el ratón: el clic en Reiniciar borra los archivos; después, Enter (editar la celda) y Mayús+Enter
    # no lo vuelven a pulsar.
    step(lab, lambda: lab.get_by_role("button", name="Reiniciar", exact=True).click())
    assert not checkpoint.exists()
    checkpoint.write_text("{}", encoding="utf-8")
    page.keyboard.press("Enter")
    rerun_lab(page, lambda: page.keyboard.press("Shift+Enter"))
    assert checkpoint.exists()
    assert shared.processes(test) == ["corrida"]


def save(page):
    """File → Save Notebook por el menú, y espera a que el servidor guarde el archivo."""
    with page.expect_response(
        lambda r: r.request.method == "PUT" and "/api/contents/" in r.url, timeout=STEP_MS
    ) as saved:
        page.get_by_role("menuitem", name="File", exact=True).click()
        page.get_by_role("menuitem", name=re.compile(r"^Save Notebook(?! As)")).click()
    assert saved.value.ok


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_a_saved_notebook_shows_its_last_state_and_the_widget_comes_back(server, browser, app):
    from playwright.sync_api import expect

    name, folder = lab_notebook(server, f"recarga_{app}")
    with own_page(server, browser, name) as page:
        lab = open_lab(page, server, app, name)
        step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
        expect(lab.locator(".cl-status")).to_contain_text("código de salida 137")
        save(page)
        saved = nbformat.read(folder / "lab.ipynb", as_version=4)
        assert "widgets" in saved.metadata  # la página guarda el estado del laboratorio al guardar

        # Con el kernel vivo, el widget vuelve tal cual y responde.
        page.reload()
        lab = page.locator(".cl-root")
        expect(lab).to_be_visible(timeout=STEP_MS)
        expect(lab).not_to_have_class(re.compile(r"\bcl-saved\b"), timeout=STEP_MS)
        expect(lab.locator("svg .cl-mark-kill")).to_have_count(1)
        step(lab, lambda: lab.get_by_role("button", name="Reanudar", exact=True).click())
        assert processes(folder) == ["corrida", "corrida --resume"]
        save(page)

        # Sin ese kernel (apagado; el notebook arranca uno nuevo): el dibujo del último estado y la
        # línea que pide ejecutar la celda, nunca «Error displaying widget».
        server.shutdown_kernels(name)
        page.reload()
        server.wait_for_idle_kernel(name)
        lab = page.locator(".cl-root")
        expect(lab).to_be_visible(timeout=STEP_MS)
        expect(lab.locator(".cl-offline")).to_be_visible(timeout=STEP_MS)
        expect(lab.locator(".cl-offline")).to_contain_text("ejecuta esta celda")
        expect(lab.locator(".cl-picture svg")).to_be_visible()
        expect(lab.locator("svg [data-state='reanudación']")).not_to_have_count(0)  # el último estado
        expect(lab.get_by_role("button", name="Ejecutar", exact=True)).to_be_disabled()
        expect(page.get_by_text("Error displaying widget")).to_have_count(0)
        assert processes(folder) == ["corrida", "corrida --resume"]
        shot(page, f"recarga_{app}")


SAVED_LABS = "application/vnd.jupyter.widget-state+json"
SHOWN_LABS = "() => [...(window[Symbol.for('crash-lab-shown')] || new Map()).keys()].sort()"


def test_six_run_alls_and_a_save_keep_only_the_labs_on_screen(server, browser):
    """Dos laboratorios a la vista y uno que solo se usa desde Python (como «fijo» en el laboratorio):
    seis Run All y un guardado dejan en el archivo los dos de la pantalla, no dieciocho."""
    from playwright.sync_api import expect

    name, folder = lab_notebook(server, "seis_corridas")
    nb = nbformat.read(folder / "lab.ipynb", as_version=4)
    nb.cells[1:] = [
        nbformat.v4.new_code_cell(
            'fijo = CrashLab(workdir="_trabajo/fijo", agent="contador.py")\nfijo.reset()'
        ),
        nbformat.v4.new_code_cell('otro = CrashLab(workdir="_trabajo/otro", agent="contador.py")\notro'),
    ]
    nbformat.write(nb, folder / "lab.ipynb")
    with own_page(server, browser, name) as page:
        open_notebook(page, server, "lab", name)
        for _ in range(6):
            page.evaluate("() => document.querySelectorAll('.cl-root').forEach((n) => n.dataset.old = '1')")
            run_all(page)
            fresh = page.locator(".cl-root:not([data-old]):not(.cl-saved)")
            expect(fresh).to_have_count(2, timeout=STEP_MS)
        expect(page.locator(".cl-root")).to_have_count(2)
        assert saved_labs(page, folder) == page.evaluate(SHOWN_LABS)
        assert len(page.evaluate(SHOWN_LABS)) == 2
        # La salida de «otro», borrada: su laboratorio sigue vivo en el kernel, pero ya no se ve.
        page.locator(CELLS).nth(2).locator(".jp-InputPrompt").click()
        page.get_by_role("menuitem", name="Edit", exact=True).click()
        page.get_by_role("menuitem", name=re.compile(r"^Clear (Cell )?Output$")).click()
        expect(page.locator(".cl-root")).to_have_count(1, timeout=STEP_MS)
        assert saved_labs(page, folder) == page.evaluate(SHOWN_LABS)
        assert len(page.evaluate(SHOWN_LABS)) == 1


def saved_labs(page, folder):
    """Guarda el notebook y devuelve los ids de los laboratorios que quedaron en el archivo."""
    save(page)
    saved = nbformat.read(folder / "lab.ipynb", as_version=4).metadata["widgets"][SAVED_LABS]["state"]
    return sorted(id_ for id_, entry in saved.items() if "ticket" in entry["state"].get("view", {}))


# —— Las teclas del notebook, el foco visible, la letra y el comando 1 (issue 36) ——


def is_save(response):
    return response.request.method == "PUT" and response.url.split("?")[0].endswith(".ipynb")


def is_checkpoint(response):
    return response.request.method == "POST" and response.url.split("?")[0].endswith("/checkpoints")


def ctrl_s_saves(page):
    """Ctrl+S con el foco donde esté: el servidor recibe el archivo (PUT) y después el punto de control
    que crea «Save» (POST …/checkpoints), lo último que hace JupyterLab al guardar; un Ctrl+S que llega
    mientras guarda el anterior no hace nada, así que se espera hasta ahí."""
    with (
        page.expect_response(is_save, timeout=STEP_MS) as put,
        page.expect_response(is_checkpoint, timeout=STEP_MS) as cp,
    ):
        page.keyboard.press("Control+s")
    return put.value.ok and cp.value.ok


def lab_controls(lab):
    """Cada control del laboratorio que puede tener el foco ahora (los apagados no): variantes, menú, el
    hueco del dibujo que está en el orden del tabulador, los botones y los dos desplegables."""
    return [
        *lab.locator(".cl-radio input").all(),
        lab.locator("select"),
        lab.locator("svg [tabindex='0']"),
        *[b for b in lab.locator(".cl-buttons button").all() if b.is_enabled()],
        *lab.locator(".cl-fold summary").all(),
    ]


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_ctrl_and_cmd_keys_reach_the_notebook_and_letters_stay_in_the_lab(labs, app):
    from playwright.sync_api import expect

    shared, test = labs(app), f"atajos_{app}"
    page, lab = shared.fresh(test)
    cells = page.locator(CELLS)
    count = cells.count()
    run = lab.get_by_role("button", name="Ejecutar", exact=True)
    run.focus()
    step(lab, lambda: page.keyboard.press("Enter"))
    expect(run).to_be_focused()
    # Con el foco en Ejecutar después de una corrida, Ctrl+S guarda el archivo del notebook.
    before = (shared.folder / "lab.ipynb").read_text(encoding="utf-8")
    assert ctrl_s_saves(page)
    assert (shared.folder / "lab.ipynb").read_text(encoding="utf-8") != before  # ahora guarda la salida
    # Desde cada control del laboratorio.
    for control in lab_controls(lab):
        control.focus()
        assert ctrl_s_saves(page), control
    # La paleta de comandos (Ctrl+Mayús+C) se abre desde un botón del laboratorio.
    run.focus()
    page.keyboard.press("Control+Shift+c")
    palette = page.locator(".lm-CommandPalette:visible")
    expect(palette).to_have_count(1, timeout=STEP_MS)
    page.keyboard.press("Escape")
    expect(palette).to_have_count(0, timeout=STEP_MS)
    if app == "lab":  # Ctrl+B abre y cierra el panel lateral (Notebook 7 no tiene ese atajo)
        browser_panel = page.locator("#filebrowser")
        shown = browser_panel.is_visible()
        run.focus()
        page.keyboard.press("Control+b")
        expect(browser_panel).to_be_visible(visible=not shown, timeout=STEP_MS)
    # Las letras quedan en el laboratorio: ninguna celda nueva, borrada, convertida a Markdown ni
    # ejecutada otra vez (Mayús+Enter sí ejecuta la celda: test_shift_enter_on_a_button_runs_the_cell).
    lab.locator(".cl-radio input:checked").focus()
    ticket = lab.get_attribute("data-ticket")
    for key in ["a", "b", "x", "c", "v", "m", "y", "d", "d", "z"]:
        page.keyboard.press(key)
    lab.get_by_role("button", name="Reiniciar", exact=True).focus()
    step(lab, lambda: page.keyboard.press("Enter"))  # Enter en Reiniciar: la barrera de las de antes
    assert int(lab.get_attribute("data-ticket")) == int(ticket) + 1  # un solo paso, el de Enter
    assert cells.count() == count
    expect(page.locator(".jp-MarkdownCell")).to_have_count(0)
    expect(lab).to_have_count(1)
    assert shared.processes(test) == ["corrida"]  # la celda no se volvió a ejecutar


# Cuántos píxeles cambian al menos 3:1 entre dos capturas del mismo recorte (con foco y sin él).
FOCUS_CHANGE = """async ([before, after]) => {
  const pixels = async (b64) => {
    const image = await createImageBitmap(await (await fetch('data:image/png;base64,' + b64)).blob());
    const canvas = new OffscreenCanvas(image.width, image.height);
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    return context.getImageData(0, 0, image.width, image.height).data;
  };
  const lum = (d, i) => {
    const c = [d[i], d[i + 1], d[i + 2]].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const [a, b] = [await pixels(before), await pixels(after)];
  let changed = 0;
  for (let i = 0; i < a.length; i += 4) {
    const [hi, lo] = [lum(a, i), lum(b, i)].sort((x, y) => y - x);
    if ((hi + 0.05) / (lo + 0.05) >= 3) changed++;
  }
  return changed;
}"""
MARGIN = 8  # el recorte: el control y lo que lo rodea (el borde de foco va por fuera)


def focus_change(page, control):
    """(píxeles que cambian al menos 3:1 al tomar el foco, área de un perímetro de 2 px del control):
    la medida de WCAG 2.2 para un indicador de foco (2.4.13)."""
    import base64

    control.scroll_into_view_if_needed()  # el recorte entero dentro de la ventana
    box = control.bounding_box()
    clip = {
        "x": box["x"] - MARGIN,
        "y": box["y"] - MARGIN,
        "width": box["width"] + 2 * MARGIN,
        "height": box["height"] + 2 * MARGIN,
    }
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    without = page.screenshot(clip=clip, animations="disabled")
    control.focus()
    assert control.evaluate("(n) => n.matches(':focus-visible')"), control
    with_focus = page.screenshot(clip=clip, animations="disabled")
    images = [base64.b64encode(png).decode("ascii") for png in (without, with_focus)]
    return page.evaluate(FOCUS_CHANGE, images), 4 * (box["width"] + box["height"]) - 16


@pytest.mark.parametrize("theme", ["claro", "oscuro"])
@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_every_control_shows_its_focus_at_3_to_1(labs, app, theme):
    from playwright.sync_api import expect

    shared, test = labs(app), f"foco_{app}_{theme}"
    page, lab = shared.fresh(test)
    with in_theme(page, theme):
        run = lab.get_by_role("button", name="Ejecutar", exact=True)
        run.focus()
        step(lab, lambda: page.keyboard.press("Enter"))  # después de una corrida: Reanudar encendido
        expect(lab.get_by_role("button", name="Reanudar", exact=True)).to_be_enabled()
        light = "true" if theme == "claro" else "false"
        expect(page.locator(f"body[data-jp-theme-light='{light}']")).to_have_count(1, timeout=STEP_MS)
        page.wait_for_function(TRANSITIONS_DONE, timeout=STEP_MS)
        page.mouse.move(0, 0)  # sin el puntero encima de ningún control
        weak = {}
        for control in lab_controls(lab):
            changed, needed = focus_change(page, control)
            if changed < needed:
                weak[control.evaluate("(n) => n.getAttribute('aria-label') || n.textContent || n.value")] = (
                    changed,
                    needed,
                )
        assert weak == {}, f"foco que no se ve (píxeles que cambian 3:1, los que hacen falta): {weak}"
        shot(page, f"foco_{app}_{theme}")


# Las letras de una palabra partidas entre dos líneas: dos caracteres de palabra seguidos (letras,
# cifras, «_») cuyo segundo cae debajo del primero. Cortar en un «.», un «/» o un espacio está bien.
BROKEN_WORDS = r"""(panel) => {
  const broken = [];
  const walker = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  const rect = (node, i) => { range.setStart(node, i); range.setEnd(node, i + 1); return range.getBoundingClientRect(); };
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    for (let i = 0; i + 1 < text.length; i++) {
      if (!/\w/.test(text[i]) || !/\w/.test(text[i + 1])) continue;
      const [a, b] = [rect(node, i), rect(node, i + 1)];
      if (a.height && b.top >= a.bottom - 2) broken.push(text.slice(Math.max(0, i - 8), i + 9));
    }
  }
  return broken;
}"""
# Los textos del laboratorio más chicos que ``size`` píxeles de pantalla (los del dibujo, por la escala
# del SVG): [texto, tamaño].
SMALL_TEXT = """([root, size]) => [...root.querySelectorAll('*')]
  .filter((n) => [...n.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim()))
  .filter((n) => !n.closest('title, style') && n.getClientRects().length)
  .map((n) => [n.textContent.slice(0, 30), parseFloat(getComputedStyle(n).fontSize) * (n.ownerSVGElement ? n.ownerSVGElement.getScreenCTM().a : 1)])
  .filter(([, px]) => px < size - 0.01)"""
# Los textos del dibujo que se salen de su caja.
OUT_OF_BOX = """(svg) => [...svg.querySelectorAll('g[data-state]')].flatMap((g) => {
  const box = g.querySelector('rect.cl-box').getBBox();
  return [...g.querySelectorAll('text')].filter((t) => {
    const b = t.getBBox();
    return b.x < box.x + 2 || b.x + b.width > box.x + box.width - 2 || b.y < box.y || b.y + b.height > box.y + box.height;
  }).map((t) => t.textContent);
})"""


@pytest.mark.parametrize(
    ("app", "width", "height"), [("lab", 1280, 720), ("lab", 1400, 1000), ("notebook", 1280, 720)]
)
def test_file_names_and_log_words_never_break_and_letters_are_the_prose_size(labs, app, width, height):
    from playwright.sync_api import expect

    page, lab = labs(app).fresh(f"palabras_{app}_{width}", width=width, height=height)
    if app == "lab":  # con el explorador de archivos abierto
        if not page.locator("#filebrowser").is_visible():
            page.locator("[data-id='filebrowser']").click()
        expect(page.locator("#filebrowser")).to_be_visible()
    step(lab, lambda: lab.get_by_role("button", name="Ejecutar", exact=True).click())
    step(lab, lambda: lab.get_by_role("button", name="Cortar checkpoint.json", exact=True).click())
    step(lab, lambda: lab.get_by_role("button", name="Reanudar", exact=True).click())
    expect(lab.locator(".cl-err")).not_to_have_count(0)  # un log con líneas de error largas
    names = lab.locator(".cl-diskpanel td:first-child code")
    expect(names).not_to_have_count(0)
    assert lab.locator(".cl-diskpanel").evaluate(BROKEN_WORDS) == []
    assert lab.locator(".cl-logpanel").evaluate(BROKEN_WORDS) == []
    assert all(len(n.evaluate("(c) => [...c.getClientRects()]")) == 1 for n in names.all())  # una línea
    assert lab.evaluate(CUT) == []  # lo que no cabe se desplaza
    prose = page.evaluate(
        "() => parseFloat(getComputedStyle(document.body).getPropertyValue('--jp-content-font-size1'))"
    )
    assert prose == 14
    assert page.evaluate(SMALL_TEXT, [lab.element_handle(), prose]) == []  # ni una más chica que la prosa
    assert lab.locator(".cl-picture svg").evaluate(OUT_OF_BOX) == []
    shot(page, f"palabras_{app}_{width}x{height}")


@pytest.fixture
def course_copy(tmp_path):
    """Lo que el comando 1 necesita ver de una copia del repositorio: la lección, el README y docs/."""
    import shutil

    copy = tmp_path / "curso"
    shutil.copytree(
        os.path.join(REPO_ROOT, "notebooks"), copy / "notebooks", ignore=shutil.ignore_patterns("_trabajo")
    )
    shutil.copytree(os.path.join(REPO_ROOT, "docs"), copy / "docs")
    shutil.copy(os.path.join(REPO_ROOT, "README.md"), copy / "README.md")
    return copy


def test_command_1_opens_the_lesson_with_the_repository_as_root(course_copy, tmp_path, browser):
    """El paso de JupyterLab del comando 1 del README, tal cual (en CI, como root): la raíz es el
    repositorio y la página que abre tiene la lección abierta; el README y docs/ se ven en el explorador.
    La instalación desde PyPI en una máquina nueva la prueba test_portability."""
    import subprocess

    from playwright.sync_api import expect
    from test_portability import readme_commands, wait_for_server

    open_lesson = readme_commands("bash")[0].rsplit(" && ", 1)[1]
    opened = tmp_path / "abierta.txt"
    # El «navegador» anota la dirección que JupyterLab le pide abrir (la de la lección).
    fake_browser = tmp_path / "navegador.sh"
    fake_browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    fake_browser.chmod(0o755)
    private = {name: tmp_path / name for name in ("config", "data", "runtime", "workspaces")}
    env = {
        **os.environ,
        "BROWSER": str(fake_browser),
        "JUPYTER_CONFIG_DIR": str(private["config"]),
        "JUPYTER_DATA_DIR": str(private["data"]),
        "JUPYTER_RUNTIME_DIR": str(private["runtime"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(private["workspaces"]),
    }
    log = tmp_path / "jupyter.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            ["bash", "-c", open_lesson],
            cwd=course_copy,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        root, _base, _token = wait_for_server(server, log, limit_s=120)
        assert os.path.samefile(root, course_copy)  # la raíz de JupyterLab es el repositorio
        deadline = time.monotonic() + STEP_MS / 1000
        while not opened.exists():  # JupyterLab llama al navegador justo después de esa línea
            assert server.poll() is None and time.monotonic() < deadline, log.read_text("utf-8")[-2000:]
            time.sleep(0.2)
        url = opened.read_text().split()[0]
        page.goto(url, timeout=STEP_MS)
        tab = page.locator(".lm-TabBar-tab.lm-mod-current", has_text="leccion_6_puntos_de_control.ipynb")
        expect(tab).to_be_visible(timeout=STEP_MS * 2)
        expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=STEP_MS)
        # En el explorador de archivos, la raíz (la casita de la ruta) es la carpeta del repositorio.
        if not page.locator("#filebrowser").is_visible():
            page.locator("[data-id='filebrowser']").click()
        page.locator("#filebrowser .jp-BreadCrumbs-home").click()
        listing = page.locator("#filebrowser .jp-DirListing-itemName")
        for entry in ("README.md", "docs", "notebooks"):
            expect(listing.filter(has_text=re.compile(rf"^{re.escape(entry)}$"))).to_have_count(
                1, timeout=STEP_MS
            )
    finally:
        page.close()
        stop_group(server)


def stop_group(server):
    """SIGTERM al grupo de JupyterLab, como Ctrl-C en la terminal. Lo que se prueba es que abre la
    lección, no cuánto tarda en cerrarse: si en una máquina cargada no terminó en 60 s, SIGKILL al grupo
    (sus kernels, en otra sesión, se van solos al ver muerto a su padre)."""
    import signal
    import subprocess

    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()

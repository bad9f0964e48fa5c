"""Prueba de navegador: JupyterLab de verdad, Chromium de Debian manejado por Playwright.

Abre el notebook con el laboratorio de caídas, lo corre entero, elige «turno 3 · ②», pulsa Ejecutar y
Reanudar, y comprueba que la página muestra la rama is_error y un solo reporte. Deja una captura en
``test-output/`` (ignorada por git). El notebook se copia a una carpeta temporal: correrlo escribe
``_trabajo/`` a su lado, y eso no debe caer en el repositorio.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from maintainer.paths import ROOT as REPO_ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# El notebook que se abre: la lección, con el laboratorio después de «El arnés de verificación»;
# la prueba busca el widget por su contenido, no por su posición.
NOTEBOOK = os.path.join(REPO_ROOT, "notebooks", "leccion_6_puntos_de_control.ipynb")
CHOICE = "turno 3 · ② herramienta ejecutada, registro sin escribir"
SCREENSHOT_DIR = os.path.join(REPO_ROOT, "test-output", "browser")
# Límites de espera (no afirmaciones de velocidad): si se pasan, algo está roto, no lento.
SERVER_START_S, PAGE_S, STEP_S = 90, 90, 30

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason="Falta el Chromium de Debian (/usr/bin/chromium): instálalo con «apt-get install chromium» "
    "para correr las pruebas de navegador.",
)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base, token, path, method="GET"):
    req = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        body = resp.read()
    return json.loads(body) if body else None


def wait_for_server(proc, base, token, log_path):
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(log_path, encoding="utf-8", errors="replace") as f:
                tail = f.read()[-2000:]
            raise RuntimeError(f"JupyterLab terminó al arrancar (código {proc.returncode}):\n{tail}")
        try:
            api(base, token, "/api/status")
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"JupyterLab no respondió en {SERVER_START_S} s")


def wait_for_idle_kernel(base, token):
    """El indicador de la página dice «idle» aun antes de que exista el kernel: se pregunta al servidor."""
    deadline = time.monotonic() + PAGE_S
    while time.monotonic() < deadline:
        kernels = api(base, token, "/api/kernels")
        if kernels and all(k["execution_state"] == "idle" for k in kernels):
            return
        time.sleep(0.2)
    raise RuntimeError(f"El kernel del notebook no quedó listo en {PAGE_S} s")


def copy_without_outputs(src, dest_dir):
    """La copia temporal, sin salidas guardadas: lo que se vea después lo produjo esta corrida."""
    nb = nbformat.read(src, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, os.path.join(dest_dir, os.path.basename(src)))


def stop_server(proc, base, token):
    """Apaga los kernels por la API y después el servidor (solo el proceso que lanzó esta prueba)."""
    try:
        for kernel in api(base, token, "/api/kernels"):
            api(base, token, f"/api/kernels/{kernel['id']}", method="DELETE")
    except OSError:
        pass
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def jupyter_lab(tmp_path):
    """JupyterLab sin navegador en 127.0.0.1, con token y carpetas propias; devuelve (url, token, raíz)."""
    root, private = tmp_path / "raiz", tmp_path / "jupyter"
    root.mkdir()
    for sub in ("runtime", "config", "ipython", "workspaces", "settings"):
        (private / sub).mkdir(parents=True)
    copy_without_outputs(NOTEBOOK, root)
    # Sin el aviso de noticias de JupyterLab, que taparía parte del widget en la captura.
    news = private / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    port, token = free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_RUNTIME_DIR=str(private / "runtime"),
        JUPYTER_CONFIG_DIR=str(private / "config"),
        IPYTHONDIR=str(private / "ipython"),
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",  # CI corre como root
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={private / 'workspaces'}",
        f"--LabApp.user_settings_dir={private / 'settings'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log_path = tmp_path / "jupyterlab.log"
    log = open(log_path, "wb")  # noqa: SIM115 (se cierra al final de la fixture)
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(proc, base, token, log_path)
        yield base, token, root
    finally:
        stop_server(proc, base, token)
        log.close()


def test_crash_lab_in_jupyterlab(jupyter_lab):
    from playwright.sync_api import expect, sync_playwright

    base, token, root = jupyter_lab
    name = os.path.basename(NOTEBOOK)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/{name}?token={token}", timeout=PAGE_S * 1000)
            idle = page.locator(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']")
            expect(idle).to_be_visible(timeout=PAGE_S * 1000)
            wait_for_idle_kernel(base, token)

            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

            # El widget, por su contenido: el menú que ofrece la caída «turno 3 · ②».
            lab = page.locator(".jp-OutputArea-output .widget-vbox").filter(
                has=page.locator("select option", has_text=CHOICE)
            )
            lab = lab.first
            expect(lab).to_be_visible(timeout=PAGE_S * 1000)
            lab.locator("select").select_option(label=CHOICE)
            expect(lab.locator("svg title")).to_have_text(CHOICE)

            lab.get_by_role("button", name="Ejecutar").click()
            expect(lab).to_contain_text("código de salida 137", timeout=STEP_S * 1000)
            expect(lab).to_contain_text("pendingToolUse=write_report")

            lab.get_by_role("button", name="Reanudar").click()
            expect(lab).to_contain_text("agregando is_error", timeout=STEP_S * 1000)
            expect(lab).to_contain_text("Rama de reconcile: is_error")
            expect(lab).to_contain_text("write_report se ejecutó de verdad: 1 vez")
            expect(lab).not_to_contain_text("⚠")
            expect(lab.get_by_role("button", name="Reanudar")).to_be_enabled()

            os.makedirs(SCREENSHOT_DIR, exist_ok=True)
            lab.screenshot(path=os.path.join(SCREENSHOT_DIR, "laboratorio_de_caidas.png"))
        finally:
            browser.close()
    # Lo que se ve salió de procesos de verdad: el disco de la copia temporal lo confirma.
    with open(root / "_trabajo" / "laboratorio" / "report.txt", encoding="utf-8") as f:
        assert f.read().count("# Reporte de ventas") == 1

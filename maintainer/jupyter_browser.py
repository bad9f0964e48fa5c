"""Un servidor Jupyter de verdad y Chromium de Debian manejado por Playwright (pruebas y mediciones).

``jupyter_server(root, tmp)`` arranca en 127.0.0.1 un servidor con JupyterLab y Notebook 7 (carpetas
y token propios, sin noticias ni búsqueda de versiones) y lo apaga al salir, solo el proceso que lanzó.
``open_notebook`` abre un notebook en una de las dos interfaces y espera su kernel; ``run_all`` corre
todas las celdas por el menú, como una persona. Nunca descarga un navegador: usa /usr/bin/chromium.
"""

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Límites de espera (no afirmaciones de velocidad): si se pasan, algo está roto, no lento.
SERVER_START_S, PAGE_S = 90, 90
# Dónde se abre un notebook en cada interfaz.
# En JupyterLab, cada notebook en su propio espacio de trabajo (el nombre de su ruta): al recargar, la
# página vuelve a lo suyo, no a lo último que guardó otra página abierta del mismo servidor.
APPS = {"lab": "/lab/workspaces/{workspace}/tree/{name}", "notebook": "/notebooks/{name}"}
# Los ajustes de cada servidor, por plugin de JupyterLab (los lee también Notebook 7).
SETTINGS = {
    "apputils-extension/notification": {"fetchNews": "false"},
    "docmanager-extension/plugin": {"autosave": False},
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base, token, path, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"{base}{path}", data=data, method=method, headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        body = resp.read()
    return json.loads(body) if body else None


def _listing(base, token, path):
    """Una lista del servidor. jupyter_server registra un kernel que arranca un instante antes de darle
    ``last_activity`` y, si se lista justo entonces, responde 500: se vuelve a preguntar."""
    deadline = time.monotonic() + PAGE_S
    while True:
        try:
            return api(base, token, path)
        except urllib.error.HTTPError as err:
            if err.code < 500 or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def list_kernels(base, token):
    return _listing(base, token, "/api/kernels")


def sessions(base, token):
    """Las sesiones abiertas: cada una con la ruta de su notebook (relativa a la raíz) y su kernel."""
    return _listing(base, token, "/api/sessions")


def _wait_for_server(proc, base, token, log_path):
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"Jupyter terminó al arrancar (código {proc.returncode}):\n{tail}")
        try:
            api(base, token, "/api/status")
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"Jupyter no respondió en {SERVER_START_S} s")


def _stop(proc, base, token):
    """Apaga los kernels por la API y después el servidor (solo el proceso que se lanzó aquí)."""
    with contextlib.suppress(OSError):
        for kernel in list_kernels(base, token):
            api(base, token, f"/api/kernels/{kernel['id']}", method="DELETE")
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Server:
    """Un servidor en marcha: su dirección, su token y la carpeta que sirve."""

    def __init__(self, base, token, root):
        self.base, self.token, self.root = base, token, root

    def url(self, app, name):
        # «reset»: JupyterLab no reabre lo que dejó abierto una página anterior del mismo servidor.
        workspace = re.sub(r"[^A-Za-z0-9]+", "-", name)
        return f"{self.base}{APPS[app].format(workspace=workspace, name=name)}?reset&token={self.token}"

    def wait_for_idle_kernel(self, name):
        """El indicador de la página dice «idle» antes de que exista el kernel: se pregunta al servidor por
        el de la sesión de ``name`` (solo ese: un kernel de otra prueba que aún se apaga no lo retrasa)."""
        deadline = time.monotonic() + PAGE_S
        while time.monotonic() < deadline:
            states = [
                s["kernel"]["execution_state"] for s in sessions(self.base, self.token) if s["path"] == name
            ]
            if states and all(state == "idle" for state in states):
                return
            time.sleep(0.2)
        seen = ", ".join(states) if states else "ninguna sesión de ese notebook"
        raise RuntimeError(f"El kernel de {name} no quedó listo en {PAGE_S} s (lo último: {seen})")

    def shutdown_kernels(self, name=None):
        """Apaga los kernels de la prueba; uno que ya se estaba apagando no es un error. Con ``name``,
        cierra la sesión de ese notebook (y su kernel): una página que se recarga no encuentra una sesión
        vieja sin kernel y arranca una nueva, como al abrirlo por primera vez."""
        if name is None:
            paths = [f"/api/kernels/{kernel['id']}" for kernel in list_kernels(self.base, self.token)]
        else:
            paths = [f"/api/sessions/{s['id']}" for s in sessions(self.base, self.token) if s["path"] == name]
        for path in paths:
            with contextlib.suppress(OSError):
                api(self.base, self.token, path, method="DELETE")


@contextlib.contextmanager
def jupyter_server(root, private):
    """JupyterLab y Notebook 7 sirviendo ``root``; ``private`` guarda su configuración y su log."""
    for sub in ("runtime", "config", "ipython", "workspaces"):
        (private / sub).mkdir(parents=True, exist_ok=True)
    # Sin el aviso de noticias, que taparía parte del widget, y sin guardado automático: una página que
    # sigue abierta entre pruebas guarda solo cuando una prueba lo pide.
    for plugin, value in SETTINGS.items():
        path = private / "settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_RUNTIME_DIR=str(private / "runtime"),
        JUPYTER_CONFIG_DIR=str(private / "config"),
        IPYTHONDIR=str(private / "ipython"),
        JUPYTERLAB_SETTINGS_DIR=str(private / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(private / "workspaces"),
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
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log_path = private / "jupyter.log"
    base = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_for_server(proc, base, token, log_path)
            yield Server(base, token, root)
        finally:
            _stop(proc, base, token)


def launch(pw):
    return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def open_notebook(page, server, app, name, wait_kernel=True):
    page.goto(server.url(app, name), timeout=PAGE_S * 1000)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=PAGE_S * 1000)
    if wait_kernel:
        server.wait_for_idle_kernel(name)


def run_all(page):
    """Run → Run All Cells, por el menú (igual en JupyterLab y en Notebook 7)."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()


def choose_theme(page, theme):
    """Settings → Theme → ``theme`` por el menú (igual en JupyterLab y en Notebook 7); espera a que la
    página lo aplique. El servidor lo guarda: las páginas que se abran después lo traen."""
    light = "false" if "Dark" in theme else "true"
    page.get_by_role("menuitem", name="Settings", exact=True).click()
    # Lumino no les da rol a los submenús: se buscan por su texto entero.
    item = page.locator(".lm-Menu:visible .lm-Menu-item")
    item.filter(has_text=re.compile(r"^Theme$")).hover()
    item.filter(has_text=re.compile(rf"^{re.escape(theme)}$")).click()
    page.locator(f"body[data-jp-theme-light='{light}'][data-jp-theme-name='{theme}']").wait_for(
        state="attached", timeout=PAGE_S * 1000
    )

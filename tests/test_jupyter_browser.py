"""Las ayudas que manejan un servidor Jupyter de verdad en las pruebas del navegador.

jupyter_server anota un kernel que arranca un instante antes de darle ``last_activity``; listar los
kernels justo entonces responde 500. La prueba del tema oscuro cayó así una vez en CI: la ayuda que
espera al kernel no puede tomar ese 500 por un fallo.
"""

import asyncio
import json
import threading
import time
import uuid

import pytest

from maintainer.jupyter_browser import api, jupyter_server, list_kernels

STARTS = 12  # arranques de kernel mientras otro hilo lista sin parar


@pytest.mark.slow
def test_listing_kernels_survives_kernels_that_are_starting(tmp_path):
    root, private = tmp_path / "raiz", tmp_path / "jupyter"
    root.mkdir()
    failures, listings, done = [], [0], threading.Event()
    with jupyter_server(root, private) as server:

        def keep_listing():
            # Al menos una vez, y después hasta que terminen los arranques.
            while True:
                try:
                    list_kernels(server.base, server.token)
                    listings[0] += 1
                except OSError as err:
                    failures.append(err)
                if done.is_set():
                    return

        lister = threading.Thread(target=keep_listing)
        lister.start()
        try:
            for _ in range(STARTS):
                kernel = api(server.base, server.token, "/api/kernels", method="POST")
                api(server.base, server.token, f"/api/kernels/{kernel['id']}", method="DELETE")
        finally:
            done.set()
            lister.join()
    assert failures == []
    assert listings[0] > 0


def execute_request(code):
    header = {"msg_id": uuid.uuid4().hex, "msg_type": "execute_request", "session": uuid.uuid4().hex}
    content = {"code": code, "silent": False, "store_history": False, "user_expressions": {}}
    return json.dumps(
        {
            "header": {**header, "username": "", "version": "5.3"},
            "parent_header": {},
            "metadata": {},
            "content": {**content, "allow_stdin": False},
            "channel": "shell",
        }
    )


def state(server, kernel_id):
    return api(server.base, server.token, f"/api/kernels/{kernel_id}")["execution_state"]


@pytest.mark.slow
def test_waiting_for_a_notebook_kernel_ignores_a_busy_kernel_of_another_notebook(tmp_path):
    """Una prueba del navegador cayó así en CI: esperaba a que todos los kernels del servidor
    estuvieran libres, y el de otro notebook seguía ocupado. Cada kernel se conecta por su websocket,
    como lo hace la página (el servidor lo da por listo cuando responde por ahí)."""
    from tornado.websocket import websocket_connect

    root, private = tmp_path / "raiz", tmp_path / "jupyter"
    root.mkdir()
    with jupyter_server(root, private) as server:

        async def open_session(path):
            body = {"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
            kernel = api(server.base, server.token, "/api/sessions", method="POST", body=body)["kernel"]["id"]
            ws_base = server.base.replace("http", "ws", 1)
            url = f"{ws_base}/api/kernels/{kernel}/channels?token={server.token}"
            return kernel, await websocket_connect(url)

        async def scenario():
            other, other_ws = await open_session("otro.ipynb")
            server.wait_for_idle_kernel("otro.ipynb")
            await other_ws.write_message(execute_request("import time\ntime.sleep(600)"))
            deadline = time.monotonic() + 60  # red de seguridad: se espera el estado, no un tiempo
            while state(server, other) != "busy" and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert state(server, other) == "busy"
            mine, mine_ws = await open_session("mio.ipynb")
            server.wait_for_idle_kernel("mio.ipynb")
            assert (state(server, mine), state(server, other)) == ("idle", "busy")
            other_ws.close()
            mine_ws.close()

        asyncio.run(scenario())
        server.shutdown_kernels()

"""Las ayudas que manejan un servidor Jupyter de verdad en las pruebas del navegador.

jupyter_server anota un kernel que arranca un instante antes de darle ``last_activity``; listar los
kernels justo entonces responde 500. La prueba del tema oscuro cayó así una vez en CI: la ayuda que
espera al kernel no puede tomar ese 500 por un fallo.
"""

import threading

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

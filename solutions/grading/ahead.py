"""Lo que una entrega adelanta: sus kernels y los veredictos que solo dependen del texto de una respuesta.

nbgrader califica los notebooks de una entrega uno tras otro, y cada uno espera a que arranque su
kernel (casi un segundo, casi todo de espera). ``AheadAutograde`` (``autograde.py``) arranca los
kernels de la entrega antes de su turno y deja planeadas las comprobaciones del Nivel 2 (que juzgan el
texto de las respuestas, no lo que el kernel imprime); ``WarmExecute`` y ``JudgeAnswers`` toman lo
adelantado y, si no hay, lo hacen en su turno, como con ``nbgrader autograde``. Ninguna nota cambia: el
kernel adelantado es el mismo kernel aislado en la misma carpeta, y un veredicto adelantado solo se
usa para el mismo texto.
"""

import os
from concurrent.futures import ThreadPoolExecutor, wait

from jupyter_core.utils import run_sync

# Como nbclient (``ipython_hist_file``): el historial de IPython en memoria, no en un archivo.
KERNEL_ARGUMENTS = ["--HistoryManager.hist_file=:memory:"]

# Lo adelantado en este proceso de calificación, por entrega: se toma una vez o se descarta al final.
_kernels = {}  # (clase, carpeta, nombre del kernel): [administrador con su kernel ya arrancando]
_verdicts = {}  # (notebook, celda de prueba, texto juzgado): Future con el problema o None
_waiting = []  # (clave, comprobación) que esperan a que el primer kernel esté listo
_pool = None


def start_kernel(manager_class, folder, kernel_name, config):
    """Arranca un kernel para un notebook de ``folder`` sin esperarlo: arranca mientras se califica otro."""
    km = manager_class(kernel_name=kernel_name, config=config)
    env = {**os.environ, "NBGRADER_EXECUTION": "autograde"}  # lo que nbgrader pone al ejecutar
    run_sync(km.start_kernel)(extra_arguments=list(KERNEL_ARGUMENTS), cwd=folder, env=env)
    # El cliente se conecta ya: si llegara con el kernel listo, se perdería su primer aviso de estado
    # por IOPub y jupyter_client esperaría 0,2 s más antes de volver a preguntar.
    client = km.client()
    client.start_channels()
    _kernels.setdefault((manager_class, os.path.abspath(folder), kernel_name), []).append((km, client))


def take_kernel(manager_class, folder, kernel_name):
    """(administrador, cliente) de un kernel adelantado de esa clase (la del aislamiento) para
    ``folder`` con ese nombre, o None."""
    ready = _kernels.get((manager_class, os.path.abspath(folder), kernel_name))
    return ready.pop() if ready else None


def plan_verdict(key, judge):
    """Deja ``judge()`` (la comprobación de una respuesta) para correr en segundo plano, bajo ``key``,
    en cuanto un kernel de la entrega esté listo (``release``): antes, le quitaría núcleo a su arranque."""
    _waiting.append((key, judge))


def release():
    """Un kernel de la entrega ya está listo: arrancan las comprobaciones que esperaban."""
    global _pool
    if _waiting and _pool is None:
        # Una por comprobación del Nivel 2: cada una espera casi siempre a sus procesos.
        _pool = ThreadPoolExecutor(2, thread_name_prefix="veredicto")
    for key, judge in _waiting:
        _verdicts[key] = _pool.submit(judge)
    _waiting.clear()


def take_verdict(key):
    """El Future del veredicto adelantado para ese mismo texto, o None."""
    release()  # si ningún kernel llegó a estar listo, se juzga ahora
    return _verdicts.pop(key, None)


def discard():
    """Al terminar una entrega: apaga los kernels que nadie tomó y espera los veredictos sin usar."""
    for managers in _kernels.values():
        for km, client in managers:
            client.stop_channels()
            run_sync(km.shutdown_kernel)(now=True)
    _kernels.clear()
    _waiting.clear()
    for future in _verdicts.values():
        future.cancel()  # los que ya corren terminan solos (cada corrida tiene su tiempo máximo)
    wait(list(_verdicts.values()))
    _verdicts.clear()

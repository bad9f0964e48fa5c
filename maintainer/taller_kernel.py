"""El taller lleno con el código de la lección, en un kernel de verdad: lo usan la prueba de los errores
plausibles (``tests/test_taller_mistakes.py``) y la medición de cada comprobación
(``benchmarks/taller_checks.py``). Cada celda llega al kernel con su id en los metadatos, como la manda
JupyterLab, así que el taller la reconoce como en clase."""

import shutil

import nbformat
from jupyter_client import KernelManager

from maintainer import paths, taller

CHECK = "workbook.check("


class Kernel:
    """Un kernel de verdad que recibe cada celda con su id en los metadatos, como desde JupyterLab."""

    def __init__(self, cwd):
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(cwd))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def run(self, code, cell_id):
        """El texto de lo que muestra la celda (stdout, stderr, el texto de cada tabla, una traza)."""
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
        msg = self.client.session.msg(
            "execute_request",
            {**content, "user_expressions": {}, "stop_on_error": True},
            metadata={"cellId": cell_id},
        )
        self.client.shell_channel.send(msg)
        shown = []
        while True:  # hasta que el kernel termina esta celda (el tope es solo una red de seguridad)
            reply = self.client.get_iopub_msg(timeout=600)
            if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            kind, body = reply["msg_type"], reply["content"]
            if kind == "stream":
                shown.append(body["text"])
            elif kind in ("display_data", "execute_result"):
                shown.append(body["data"].get("text/plain", "") + "\n")
            elif kind == "error":
                shown.append("\n".join(body["traceback"]))
            elif kind == "status" and body["execution_state"] == "idle":
                return "".join(shown)

    def stop(self):
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def lesson(cell_id):
    """El código de la lección de una celda del taller (por su id, ``taller-code-NN``)."""
    return taller.lesson_cells()[cell_id.removeprefix("taller-")]


def filled_workbook(folder):
    """(kernel, {código de cada comprobación de una pieza: su id}): una copia del taller en ``folder``
    con cada celda ejecutada en orden, las «tu turno» con el código de la lección, hasta la suite
    entera (sin correr las comprobaciones: las corre quien llama)."""
    shutil.copy(taller.WORKBOOK, folder)
    shutil.copy(paths.LESSON, folder)  # el taller enlaza la lección, como en notebooks/
    kernel, checks = Kernel(folder), {}
    try:
        for cell in nbformat.read(taller.WORKBOOK, as_version=4).cells:
            if cell.cell_type != "code" or cell.source.startswith(CHECK):
                checks.update({cell.source: cell.id} if cell.cell_type == "code" else {})
                continue
            if cell.source == "workbook.conformance()":
                return kernel, checks
            code = lesson(cell.id) if taller.TU_TURNO in cell.metadata.get("tags", []) else cell.source
            shown = kernel.run(code, cell.id)
            if "Traceback" in shown:
                raise RuntimeError(f"la celda {cell.id} del taller lleno falló:\n{shown}")
    except BaseException:
        kernel.stop()
        raise
    kernel.stop()
    raise RuntimeError("el taller no tiene la celda workbook.conformance()")

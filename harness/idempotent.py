"""``write_report`` con clave de idempotencia: la misma clave escribe el reporte una sola vez.

Agregar al final de un archivo no es idempotente: repetirlo deja dos copias. Escribir «estos bytes en
la posición S» sí lo es: repetirlo deja el mismo archivo. Así que, la primera vez que llega una clave
(el ``tool_use_id``, o el id del paso de un flujo), se reserva la posición donde termina hoy el
reporte y se anota en un recibo (``<reporte>.claves.json``, escrito de forma durable) ANTES de
escribir. Si el proceso muere en cualquier momento y la llamada se repite con la misma clave:

- el recibo no llegó a escribirse: es la primera vez, nada se escribió todavía;
- el recibo existe y el reporte ya tiene esos bytes en su posición: ya estaba hecho, no se toca;
- el recibo existe y el reporte no los tiene (o los tiene a medias): se escriben en su posición.

Un registro que anota después de ejecutar (el de la lección) no puede distinguir «murió antes» de
«murió después»; este recibo sí, porque anota la intención y la comprueba contra el efecto mismo.
"""

import json
import os

from harness.durable import read_bytes, write_durable
from harness.tool_input import ToolError, text_arg, tool_path

# Los recibos de las claves, junto al reporte.
RECEIPTS_SUFFIX = ".claves.json"


def receipts_path(report_path):
    """Dónde viven los recibos de un reporte: al lado, con su mismo nombre."""
    return f"{report_path}{RECEIPTS_SUFFIX}"


def _load_receipts(path):
    try:
        receipts = json.loads(read_bytes(path))
    except FileNotFoundError:
        return {}
    except ValueError:
        receipts = None
    if not isinstance(receipts, dict):
        # Tratarlo como vacío reservaría otra posición y duplicaría el reporte.
        raise ToolError(f"{os.path.basename(path)} está dañado; revísalo a mano antes de reintentar")
    return receipts


def _current_bytes(path):
    try:
        return read_bytes(path)
    except FileNotFoundError:
        return b""


def _write_at(path, offset, data):
    """Deja ``data`` en ``path`` desde ``offset`` y nada después (si una escritura anterior murió a
    medias, lo que dejó se pisa), con fsync antes de volver, como ``write_report``."""
    with open(path, "r+b" if os.path.exists(path) else "wb") as f:
        f.truncate(offset)
        f.seek(offset)
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_report_once(tool_input, key):
    """Como ``write_report`` (``harness.tools``), pero con ``key``: repetir la llamada no duplica el reporte."""
    path, content = tool_path(tool_input), text_arg(tool_input, "content")
    data = content.encode("utf-8")
    receipts_file = receipts_path(path)
    receipts = _load_receipts(receipts_file)
    current = _current_bytes(path)
    if key not in receipts:
        receipts[key] = {"offset": len(current), "bytes": len(data)}
        write_durable(receipts_file, json.dumps(receipts, ensure_ascii=False, indent=2).encode("utf-8"))
    offset = receipts[key]["offset"]
    written = current[offset : offset + len(data)]
    if written != data:
        if len(current) > offset and not data.startswith(current[offset:]):
            raise ToolError(
                f"{tool_input['path']} cambió después de reservar la clave {key}; revísalo a mano"
            )
        _write_at(path, offset, data)
    return f"Reporte escrito en {tool_input['path']} ({len(content)} caracteres)"

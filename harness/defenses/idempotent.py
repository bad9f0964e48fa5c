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

Las promesas del agente por omisión valen igual: el reporte se reescribe entero con ``write_durable``
(temporal + fsync + rename + fsync del directorio), así que nunca se escribe a través de un enlace y
su entrada en el directorio está en disco antes de anotarlo; un reporte con otro nombre (un enlace
duro) se rechaza sin escribir nada, y uno que un corte de luz dejó con ceros donde iba lo nuestro se
repara en su lugar.
"""

import json
import os

from harness.defenses.bounded import loads
from harness.defenses.durable import read_bytes, write_durable
from harness.tool_input import ToolError, os_failure, refuse_hard_link, text_arg, tool_path

# Los recibos de las claves, junto al reporte.
RECEIPTS_SUFFIX = ".claves.json"


def receipts_path(report_path):
    """Dónde viven los recibos de un reporte: al lado, con su mismo nombre."""
    return f"{report_path}{RECEIPTS_SUFFIX}"


def _receipt(entry):
    """¿Es ``entry`` un recibo: {"offset": posición, "bytes": cuántos}, dos enteros ≥ 0?"""
    return isinstance(entry, dict) and all(
        type(entry.get(field)) is int and entry[field] >= 0 for field in ("offset", "bytes")
    )


def _load_receipts(path):
    try:
        receipts = loads(read_bytes(path))
    except FileNotFoundError:
        return {}
    except ValueError:  # no es JSON, o lo es pero anidado sin fin o con texto que no es Unicode
        receipts = None
    if not isinstance(receipts, dict) or not all(map(_receipt, receipts.values())):
        # Tratarlo como vacío reservaría otra posición y duplicaría el reporte.
        raise ToolError(f"{os.path.basename(path)} está dañado; revísalo a mano antes de reintentar")
    return receipts


def _current_bytes(path):
    try:
        return read_bytes(path)
    except FileNotFoundError:
        return b""


def _ours(tail, data):
    """¿Lo que hay desde la posición reservada es nuestro a medias, o lo que deja un corte de luz (el
    tamaño llegó al disco y los datos no: ceros)? Entonces se puede pisar sin perder nada ajeno."""
    return data.startswith(tail) or (len(tail) <= len(data) and not tail.strip(b"\0"))


def write_report_once(tool_input, key):
    """Como ``write_report`` (``harness.tools``), pero con ``key``: repetir la llamada no duplica el reporte."""
    path, content = tool_path(tool_input), text_arg(tool_input, "content")
    refuse_hard_link(path, tool_input)  # antes de reservar: nada se escribe a través de otro nombre
    data = content.encode("utf-8")
    receipts_file = receipts_path(path)
    try:
        receipts = _load_receipts(receipts_file)
        current = _current_bytes(path)
        if key not in receipts:
            receipts[key] = {"offset": len(current), "bytes": len(data)}
            write_durable(receipts_file, json.dumps(receipts, ensure_ascii=False, indent=2).encode("utf-8"))
        offset = receipts[key]["offset"]
        if current[offset : offset + len(data)] != data:
            if not _ours(current[offset:], data):
                raise ToolError(
                    f"{tool_input['path']} cambió después de reservar la clave {key}: hay texto que no es de "
                    "esta llamada donde iba el reporte. Revísalo a mano; para empezar de cero, corre sin --resume"
                )
            # Entero, con temporal + rename: ni a través de un enlace ni a medias tras un corte de luz.
            write_durable(path, current[:offset] + data)
    except OSError as err:
        raise os_failure("escribir en", tool_input, err) from None
    return f"Reporte escrito en {tool_input['path']} ({len(content)} caracteres)"

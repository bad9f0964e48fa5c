"""Un servidor local de la API de mensajes, para probar --live sin red.

Atiende ``POST /v1/messages`` en 127.0.0.1 (puerto al azar, en un hilo) con la forma exacta de la API:
respuestas ``{"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}`` y
errores ``{"type": "error", "error": {"type", "message"}}``. Responde el guion de
``harness.scripted_model`` (el guion es uno solo) y rechaza con 400 lo que la API real rechaza: un
``tool_use`` sin su ``tool_result`` en el mensaje siguiente, roles que no se alternan
(``harness.protocol.pairing_error``). Con ``fail`` simula 401/429/500…; con ``reply_hook``, respuestas
que el guion no da (un texto antes del tool_use, dos tool_use en un turno).
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.protocol import block_to_dict, pairing_error
from harness.scripted_model import ScriptedModel, ScriptError

# Una clave inventada y reconocible: las pruebas buscan que no aparezca en ningún archivo ni log.
TEST_KEY = "sk-ant-prueba-local-7f3a9c-no-es-una-clave-real"
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
# Espera mínima que el SDK respeta antes de reintentar: las pruebas no duermen de a segundos.
RETRY_AFTER_MS = "1"


def error_body(status, message):
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def request_error(body):
    """Lo que la API real diría de un cuerpo mal formado (400), o None."""
    if not isinstance(body, dict):
        return "request body must be a JSON object (valid JSON)"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: Field required (integer ≥ 1)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if not all(isinstance(m, dict) and "content" in m for m in messages):
        return "messages: each message needs role and content"
    choice = body.get("tool_choice")
    if choice is not None and (not body.get("tools") or choice.get("type") not in ("auto", "any", "tool")):
        return "tool_choice: requires tools and a type of auto, any or tool"
    return None


class FakeMessagesAPI:
    """El servidor y lo que vio: ``requests`` guarda (status, cuerpo) de cada POST recibido."""

    def __init__(self, api_key=TEST_KEY, reply_hook=None):
        self.api_key = api_key
        self.reply_hook = reply_hook  # (respuesta, cuerpo del pedido) -> respuesta
        self.requests = []
        self._faults, self._fail_from = [], 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.api = self
        # Un sondeo corto: stop() espera a lo sumo eso (el de omisión, 0,5 s, se nota en cada prueba).
        poll = {"poll_interval": 0.02}
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs=poll, daemon=True)

    @property
    def base_url(self):
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def statuses(self):
        return [status for status, _ in self.requests]

    def fail(self, status, times=1, after=0, message="simulated failure"):
        """Los próximos ``times`` pedidos reciben ``status``, después de ``after`` respuestas buenas más."""
        with self._lock:
            self._faults = [(status, message)] * times
            self._fail_from = self.statuses.count(200) + after

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Apaga el servidor: desde acá, conectarse al puerto se rechaza (la API «se fue»)."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self._thread.is_alive():
            self.stop()

    def answer(self, path, headers, raw):
        """(status, cuerpo JSON, cabeceras extra) para un pedido."""
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self._lock:
            status, payload, extra = self._answer(path, headers, body)
            self.requests.append((status, body))
        return status, payload, extra

    def _answer(self, path, headers, body):
        if path != "/v1/messages":
            return 404, error_body(404, f"Not found: {path}"), {}
        if not headers.get("anthropic-version"):
            return 400, error_body(400, "anthropic-version: header is required"), {}
        if self.api_key not in (headers.get("x-api-key"), _bearer(headers.get("authorization"))):
            return 401, error_body(401, "invalid x-api-key"), {}
        if self._faults and self.statuses.count(200) >= self._fail_from:
            status, message = self._faults.pop(0)
            return status, error_body(status, message), {"retry-after-ms": RETRY_AFTER_MS}
        problem = request_error(body) or pairing_error(body["messages"])
        if problem:
            return 400, error_body(400, problem), {}
        return 200, self._reply(body), {}

    def _reply(self, body):
        try:
            message = ScriptedModel().messages.create(**body)
        except ScriptError as err:
            return error_body(400, f"fuera del guion: {err}")
        reply = {**message.model_dump(), "model": body["model"]}
        reply["content"] = [block_to_dict(b) for b in message.content]
        return self.reply_hook(reply, body) if self.reply_hook else reply


def _bearer(value):
    prefix = "Bearer "
    return value[len(prefix) :] if value and value.startswith(prefix) else None


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: cada pedido abre su conexión, así que tras stop() nada queda atendiendo.
    protocol_version = "HTTP/1.0"

    def do_POST(self):  # noqa: N802 (nombre de http.server)
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        status, payload, extra = self.server.api.answer(self.path, self.headers, raw)
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_local_{len(self.server.api.requests):04d}")
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        """Sin log por pedido: las pruebas leen ``FakeMessagesAPI.requests``."""


# —— Respuestas que el guion no da, para enchufar en ``reply_hook`` ——


def with_preamble(reply, body):
    """Como un modelo real: un texto antes del tool_use, en la misma respuesta."""
    uses = [b for b in reply["content"] if b["type"] == "tool_use"]
    if uses:
        text = {"type": "text", "text": f"Voy a usar {uses[0]['name']}."}
        reply["content"] = [text] + reply["content"]
    return reply


def with_second_tool_use(reply, body):
    """Dos tool_use en una respuesta: lo que la API manda si no se pide disable_parallel_tool_use."""
    uses = [b for b in reply["content"] if b["type"] == "tool_use"]
    if uses:
        extra = {"type": "tool_use", "id": uses[0]["id"] + "b", "name": "check_report"}
        reply["content"] = reply["content"] + [{**extra, "input": {"path": "report.txt"}}]
    return reply

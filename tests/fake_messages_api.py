"""Un servidor local de la API de mensajes, para probar --live sin red.

Atiende ``POST /v1/messages`` en 127.0.0.1 (puerto al azar, en un hilo) con la forma exacta de la API:
respuestas ``{"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}`` y
errores ``{"type": "error", "error": {"type", "message"}}``. Responde el guion de
``harness.scripted_model`` (o el de ``script``: el de lotes, para su agente) y rechaza con 400 lo que la API real rechaza: un
``tool_use`` sin su ``tool_result`` en el mensaje siguiente, roles que no se alternan
(``harness.protocol.pairing_error``) y ids de ``tool_use`` repetidos o mal formados. Un turno del
asistente al final de ``messages`` se continúa, como tras un ``pause_turn``. Con ``fail`` simula
401/429/500…; con ``raw``, un 200 que no es un mensaje (JSON cortado, la página HTML de un proxy); con
``hang`` y ``trickle``, una respuesta que no llega o llega byte a byte hasta que la prueba la suelta
(``release``); con ``reply_hook``, respuestas que el guion no da (un texto antes del tool_use, dos
tool_use en un turno, otro ``stop_reason``, una herramienta inexistente).
"""

import contextlib
import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple

from harness.contract import CRASH_VAR
from harness.protocol import block_to_dict, blocks_of, pairing_error
from harness.scripted_model import ScriptedModel, ScriptError
from harness.tools import TOOL_IMPLS

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
# Una respuesta «byte a byte» manda uno cada tanto: mucho menos que cualquier tiempo de espera por
# lectura, así que solo un tope total la corta.
TRICKLE_PAUSE = 0.05
# Tope de seguridad de una respuesta colgada si la prueba nunca la suelta (no es una espera de la prueba).
HANG_LIMIT = 60
ID_FORMAT = re.compile(r"[a-zA-Z0-9_-]+")


class Reply(NamedTuple):
    """Lo que el servidor manda: estado, cuerpo, cabeceras extra y cómo (``None``, ``hang``, ``trickle``)."""

    status: int
    data: bytes
    headers: dict
    mode: str = None

    @classmethod
    def json(cls, status, payload, headers=None):
        return cls(status, json_bytes(payload), headers or {})


class RawJSON:
    """Un valor ya escrito en JSON que el servidor manda tal cual, dentro de una respuesta: lo que
    ``json.dumps`` no puede escribir (un objeto anidado mil niveles)."""

    def __init__(self, text):
        self.text = text


def nested(depth, leaf='"x"'):
    """``{"a": {"a": … leaf …}}`` con ``depth`` niveles, ya escrito (``RawJSON``)."""
    return RawJSON('{"a": ' * depth + leaf + "}" * depth)


def json_bytes(payload):
    """``payload`` como JSON en UTF-8, con cada ``RawJSON`` en su lugar tal cual. Un texto con un
    sustituto suelto («\\ud800») no se puede codificar, y viaja como lo mandaría un servidor: con la
    secuencia de escape de JSON."""
    raws = []

    def mark(value):
        if not isinstance(value, RawJSON):
            raise TypeError(f"{type(value).__name__} no es JSON")
        raws.append(value.text)
        return f"\0raw{len(raws) - 1}\0"

    try:
        text = json.dumps(payload, ensure_ascii=False, default=mark)
        text.encode("utf-8")
    except UnicodeEncodeError:
        raws.clear()
        text = json.dumps(payload, default=mark)
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\0raw{i}\0"), raw)
    return text.encode("utf-8")


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
    seen = set()
    for i, message in enumerate(messages):
        for block in blocks_of([message], "tool_use"):
            tool_use_id = block.get("id")
            if not isinstance(tool_use_id, str) or not ID_FORMAT.fullmatch(tool_use_id):
                return f"messages.{i}.content.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
            if tool_use_id in seen:
                return "messages: `tool_use` ids must be unique"
            if not isinstance(block.get("input"), dict):
                return f"messages.{i}.content.input: Input should be a valid dictionary"
            seen.add(tool_use_id)
    choice = body.get("tool_choice")
    if choice is not None and (not body.get("tools") or choice.get("type") not in ("auto", "any", "tool")):
        return "tool_choice: requires tools and a type of auto, any or tool"
    return None


class FakeMessagesAPI:
    """El servidor y lo que vio: ``requests`` guarda (status, cuerpo) de cada POST recibido."""

    def __init__(self, api_key=TEST_KEY, reply_hook=None, script=ScriptedModel):
        self.api_key = api_key
        self.script = script  # el modelo guionado que responde (el de lotes pide varias a la vez)
        self.reply_hook = reply_hook  # (respuesta, cuerpo del pedido) -> respuesta
        self.requests = []
        self.waiting = threading.Event()  # una respuesta colgada o byte a byte ya empezó
        self.released = threading.Event()  # la prueba la suelta
        self._faults, self._fail_from, self._good = [], 0, 0
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

    def inject(self, reply, times=1, after=0):
        """Los próximos ``times`` pedidos reciben ``reply`` (un ``Reply``; ``mode`` hang/trickle: la
        respuesta del guion, colgada o byte a byte), después de ``after`` respuestas del guion más."""
        with self._lock:
            self._faults = [reply] * times
            self._fail_from = self._good + after

    def fail(self, status, times=1, after=0, message="simulated failure", headers=None):
        """Los próximos ``times`` pedidos reciben ``status``, después de ``after`` respuestas buenas más."""
        extra = {"retry-after-ms": RETRY_AFTER_MS} if headers is None else headers
        self.inject(Reply.json(status, error_body(status, message), extra), times, after)

    def raw(self, data, content_type="application/json", after=0):
        """Un 200 con este cuerpo tal cual (lo que un proxy o una conexión cortada entregan)."""
        self.inject(Reply(200, data, {"content-type": content_type}), after=after)

    def hang(self, after=0, mode="hang"):
        """La próxima respuesta (tras ``after`` buenas) no llega hasta ``release()``; ``trickle``: llega
        de a un byte, sin terminar nunca, hasta ``release()`` o hasta que el cliente corte."""
        self.inject(Reply(200, b"", {}, mode), after=after)

    def release(self):
        self.released.set()

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Apaga el servidor: desde aquí, conectarse al puerto se rechaza (la API «se fue»)."""
        self.release()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self._thread.is_alive():
            self.stop()

    def answer(self, path, headers, raw):
        """El ``Reply`` para un pedido."""
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self._lock:
            reply = self._answer(path, headers, body)
            self.requests.append((reply.status, body))
        return reply

    def _answer(self, path, headers, body):
        if path != "/v1/messages":
            return Reply.json(404, error_body(404, f"Not found: {path}"))
        if not headers.get("anthropic-version"):
            return Reply.json(400, error_body(400, "anthropic-version: header is required"))
        if self.api_key not in (headers.get("x-api-key"), _bearer(headers.get("authorization"))):
            return Reply.json(401, error_body(401, "invalid x-api-key"))
        if self._faults and self._good >= self._fail_from:
            fault = self._faults.pop(0)
            if not fault.mode:
                return fault
            return fault._replace(data=self._answer(path, headers, body).data)
        problem = request_error(body) or pairing_error(body["messages"])
        if problem:
            return Reply.json(400, error_body(400, problem))
        self._good += 1
        return Reply.json(200, self._reply(body))

    def _reply(self, body):
        messages = body["messages"]
        # Un turno del asistente al final se continúa (lo que la API hace tras un pause_turn): el
        # guion responde a lo anterior.
        if messages[-1].get("role") == "assistant":
            messages = messages[:-1]
        try:
            message = self.script().messages.create(**{**body, "messages": _without_unknown_tools(messages)})
        except ScriptError as err:
            return error_body(400, f"fuera del guion: {err}")
        reply = {**message.model_dump(), "model": body["model"]}
        reply["content"] = [block_to_dict(b) for b in message.content]
        return self.reply_hook(reply, body) if self.reply_hook else reply


def _without_unknown_tools(messages):
    """La conversación sin los turnos que pidieron una herramienta inexistente (y su is_error): tras
    ese error, el modelo de estas pruebas sigue el guion como si no los hubiera pedido."""
    kept = []
    for message in messages:
        unknown = [b for b in blocks_of([message], "tool_use") if b.get("name") not in TOOL_IMPLS]
        if unknown:
            kept.append(None)  # marca: el mensaje siguiente (su is_error) también se quita
        elif kept and kept[-1] is None:
            kept[-1:] = []
        else:
            kept.append(message)
    return kept


def _bearer(value):
    prefix = "Bearer "
    return value[len(prefix) :] if value and value.startswith(prefix) else None


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: cada pedido abre su conexión, así que tras stop() nada queda atendiendo.
    protocol_version = "HTTP/1.0"

    def do_POST(self):  # noqa: N802 (nombre de http.server)
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        api = self.server.api
        reply = api.answer(self.path, self.headers, raw)
        if reply.mode == "hang":
            api.waiting.set()
            api.released.wait(HANG_LIMIT)
        self.send_response(reply.status)
        self.send_header("content-type", reply.headers.get("content-type", "application/json"))
        self.send_header("content-length", str(len(reply.data)))
        self.send_header("request-id", f"req_local_{len(api.requests):04d}")
        for name, value in reply.headers.items():
            if name != "content-type":
                self.send_header(name, value)
        self.end_headers()
        try:
            self._send_body(api, reply)
        except OSError:  # el cliente cortó (su tiempo de espera): nada más que mandar
            pass

    def _send_body(self, api, reply):
        if reply.mode != "trickle":
            self.wfile.write(reply.data)
            return
        api.waiting.set()
        for byte in reply.data[:-1]:  # nunca el último: la respuesta no termina
            if api.released.wait(TRICKLE_PAUSE):
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
        api.released.wait(HANG_LIMIT)

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


def with_stop_reason(stop_reason, at=3, content=None):
    """Un hook: la respuesta al pedido con ``at`` mensajes trae ``stop_reason`` (y ``content`` si se da)."""

    def hook(reply, body):
        if len(body["messages"]) != at:
            return reply
        return {
            **reply,
            "stop_reason": stop_reason,
            "content": reply["content"] if content is None else content,
        }

    return hook


def with_tool_use(at=3, **fields):
    """Un hook: en el pedido con ``at`` mensajes, el tool_use trae estos campos (id, name, input)."""

    def hook(reply, body):
        if len(body["messages"]) == at:
            reply["content"] = [{**b, **fields} if b["type"] == "tool_use" else b for b in reply["content"]]
        return reply

    return hook


def signal_while_waiting(api, workdir, agent, signame, env=None):
    """El agente con ``--live`` en un proceso nuevo; cuando la API ya tiene colgada su segunda llamada
    (un evento, no una demora) recibe la señal ``signame``. Devuelve la corrida."""
    import signal

    from harness.runs.launcher import AgentRun, start_agent_process

    api.hang(after=1)
    proc = start_agent_process(workdir, agent=agent, env=env, live=True)
    try:
        assert api.waiting.wait(120), "el agente nunca llegó a esperar al modelo"
        proc.send_signal(getattr(signal, signame))
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return AgentRun(proc.returncode, out, err)


GIVE_UP_TEXT = "No pude terminar: me detengo aquí."


def gives_up_after_an_error(reply, body):
    """Un modelo real que se rinde: tras el primer ``is_error`` cierra su turno con un texto, sin reporte."""
    if any(b.get("is_error") for b in blocks_of(body["messages"][-1:], "tool_result")):
        return {**reply, "stop_reason": "end_turn", "content": [{"type": "text", "text": GIVE_UP_TEXT}]}
    return reply


def ends_early(at):
    """Un hook: en el pedido con ``at`` mensajes, el modelo cierra la tarea sin haberla hecho."""

    def hook(reply, body):
        if len(body["messages"]) != at:
            return reply
        return {**reply, "stop_reason": "end_turn", "content": [{"type": "text", "text": GIVE_UP_TEXT}]}

    return hook


@contextlib.contextmanager
def served(monkeypatch, **extra):
    """La API local y un entorno con solo sus variables ANTHROPIC_* (más ``extra``) y sin caída pedida:
    nada de lo que exporte quien corre las pruebas."""
    for name in [n for n in os.environ if n.startswith("ANTHROPIC_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv(CRASH_VAR, raising=False)
    with FakeMessagesAPI() as server:
        for name, value in {
            "ANTHROPIC_API_KEY": TEST_KEY,
            "ANTHROPIC_BASE_URL": server.base_url,
            **extra,
        }.items():
            monkeypatch.setenv(name, value)
        yield server

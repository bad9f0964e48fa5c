"""El modelo real: ``anthropic.Anthropic()`` detrás de la misma cara que el modelo guionado.

El bucle sigue llamando ``client.messages.create(model=…, max_tokens=…, tools=…, messages=…)`` y
recibe lo que devuelve el SDK. Este envoltorio fino agrega solo esto:

- pide a lo sumo una herramienta por turno (``disable_parallel_tool_use``): el punto A guarda una
  sola llamada colgante;
- usa el modelo de ``ANTHROPIC_MODEL`` si está (si no, el que pasa el bucle: ``base_loop.MODEL``)
  y los reintentos del SDK de ``ANTHROPIC_MAX_RETRIES`` (por omisión, los del SDK: 2);
- acota la espera: ``ANTHROPIC_TIMEOUT`` segundos por intento (por omisión 60, también para una
  respuesta que llega byte a byte), un ``retry-after`` de a lo sumo ``MAX_RETRY_WAIT`` segundos, y
  una línea en stderr si la respuesta tarda;
- rechaza una clave mal copiada (espacios, un ``\r`` de un ``.env`` de Windows) antes de mandarla, y
  la borra de todo lo que imprime, también del log de ``ANTHROPIC_LOG=debug``;
- convierte cada error del SDK, y cada respuesta que no es un mensaje, en un ``HarnessError`` de
  una línea en español.

Importa el SDK al cargarse (más de un segundo): solo ``harness.clients`` lo carga, y solo con --live.
"""

import logging
import os
import re
import sys
import threading
import time
from urllib.parse import urlsplit

import anthropic
import httpx2

from harness.errors import HarnessError
from harness.replies import resume_hint

# Con esto la API manda a lo sumo un tool_use por respuesta (el modelo sigue eligiendo si usar una).
ONE_TOOL_PER_TURN = {"type": "auto", "disable_parallel_tool_use": True}
# Segundos por intento si ANTHROPIC_TIMEOUT no dice otra cosa (el SDK espera 600).
DEFAULT_TIMEOUT = 60.0
# Un «retry-after» más largo que esto se acorta: mejor fallar con una línea que minutos en silencio.
MAX_RETRY_WAIT = 10.0
# Una clave usable: caracteres ASCII visibles, sin espacios ni caracteres de control.
KEY_CHARS = re.compile(r"[\x21-\x7e]+")


class LiveModelError(HarnessError):
    """La API real no respondió, o respondió con un error o con algo que no es un mensaje."""


def make_live_client():
    """El cliente real, configurado desde el entorno; sin clave, un error claro antes de tocar nada."""
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise LiveModelError(
            "Falta ANTHROPIC_API_KEY: --live usa el modelo real de Anthropic y necesita tu clave "
            "(export ANTHROPIC_API_KEY=…). Sin --live, el agente usa el modelo guionado."
        )
    if not KEY_CHARS.fullmatch(key):  # sin mostrarla: ni una parte de la clave llega a una línea
        raise LiveModelError(
            "ANTHROPIC_API_KEY tiene espacios, saltos de línea u otros caracteres que una clave no tiene "
            "(por ejemplo un \\r al final, de un .env guardado con fin de línea de Windows): cópiala de nuevo "
            "sin ellos. No se mandó ningún pedido."
        )
    hide_key_in_logs(key)
    timeout = seconds("ANTHROPIC_TIMEOUT", DEFAULT_TIMEOUT)
    sdk = anthropic.Anthropic(
        api_key=key,
        max_retries=max_retries(),
        timeout=timeout,
        http_client=anthropic.DefaultHttpxClient(event_hooks={"response": [_Bounded(timeout)]}),
    )
    return LiveClient(sdk, os.environ.get("ANTHROPIC_MODEL"))


def max_retries():
    raw = os.environ.get("ANTHROPIC_MAX_RETRIES", "")
    if not raw:
        return anthropic.DEFAULT_MAX_RETRIES
    if not raw.isdigit():
        raise LiveModelError(f"ANTHROPIC_MAX_RETRIES={raw} no es válido: usa un entero ≥ 0.")
    return int(raw)


def seconds(name, default):
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise LiveModelError(f"{name}={raw} no es válido: usa una cantidad de segundos mayor que 0.")
    return value


class _KeyFilter(logging.Filter):
    """Quita la clave de cada línea de log (el SDK y httpx2 escriben en stderr con ANTHROPIC_LOG)."""

    def __init__(self, key):
        super().__init__()
        self.key = key

    def filter(self, record):
        text = record.getMessage()
        if self.key in text:
            record.msg, record.args = text.replace(self.key, "«clave oculta»"), ()
        record.exc_info = record.exc_text = None  # una traza puede citar la cabecera con la clave
        return True


def hide_key_in_logs(key):
    for handler in logging.getLogger().handlers:
        handler.addFilter(_KeyFilter(key))


class _Bounded:
    """Un «hook» de respuesta de httpx2: acota el tiempo total de lectura del cuerpo (el SDK solo
    acota cada lectura, y un byte cada 20 s nunca la agota) y acorta un ``retry-after`` largo."""

    def __init__(self, timeout):
        self.timeout = timeout

    def __call__(self, response):
        for name, unit in (("retry-after-ms", 1000), ("retry-after", 1)):
            try:
                wait = float(response.headers.get(name, "")) / unit
            except ValueError:
                continue
            if wait > MAX_RETRY_WAIT:
                response.headers[name] = str(MAX_RETRY_WAIT * unit)
        response.stream = _Deadline(response.stream, time.monotonic() + self.timeout, response.request)


class _Deadline(httpx2.SyncByteStream):
    def __init__(self, stream, deadline, request):
        self._stream, self._deadline, self._request = stream, deadline, request

    def __iter__(self):
        for chunk in self._stream:
            if time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout("la respuesta no terminó de llegar a tiempo", request=self._request)
            yield chunk

    def close(self):
        self._stream.close()


class LiveClient:
    """Un cliente con la misma forma que ``ScriptedModel``: ``client.messages.create(...)``."""

    def __init__(self, sdk, model=None):
        self.messages = _LiveMessages(sdk, model)


class _LiveMessages:
    def __init__(self, sdk, model):
        self._sdk, self._model = sdk, model

    def create(self, *, model, max_tokens, messages, tools=(), **options):
        model = self._model or model  # ANTHROPIC_MODEL manda sobre el de base_loop
        if tools:
            options.setdefault("tool_choice", ONE_TOOL_PER_TURN)
        try:
            with _waiting_notice(self._sdk.timeout):
                response = self._sdk.messages.create(
                    model=model, max_tokens=max_tokens, tools=list(tools), messages=messages, **options
                )
        except anthropic.APIError as err:
            raise LiveModelError(self._scrub(describe(err, self._sdk, model))) from None
        except ValueError:  # un 200 que no es JSON (cortado, o la página HTML de un proxy)
            response = None
        problem = reply_problem(response)
        if problem:
            raise LiveModelError(
                f"La API de Anthropic en {self._sdk.base_url} respondió 200 con algo que no es un mensaje "
                f"({problem}): no se usó. {resume_hint()}"
            )
        return response

    def _scrub(self, text):
        """La clave nunca llega a una línea de log, aunque la API la repitiera en su mensaje."""
        key = self._sdk.api_key
        # Una «clave» de pocas letras taparía palabras enteras del mensaje; las reales son largas.
        return text.replace(key, "«clave oculta»") if key and len(key) >= 16 else text


class _waiting_notice:  # noqa: N801 (se usa como «with»)
    """Si el pedido tarda, una línea en stderr: qué se espera, hasta cuándo, y qué hace Ctrl-C."""

    def __init__(self, timeout):
        self.after = min(10.0, timeout / 4)
        self.timer = threading.Timer(self.after, self._say, args=(timeout,))
        self.timer.daemon = True

    def _say(self, timeout):
        print(
            f"[esperando al modelo] sin respuesta tras {self.after:g} s; cada intento espera a lo sumo "
            f"{timeout:g} s (ANTHROPIC_TIMEOUT). Ctrl-C lo interrumpe: el disco queda en el último punto "
            "guardado.",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self):
        self.timer.start()

    def __exit__(self, *exc):
        self.timer.cancel()


def reply_problem(response):
    """Qué le falta a lo que el SDK devolvió para ser un mensaje que el bucle pueda usar (o None)."""
    if not isinstance(response, anthropic.types.Message):
        return "no es JSON, o no es un objeto"
    data = response.model_dump(mode="json", warnings=False)
    if data.get("type") != "message" or not isinstance(data.get("content"), list):
        return "falta «content», o «type» no es «message»"
    if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in data["content"]):
        return "un bloque de «content» no tiene «type»"
    usage = data.get("usage")
    tokens = [usage.get(k) for k in ("input_tokens", "output_tokens")] if isinstance(usage, dict) else []
    if not tokens or not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        return "falta «usage» con input_tokens y output_tokens enteros"
    if "stop_reason" not in data:
        return "falta «stop_reason»"
    return None


def describe(err, sdk, model):
    """Una línea en español para un error del SDK: qué pasó y qué hacer."""
    if isinstance(err, anthropic.APIConnectionError):
        if isinstance(err, anthropic.APITimeoutError):
            what, check = f"no respondió en {sdk.timeout:g} s", "la conexión, o sube ANTHROPIC_TIMEOUT"
        else:
            what, check = "no está al alcance", "la conexión o ANTHROPIC_BASE_URL"
        return f"La API de Anthropic en {sdk.base_url} {what}{_retried(sdk)}: revisa {check}. {resume_hint()}"
    status = getattr(err, "status_code", None)
    if status is None:
        return f"La API de Anthropic devolvió una respuesta inesperada ({_one_line(err)}). {resume_hint()}"
    kind, message = _api_error(err.body)
    tag = f"{status} {kind}".strip()
    if status == 401:
        return f"La API de Anthropic rechazó la clave ({tag}): revisa ANTHROPIC_API_KEY. {resume_hint()}"
    if status == 404:
        return f"{_not_found(sdk, model, tag, message)} {resume_hint()}"
    if status == 429:
        return f"La API de Anthropic sigue limitando los pedidos ({tag}){_retried(sdk)}: espera un momento. {resume_hint()}"
    if status >= 500:
        return f"La API de Anthropic tuvo un error del servidor ({tag}){_retried(sdk)}. {resume_hint()}"
    # 400 y afines: reintentar manda lo mismo; retomar solo sirve si algo cambió (clave, modelo…).
    return (
        f"La API de Anthropic rechazó el pedido ({tag}): {message.rstrip('.')}. El punto de control no se "
        "modificó; si retomar vuelve a dar este error, empieza de nuevo sin --resume."
    )


def _not_found(sdk, model, tag, message):
    """Un 404 con ruta en ANTHROPIC_BASE_URL es casi siempre de la ruta (``…/v1`` pide /v1/v1/messages);
    sin ruta, del modelo si la API lo nombra."""
    path = urlsplit(str(sdk.base_url)).path.rstrip("/")
    if path:
        return (
            f"La API en {sdk.base_url} no encontró {path}/v1/messages ({tag}): revisa la ruta «{path}» de "
            "ANTHROPIC_BASE_URL (el SDK ya agrega /v1/messages: normalmente va solo el servidor)."
        )
    if "model" in message.lower():
        return f"La API de Anthropic no encontró el modelo «{model}» ({tag}): revisa ANTHROPIC_MODEL."
    return (
        f"La API en {sdk.base_url} no encontró /v1/messages ni el modelo «{model}» ({tag}): revisa "
        "ANTHROPIC_BASE_URL y ANTHROPIC_MODEL."
    )


def _retried(sdk):
    n = sdk.max_retries
    return f" tras {n} reintento{'s' if n != 1 else ''} del SDK" if n else ""


def _api_error(body):
    """(tipo, mensaje) del JSON de error de la API: ``{"type": "error", "error": {...}}``."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", _one_line(body or "sin detalle")[:200]
    return str(error.get("type") or ""), _one_line(error.get("message") or "sin detalle")


def _one_line(value):
    return " ".join(str(value).split())

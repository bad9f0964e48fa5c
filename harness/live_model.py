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
import urllib.request
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


# Las credenciales que acepta el SDK: una clave (cabecera x-api-key) o un token (Authorization: Bearer).
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def credentials():
    """(clave, token) del entorno, como los lee el SDK; sin ninguno, o con uno mal copiado, un error
    claro antes de mandar nada (sin mostrar ni una parte del valor)."""
    values = [os.environ.get(name) or None for name in CREDENTIALS]
    if not any(values):
        raise LiveModelError(
            "Falta ANTHROPIC_API_KEY: --live usa el modelo real de Anthropic y necesita tu clave "
            "(export ANTHROPIC_API_KEY=…, o un token en ANTHROPIC_AUTH_TOKEN). Sin --live, el agente usa el "
            "modelo guionado."
        )
    for name, value in zip(CREDENTIALS, values, strict=True):
        if value and not KEY_CHARS.fullmatch(value):
            raise LiveModelError(
                f"{name} tiene espacios, saltos de línea u otros caracteres que una clave no tiene (por "
                "ejemplo un \\r al final, de un .env guardado con fin de línea de Windows): cópiala de nuevo "
                "sin ellos. No se mandó ningún pedido."
            )
    return values


def make_live_client():
    """El cliente real, configurado desde el entorno; sin clave, un error claro antes de tocar nada."""
    key, token = credentials()
    for secret in (key, token):
        if secret:
            hide_key_in_logs(secret)
    timeout = seconds("ANTHROPIC_TIMEOUT", DEFAULT_TIMEOUT)
    bounded = _Bounded(timeout)
    sdk = anthropic.Anthropic(
        api_key=key,
        auth_token=token,
        max_retries=max_retries(),
        timeout=timeout,
        http_client=anthropic.DefaultHttpxClient(event_hooks={"response": [bounded]}),
    )
    return LiveClient(sdk, os.environ.get("ANTHROPIC_MODEL"), bounded)


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
        self.asked = None  # los segundos del último retry-after acortado (lo que pidió la API)

    def __call__(self, response):
        self.asked = None
        for name, unit in (("retry-after-ms", 1000), ("retry-after", 1)):
            try:
                wait = float(response.headers.get(name, "")) / unit
            except ValueError:
                continue
            if wait > MAX_RETRY_WAIT:
                self.asked = wait
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

    def __init__(self, sdk, model=None, bounded=None):
        self.messages = _LiveMessages(sdk, model, bounded or _Bounded(sdk.timeout))


class _LiveMessages:
    def __init__(self, sdk, model, bounded):
        self._sdk, self._model, self._bounded = sdk, model, bounded

    def create(self, *, model, max_tokens, messages, tools=(), **options):
        model = self._model or model  # ANTHROPIC_MODEL manda sobre el de base_loop
        if tools:
            options.setdefault("tool_choice", ONE_TOOL_PER_TURN)
        try:
            with _waiting_notice(self._sdk.timeout, self._bounded):
                response = self._sdk.messages.create(
                    model=model, max_tokens=max_tokens, tools=list(tools), messages=messages, **options
                )
        except anthropic.APIError as err:
            line = describe(err, self._sdk, model) + _asked_to_wait(self._bounded.asked)
            raise LiveModelError(self._scrub(line)) from None
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
        """La clave (o el token) nunca llega a una línea de log, aunque la API la repitiera."""
        for secret in (self._sdk.api_key, self._sdk.auth_token):
            # Una «clave» de pocas letras taparía palabras enteras del mensaje; las reales son largas.
            if secret and len(secret) >= 16:
                text = text.replace(secret, "«clave oculta»")
        return text


def _asked_to_wait(asked):
    """Lo que pidió la API con un retry-after largo, y lo que hizo el agente (en vez de esperarlo)."""
    if asked is None:
        return ""
    when = time.strftime("%H:%M", time.localtime(time.time() + asked))
    return (
        f" La API pidió esperar {asked:g} s antes de reintentar (retry-after); el agente espera a lo sumo "
        f"{MAX_RETRY_WAIT:g} s entre reintentos, así que se detuvo: vuelve a intentarlo después de las {when}."
    )


class _waiting_notice:  # noqa: N801 (se usa como «with»)
    """Si el pedido tarda, una línea en stderr: qué se espera, hasta cuándo, y qué hace Ctrl-C."""

    def __init__(self, timeout, bounded=None):
        self.after, self.bounded = min(10.0, timeout / 4), bounded
        self.timer = threading.Timer(self.after, self._say, args=(timeout,))
        self.timer.daemon = True

    def _say(self, timeout):
        asked = self.bounded and self.bounded.asked
        if asked:  # la API contestó enseguida, pidiendo esperar: no es que no responda
            print(
                f"[esperando al modelo] la API pidió esperar {asked:g} s antes de reintentar (retry-after); "
                f"el agente espera {MAX_RETRY_WAIT:g} s y reintenta. Ctrl-C lo interrumpe: el disco queda en "
                "el último punto guardado.",
                file=sys.stderr,
                flush=True,
            )
            return
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
        elif proxy := proxy_for(sdk.base_url):
            what, check = (
                f"no está al alcance a través del proxy {proxy[1]} ({proxy[0]})",
                (f"ese proxy (o quítalo de {proxy[0]}, o agrega el servidor a NO_PROXY, si no hace falta)"),
            )
        else:
            what, check = "no está al alcance", "la conexión o ANTHROPIC_BASE_URL"
        return f"La API de Anthropic en {sdk.base_url} {what}{_retried(sdk)}: revisa {check}. {resume_hint()}"
    status = getattr(err, "status_code", None)
    if status is None:
        return f"La API de Anthropic devolvió una respuesta inesperada ({_one_line(err)}). {resume_hint()}"
    kind, message = _api_error(err.body)
    tag = f"{status} {kind}".strip()
    if status == 401:
        used = "ANTHROPIC_API_KEY" if sdk.api_key else "ANTHROPIC_AUTH_TOKEN"
        return f"La API de Anthropic rechazó la clave ({tag}): revisa {used}. {resume_hint()}"
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


def proxy_for(url):
    """(variable, proxy sin usuario ni contraseña) del proxy que usa el SDK para ``url``, o None: con
    un proxy en el camino, una conexión que falla es casi siempre del proxy."""
    parts = urlsplit(str(url))
    for name in (f"{parts.scheme}_proxy", "all_proxy"):
        for var in (name.upper(), name):
            value = os.environ.get(var)
            if value:
                if urllib.request.proxy_bypass_environment(parts.hostname or ""):
                    return None
                proxy = urlsplit(value if "://" in value else f"http://{value}")
                return var, f"{proxy.scheme}://{proxy.hostname}" + (f":{proxy.port}" if proxy.port else "")
    return None


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

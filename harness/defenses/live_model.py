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

Importa el SDK al cargarse (más de un segundo): solo ``harness.defenses.clients`` lo carga, y solo con --live.
"""

import email.utils
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

from harness.contract import CREDENTIALS
from harness.defenses.replies import resume_hint
from harness.errors import HarnessError

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


# Las variables con las que el SDK buscaría otras credenciales (un perfil, una federación de
# identidad): este agente no las usa, y lo dice en vez de fallar sin nombrarlas.
DISCOVERY = (
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
)


def credentials():
    """(nombre, valor) de la credencial que se usa, como la elige el SDK (la clave antes que el token);
    sin ninguna, o con la elegida mal copiada, un error claro antes de mandar nada (sin mostrar ni una
    parte del valor). Con las dos definidas, una línea en stderr dice cuál se usa."""
    present = [(name, os.environ[name]) for name in CREDENTIALS if os.environ.get(name)]
    if not present:
        others = [name for name in DISCOVERY if os.environ.get(name)]
        unused = f" ({', '.join(others)} no se usa{'n' if len(others) > 1 else ''} aquí)" if others else ""
        raise LiveModelError(
            "Falta ANTHROPIC_API_KEY: --live usa el modelo real de Anthropic y necesita tu clave "
            f"(export ANTHROPIC_API_KEY=…, o un token en ANTHROPIC_AUTH_TOKEN){unused}. Sin --live, el "
            "agente usa el modelo guionado."
        )
    name, value = present[0]
    if not KEY_CHARS.fullmatch(value):
        raise LiveModelError(
            f"{name} tiene espacios, saltos de línea u otros caracteres que una clave no tiene (por "
            "ejemplo un \\r al final, de un .env guardado con fin de línea de Windows): cópiala de nuevo "
            "sin ellos. No se mandó ningún pedido."
        )
    if len(present) > 1:
        print(
            f"[credenciales] ANTHROPIC_API_KEY y ANTHROPIC_AUTH_TOKEN están definidas: se usa {name}, como "
            "hace el SDK; la otra no se manda.",
            file=sys.stderr,
            flush=True,
        )
    return name, value


def make_live_client():
    """El cliente real, configurado desde el entorno; sin clave, un error claro antes de tocar nada."""
    name, secret = credentials()
    hide_key_in_logs(secret)
    timeout = seconds("ANTHROPIC_TIMEOUT", DEFAULT_TIMEOUT)
    bounded = _Bounded(timeout)
    given = {"api_key": secret} if name == CREDENTIALS[0] else {"auth_token": secret}
    try:
        sdk = anthropic.Anthropic(
            **given,
            max_retries=max_retries(),
            timeout=timeout,
            http_client=anthropic.DefaultHttpxClient(event_hooks={"response": [bounded]}),
        )
    except (ValueError, TypeError, httpx2.InvalidURL) as err:  # ANTHROPIC_BASE_URL que no es una URL…
        raise LiveModelError(
            f"El SDK de anthropic no aceptó la configuración del entorno ({_printable(err, 120)}): revisa "
            "ANTHROPIC_BASE_URL y ANTHROPIC_CUSTOM_HEADERS. No se mandó ningún pedido."
        ) from None
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
    acota cada lectura, y un byte cada 20 s nunca la agota) y deja en las cabeceras de espera solo
    un valor que el SDK puede usar: a lo sumo ``MAX_RETRY_WAIT`` segundos, nunca ``inf``, ``nan``, un
    negativo ni una fecha que no existe (el SDK esperaría hasta 49 días, o fallaría con una traza)."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.asked = None  # (segundos, cabecera) del último pedido de espera acortado
        self.status = None  # el estado HTTP de la última respuesta

    def __call__(self, response):
        self.asked, self.status = None, response.status_code
        asked = asked_wait(response.headers)
        for name in RETRY_HEADERS:
            response.headers.pop(name, None)
        if asked is not None:
            wait, name = asked
            if wait > MAX_RETRY_WAIT:
                self.asked = asked
            response.headers["retry-after-ms"] = f"{min(wait, MAX_RETRY_WAIT) * 1000:.0f}"
        response.stream = _Deadline(response.stream, time.monotonic() + self.timeout, response.request)


# Las cabeceras con las que la API pide esperar antes de reintentar (el SDK lee la primera antes).
RETRY_HEADERS = ("retry-after-ms", "retry-after")


def asked_wait(headers):
    """(segundos ≥ 0, cabecera) de la espera que pide la respuesta, o None si no pide una que tenga
    sentido: un número que no es finito ni ≥ 0, o una fecha que no se puede leer, no es un pedido (y
    el SDK vuelve a su espera creciente de siempre). ``inf`` sí: es «esperar para siempre»."""
    for name, unit in (("retry-after-ms", 1000), ("retry-after", 1)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            wait = float(raw) / unit
        except ValueError:
            wait = _http_date_wait(raw) if name == "retry-after" else None
        if wait is not None and wait >= 0:  # nan no es ≥ 0: no es un pedido
            return wait, name
    return None


def _http_date_wait(raw):
    """Los segundos hasta la fecha HTTP de un ``retry-after`` («Wed, 21 Oct 2026 07:28:00 GMT»), o None
    si no es una fecha que exista (una fuera de rango hace fallar a ``email.utils`` de muchas formas)."""
    try:
        parsed = email.utils.parsedate_tz(raw)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())
    except (ValueError, TypeError, OverflowError, OSError, IndexError):
        return None


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
        except RecursionError:  # un JSON anidado cientos de niveles: el SDK no llega a parsearlo
            response = _TOO_DEEP
        problem = reply_problem(response)
        if problem:  # el estado de verdad (un 204, un 299…), no un 200 supuesto
            raise LiveModelError(
                f"La API de Anthropic en {self._sdk.base_url} respondió {self._bounded.status or 200} con algo "
                f"que no es un mensaje ({problem}): no se usó. {resume_hint()}"
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
    """Lo que pidió la API con una espera larga, y lo que hizo el agente (en vez de esperarla)."""
    if asked is None:
        return ""
    wait, name = asked
    return (
        f" La API pidió esperar {wait_text(wait)} antes de reintentar ({name}); el agente espera a lo sumo "
        f"{MAX_RETRY_WAIT:g} s entre reintentos, así que se detuvo: {_retry_when(wait)}."
    )


# Una espera más larga que esto no se muestra en segundos ni con hora: no es un pedido razonable.
LONGEST_SHOWN = 86400.0


def wait_text(wait):
    """Una espera pedida, para una persona: «3600 s», o «más de un día» (también ``inf`` o 1e17)."""
    return f"{wait:g} s" if wait <= LONGEST_SHOWN else "más de un día"


def _retry_when(wait):
    if wait > LONGEST_SHOWN:
        return (
            "vuelve a intentarlo más tarde, y revisa quién responde en ANTHROPIC_BASE_URL (la API de "
            "Anthropic no pide esperas así)"
        )
    return f"vuelve a intentarlo después de las {time.strftime('%H:%M', time.localtime(time.time() + wait))}"


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
                f"[esperando al modelo] la API pidió esperar {wait_text(asked[0])} antes de reintentar ({asked[1]}); "
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


# Lo que devolvió el SDK cuando su propio parser de JSON no alcanzó el fondo de la respuesta.
_TOO_DEEP = object()


def reply_problem(response):
    """Qué le falta a lo que el SDK devolvió para ser un mensaje que el bucle pueda usar (o None). Lo que
    sí es un mensaje, la revisión de su contenido la hace ``replies.checked_reply``, para todo cliente."""
    if response is _TOO_DEEP:
        return "un JSON anidado más hondo de lo que el SDK puede leer"
    if not isinstance(response, anthropic.types.Message):
        return "no es JSON, o no es un objeto"
    # En modo «python»: pydantic no recorre el contenido para pasarlo a JSON (lo haría con un tope de
    # unos 250 niveles, y con una traza); lo que trae cada bloque lo revisa replies.checked_reply.
    try:
        data = response.model_dump(mode="python", warnings=False)
    except (ValueError, RecursionError):  # una clave que no es Unicode válido, en «usage», por ejemplo
        return "un JSON que el SDK no puede convertir (una clave que no es Unicode válido, o anidada sin fin)"
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
        elif isinstance(err.__cause__, httpx2.ProtocolError | httpx2.DecodingError):
            # alguien respondió, pero no HTTP válido: cabeceras imposibles, un cuerpo cortado a mitad
            what = (
                "mandó una respuesta HTTP que no se puede leer, o cortó la conexión a mitad "
                f"({type(err.__cause__).__name__})"
            )
            check = "quién responde en ANTHROPIC_BASE_URL (un proxy, un servidor que no es la API)"
        elif moved := _redirected(err, sdk.base_url):
            what, check = (
                f"redirigió el pedido a {moved}, que no está al alcance",
                "quién responde en ANTHROPIC_BASE_URL",
            )
        else:
            what, check = "no está al alcance", "la conexión o ANTHROPIC_BASE_URL"
        return f"La API de Anthropic en {sdk.base_url} {what}{_retried(sdk)}: revisa {check}. {resume_hint()}"
    status = getattr(err, "status_code", None)
    if not isinstance(status, int):
        return f"La API de Anthropic devolvió una respuesta inesperada ({_printable(err)}). {resume_hint()}"
    kind, message = _api_error(err.body)
    tag = f"{status} {kind}".strip()
    if status == 401:
        used = "ANTHROPIC_API_KEY" if sdk.api_key else "ANTHROPIC_AUTH_TOKEN"
        return f"La API de Anthropic rechazó la clave ({tag}): revisa {used}. {resume_hint()}"
    if status == 404:
        return f"{_not_found(sdk, model, tag, message)} {resume_hint()}"
    if status == 429:
        return f"La API de Anthropic sigue limitando los pedidos ({tag}){_retried(sdk)}: espera un momento. {resume_hint()}"
    if 500 <= status <= 599:
        return f"La API de Anthropic tuvo un error del servidor ({tag}){_retried(sdk)}. {resume_hint()}"
    if not 400 <= status <= 499:  # 1xx, 3xx, 600+: nada que la API de Anthropic mande
        return (
            f"La API en {sdk.base_url} respondió con el estado HTTP {status}, que la API de Anthropic no usa "
            f"({_printable(message, 120)}): revisa quién responde en ANTHROPIC_BASE_URL. {resume_hint()}"
        )
    # 400 y afines: reintentar manda lo mismo; retomar solo sirve si algo cambió (clave, modelo…).
    return (
        f"La API de Anthropic rechazó el pedido ({tag}): {message.rstrip('.')}. El punto de control no se "
        "modificó; si retomar vuelve a dar este error, empieza de nuevo sin --resume."
    )


def _redirected(err, base_url):
    """El servidor (sin usuario ni contraseña) al que una redirección mandó el pedido que falló, o None."""
    try:  # la causa (de httpx2) trae el pedido que falló; el del SDK es el primero
        url = urlsplit(str(err.__cause__.request.url))
        base = urlsplit(str(base_url))
    except (AttributeError, RuntimeError, ValueError):
        return None
    if (url.hostname, url.port) == (base.hostname, base.port):
        return None
    return f"{url.scheme}://{url.hostname}" + (f":{url.port}" if url.port else "")


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
    """(tipo, mensaje) del JSON de error de la API: ``{"type": "error", "error": {...}}``, cortos y sin
    caracteres de control (un servidor puede mandar cualquier cosa: 10 MB, secuencias de la terminal)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", _printable(body or "sin detalle")
    kind = error.get("type")
    return _printable(kind if isinstance(kind, str) else "", 60), _printable(
        error.get("message") or "sin detalle"
    )


def _printable(value, limit=200):
    """``value`` en una línea de a lo sumo ``limit`` caracteres visibles: sin saltos de línea ni
    caracteres de control, que en la terminal de quien lee podrían borrar o disfrazar la línea."""
    text = "".join(c if c.isprintable() else " " for c in str(value))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

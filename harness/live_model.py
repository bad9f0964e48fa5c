"""El modelo real: ``anthropic.Anthropic()`` detrás de la misma cara que el modelo guionado.

El bucle sigue llamando ``client.messages.create(model=…, max_tokens=…, tools=…, messages=…)`` y
recibe lo que devuelve el SDK. Este envoltorio fino agrega solo esto:

- pide a lo sumo una herramienta por turno (``disable_parallel_tool_use``): el punto A guarda una
  sola llamada colgante;
- usa el modelo de ``ANTHROPIC_MODEL`` si está (si no, el que pasa el bucle: ``base_loop.MODEL``)
  y los reintentos del SDK de ``ANTHROPIC_MAX_RETRIES``
  (por omisión, los del SDK: 2);
- convierte cada error del SDK en un ``HarnessError`` de una línea en español, sin la clave.

Importa el SDK al cargarse (más de un segundo): solo ``harness.clients`` lo carga, y solo con --live.
"""

import os

import anthropic

from harness.errors import HarnessError

# Con esto la API manda a lo sumo un tool_use por respuesta (el modelo sigue eligiendo si usar una).
ONE_TOOL_PER_TURN = {"type": "auto", "disable_parallel_tool_use": True}
RESUME_HINT = (
    "Lo guardado en el punto de control sigue intacto: cuando se resuelva, retoma con --live --resume."
)


class LiveModelError(HarnessError):
    """La API real no respondió, o respondió con un error."""


def make_live_client():
    """El cliente real, configurado desde el entorno; sin clave, un error claro antes de tocar nada."""
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise LiveModelError(
            "Falta ANTHROPIC_API_KEY: --live usa el modelo real de Anthropic y necesita tu clave "
            "(export ANTHROPIC_API_KEY=…). Sin --live, el agente usa el modelo guionado."
        )
    sdk = anthropic.Anthropic(api_key=key, max_retries=max_retries())
    return LiveClient(sdk, os.environ.get("ANTHROPIC_MODEL"))


def max_retries():
    raw = os.environ.get("ANTHROPIC_MAX_RETRIES", "")
    if not raw:
        return anthropic.DEFAULT_MAX_RETRIES
    if not raw.isdigit():
        raise LiveModelError(f"ANTHROPIC_MAX_RETRIES={raw} no es válido: usa un entero ≥ 0.")
    return int(raw)


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
            response = self._sdk.messages.create(
                model=model, max_tokens=max_tokens, tools=list(tools), messages=messages, **options
            )
        except anthropic.APIError as err:
            raise LiveModelError(self._scrub(describe(err, self._sdk, model))) from None
        if response.stop_reason == "max_tokens":
            # Un turno cortado no es un final: el bucle lo tomaría por la respuesta de cierre.
            raise LiveModelError(
                f"La respuesta del modelo se cortó al llegar a max_tokens={max_tokens}: el turno quedó "
                f"incompleto y no se usa. {RESUME_HINT}"
            )
        return response

    def _scrub(self, text):
        """La clave nunca llega a una línea de log, aunque la API la repitiera en su mensaje."""
        key = self._sdk.api_key
        # Una «clave» de pocas letras taparía palabras enteras del mensaje; las reales son largas.
        return text.replace(key, "«clave oculta»") if key and len(key) >= 16 else text


def describe(err, sdk, model):
    """Una línea en español para un error del SDK: qué pasó y qué hacer."""
    if isinstance(err, anthropic.APIConnectionError):
        what = "no respondió a tiempo" if isinstance(err, anthropic.APITimeoutError) else "no está al alcance"
        return (
            f"La API de Anthropic en {sdk.base_url} {what}{_retried(sdk)}: revisa la conexión o "
            f"ANTHROPIC_BASE_URL. {RESUME_HINT}"
        )
    status = getattr(err, "status_code", None)
    if status is None:
        return f"La API de Anthropic devolvió una respuesta inesperada ({_one_line(err)}). {RESUME_HINT}"
    kind, message = _api_error(err.body)
    tag = f"{status} {kind}".strip()
    if status == 401:
        return f"La API de Anthropic rechazó la clave ({tag}): revisa ANTHROPIC_API_KEY. {RESUME_HINT}"
    if status == 404:
        return f"La API de Anthropic no encontró el modelo «{model}» ({tag}): revisa ANTHROPIC_MODEL. {RESUME_HINT}"
    if status == 429:
        return f"La API de Anthropic sigue limitando los pedidos ({tag}){_retried(sdk)}: espera un momento. {RESUME_HINT}"
    if status >= 500:
        return f"La API de Anthropic tuvo un error del servidor ({tag}){_retried(sdk)}. {RESUME_HINT}"
    # 400 y afines: reintentar manda lo mismo, así que la pista de reanudar no sirve de nada.
    return f"La API de Anthropic rechazó el pedido ({tag}): {message.rstrip('.')}. El punto de control no se modificó."


def _retried(sdk):
    n = sdk.max_retries
    return f" tras {n} reintento{'s' if n != 1 else ''} del SDK" if n else ""


def _api_error(body):
    """(tipo, mensaje) del JSON de error de la API: ``{"type": "error", "error": {...}}``."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", _one_line(body or "sin detalle")
    return str(error.get("type") or ""), _one_line(error.get("message") or "sin detalle")


def _one_line(value):
    return " ".join(str(value).split())

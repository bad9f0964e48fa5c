"""De dónde sale el cliente del modelo: el guionado (por omisión) o el SDK real de anthropic.

El bucle no distingue uno de otro: ambos ofrecen ``client.messages.create(...)`` y devuelven
respuestas con la misma forma. El SDK se importa solo con ``--live`` (importarlo cuesta más de un
segundo, y el camino guionado tiene que arrancar rápido).
"""

from harness.defenses.replies import note_live
from harness.scripted_model import ScriptedModel


def make_client(live=False):
    """``ScriptedModel()``, o el SDK real envuelto (``harness.defenses.live_model``) si ``live``.

    Con ``live``: clave en ANTHROPIC_API_KEY (o un token en ANTHROPIC_AUTH_TOKEN; con las dos, la clave,
    como el SDK, y una línea que lo dice), modelo en ANTHROPIC_MODEL (por omisión
    ``harness.base_loop.MODEL``), servidor en ANTHROPIC_BASE_URL, reintentos del SDK en
    ANTHROPIC_MAX_RETRIES y segundos por intento en ANTHROPIC_TIMEOUT.
    """
    note_live(live)  # los mensajes de la corrida nombran --live solo si la corrida lo usa
    if not live:
        return ScriptedModel()
    from harness.defenses.live_model import make_live_client

    return make_live_client()

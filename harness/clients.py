"""De dónde sale el cliente del modelo: el guionado (por omisión) o el SDK real de anthropic.

El bucle no distingue uno de otro: ambos ofrecen ``client.messages.create(...)`` y devuelven
respuestas con la misma forma. El SDK se importa solo con ``--live`` (importarlo cuesta más de un
segundo, y el camino guionado tiene que arrancar rápido).
"""

from harness.scripted_model import ScriptedModel


def make_client(live=False):
    """``ScriptedModel()``, o ``anthropic.Anthropic()`` si ``live`` (clave en ANTHROPIC_API_KEY)."""
    if not live:
        return ScriptedModel()
    import anthropic

    return anthropic.Anthropic()

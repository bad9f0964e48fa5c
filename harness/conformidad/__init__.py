"""Para quien prueba un agente, el suyo o el del curso: la suite de conformidad (``python -m harness.conformidad RUTA/agent.py``)."""

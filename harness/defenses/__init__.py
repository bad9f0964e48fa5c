"""Para el agente de referencia: las defensas de «De la lección a producción» (escrituras durables, formas, candado, sesión y señales, respuestas del modelo real)."""

"""Para quien lanza agentes (el laboratorio, la suite, el taller, la calificación, las fallas): cada proceso de un agente, cómo nace, se contiene, se mata y se observa."""

"""El nivel de producción: una capacidad por defensa del notebook «De la lección a producción»."""

CAPABILITIES = []

"""Para el notebook «Más allá»: el mismo agente sobre un motor durable (DBOS), varias llamadas por turno, el costo de guardar y dos trabajadores."""

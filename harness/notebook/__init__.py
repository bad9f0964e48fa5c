"""Para los notebooks: lo que muestran (disco, tablas, dibujos, predicciones), las comprobaciones del taller y de los ejercicios, y el armado de los agentes desde sus celdas."""

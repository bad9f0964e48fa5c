"""Las mediciones del curso (docs/confiabilidad.md, docs/instructores.md): cada una se corre como módulo
desde la raíz del repositorio, ``python -m benchmarks.<nombre> --help``."""

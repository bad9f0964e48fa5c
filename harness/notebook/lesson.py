"""Lo que importan los notebooks en una línea, cada cosa desde el módulo de su trabajo: las carpetas y el
agente en un proceso aparte (``harness.notebook.workspace``), la caída dentro del kernel (``harness.crash``), entrar a una carpeta (``inside``), las
tablas, archivos y código mostrados (``harness.notebook.display``) y los procesos que mueren con SIGKILL en un
momento exacto (``harness.runs.kill_scripts``).

    from harness.notebook.lesson import Workspace, crash_at, show_disk, show_file, show_source, show_table
"""

from harness.crash import crash_at
from harness.defenses.workdir import inside
from harness.notebook.display import same_file, show_disk, show_file, show_source, show_table
from harness.notebook.workspace import Workspace
from harness.runs.kill_scripts import kill_between_record_and_tool, kill_during_save

__all__ = [
    "Workspace",
    "crash_at",
    "inside",
    "kill_between_record_and_tool",
    "kill_during_save",
    "same_file",
    "show_disk",
    "show_file",
    "show_source",
    "show_table",
]

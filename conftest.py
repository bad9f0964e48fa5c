"""Las pruebas en paralelo (pytest-xdist, ``-n auto --dist loadfile`` en ``pyproject.toml``): cada archivo
de pruebas corre entero en un mismo proceso (sus fixtures de módulo, un servidor o una copia del
repositorio, se arman una vez), y todos los notebooks en uno solo: escriben en el mismo
``notebooks/_trabajo/`` (la lección y «De la lección a producción» arman allí dos ``agent.py`` distintos
con el mismo nombre). Está en la raíz para que valga también con ``python -m pytest notebooks``."""

NOTEBOOKS = "notebooks"


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None  # otro reparto pedido en la línea de comandos: el de xdist
    from xdist.scheduler import LoadFileScheduling

    class FilesAndNotebooksTogether(LoadFileScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return NOTEBOOKS if path.endswith(".ipynb") else path

    return FilesAndNotebooksTogether(config, log)

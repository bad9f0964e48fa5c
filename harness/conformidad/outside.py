"""Lo que un agente escribe o borra fuera de su carpeta de trabajo, visto con fotos de antes y después.

Se miran, en cada corrida:
- la raíz de la carpeta de la fila (``processes.scratch``): la de trabajo vive dos niveles debajo, así
  que ``../x`` y ``../../x`` caen aquí, y HOME apunta a ``casa`` (lo que quede en ella lo escribió el
  agente en su HOME); TMPDIR (``tmp``) no se mira: un temporal ahí es lo esperado;
- la carpeta del agente (o la de cada archivo que nombra su ``--comando``), solo su primer nivel
  (nombre, tipo, tamaño y fecha de cada entrada): una carpeta grande no se recorre entera.

Los límites, dichos: una ruta absoluta a otro lugar (``/tmp/x``, ``~/x`` con la ruta escrita a mano)
no se ve, ni un cambio dentro de una subcarpeta de la carpeta del agente; con filas en paralelo, un
cambio en la carpeta del agente se ve, pero puede contarse en la corrida de al lado.
"""

import os


def _entries(folder):
    """{nombre: (tipo, tamaño, fecha)} del primer nivel de ``folder`` ({} si no existe)."""
    found = {}
    try:
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                kind = "d" if entry.is_dir(follow_symlinks=False) else "f"
                found[entry.name] = (kind, 0 if kind == "d" else st.st_size, st.st_mtime_ns)
    except OSError:
        pass
    return found


def _tree(root, skip):
    """Las rutas (relativas) de todo lo que hay debajo de ``root``; en las carpetas de ``skip`` no se
    entra (la de trabajo, TMPDIR)."""
    paths = set()
    for here, dirs, files in os.walk(root):
        rel = os.path.relpath(here, root)
        paths.update(os.path.normpath(os.path.join(rel, name)) for name in dirs + files)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) not in skip]
    return paths


class Watch:
    """Una foto antes de la corrida; ``changes()`` la compara con el disco de después. ``folders``:
    {carpeta: cómo se nombra en el informe}; ``sandbox``: la raíz de la fila que contiene ``workdir``
    (o None: entonces solo se miran ``folders``); ``layout``: los nombres de sus carpetas."""

    def __init__(self, folders, workdir, sandbox, layout):
        above, work, home, tmp = layout
        self.workdir = workdir
        self.folders = {(folder, label): _entries(folder) for folder, label in folders.items()}
        self.sandbox, self.home = sandbox, home
        # Lo que la raíz de la fila tiene por diseño: lo demás lo puso el agente.
        self.expected = {above, home, tmp, os.path.join(above, work)}
        self.skip = {os.path.join(above, work), tmp}
        self.before = _tree(sandbox, self.skip) if sandbox else set()

    def changes(self):
        """Frases cortas en español: qué se creó, cambió o borró, y dónde."""
        found = []
        for (folder, label), before in self.folders.items():
            after = _entries(folder)
            where = f"en {label}"
            found += [f"creó {n} {where}" for n in sorted(after.keys() - before.keys())]
            found += [f"borró {n} {where}" for n in sorted(before.keys() - after.keys())]
            found += [
                f"cambió {n} {where}"
                for n in sorted(before.keys() & after.keys())
                if before[n] != after[n] and before[n][0] == "f"
            ]
        if self.sandbox:
            after = _tree(self.sandbox, self.skip)
            for path in sorted((after - self.before) - self.expected):
                found.append(self._said(path, "escribió"))
            for path in sorted(self.expected - after):
                shown = os.path.relpath(os.path.join(self.sandbox, path), self.workdir)
                found.append(f"borró {shown} (una carpeta alrededor de la de trabajo)")
        return found

    def _said(self, path, verb):
        if path.split(os.sep)[0] == self.home:
            return f"{verb} ~/{os.path.relpath(path, self.home)} (en su HOME)"
        shown = os.path.relpath(os.path.join(self.sandbox, path), self.workdir)
        return f"{verb} {shown} (fuera de la carpeta de trabajo)"

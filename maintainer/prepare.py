"""Todo lo que se genera en el repositorio, regenerado y comprobado de una vez (como ``nbdev_prepare``).

Lo corre ``python -m maintainer prepare`` (ver ``maintainer/__main__.py``). Los pasos, en este orden
(cada uno usa lo que dejó el anterior):

1. ``agente``: ``solutions/agent.py`` desde las celdas ``#| export`` de la lección (``agent_source``);
2. ``ejercicios``: los ejercicios repartidos, generados con nbgrader desde sus fuentes y ejecutados
   desde notebooks/ (``solutions.grading.release``);
3. ``taller``: las celdas de ``notebooks/taller_tu_agente.ipynb`` que vienen de la lección, al día
   (``maintainer.taller``; el resto del taller se escribe en el notebook mismo);
4. ``salidas``: cada otro notebook de notebooks/ (la lección, el laboratorio, «Más allá») y las
   soluciones comentadas de ``solutions/grading/``, ejecutados desde cero, como un «Restart & Run All»,
   con sus salidas guardadas.

Después, las comprobaciones (``checks``): el agente es el que genera la lección, los ejercicios son
lo que generan sus fuentes y cada notebook guardado salió de una sola corrida limpia, guardado como lo
guarda ``notebook_run``. Que las salidas sean las de hoy lo compara nbval en cada corrida de pruebas.
"""

import glob
import hashlib
import os
import time

import nbformat

from maintainer import agent_source, paths, taller
from solutions.grading import release
from solutions.grading.notebook_run import WIDGET_VIEW, cleared, execute, write

STEPS = ("agente", "ejercicios", "taller", "salidas")
# Dónde guarda cada notebook la huella del código que dio sus salidas (``sources_digest``).
FINGERPRINT = "huella_de_las_salidas"


def say(line):
    """Una línea de avance, al momento (también si la salida va a un archivo)."""
    print(line, flush=True)


def relative(path):
    return os.path.relpath(path, paths.ROOT).replace(os.sep, "/")


def stored_notebooks():
    """Los notebooks cuyas salidas se guardan ejecutándolos en su carpeta: los de notebooks/ menos los
    ejercicios repartidos, que salen de sus fuentes (paso ``ejercicios``), y las soluciones comentadas."""
    exercises = {release.stored(name) for name in release.EXERCISES}
    found = [p for p in sorted(glob.glob(os.path.join(paths.NOTEBOOKS, "*.ipynb"))) if p not in exercises]
    return [*found, paths.ANNOTATED]


def rerun(path):
    """El notebook de ``path`` ejecutado desde cero en un kernel nuevo que arranca en su carpeta (como
    JupyterLab): sin salidas, todas las celdas, de arriba abajo."""
    return execute(cleared(path), os.path.dirname(os.path.abspath(path)))


def agent(dry_run=False, progress=say):
    """Paso ``agente``: los dos agentes desde sus notebooks; {ruta: si cambia}."""
    changed = {}
    for path in (agent_source.LESSON_AGENT, agent_source.AGENT):
        new = agent_source.rendered(path)
        changed[relative(path)] = path.read_text(encoding="utf-8") != new
        if changed[relative(path)] and not dry_run:
            path.write_text(new, encoding="utf-8")
        progress(f"  {relative(path)} desde {' y '.join(p.name for p in agent_source.sources(path))}")
    return changed


def exercises(dry_run=False, progress=say):
    """Paso ``ejercicios``; {ruta: si cambia}."""
    progress("  nbgrader generate_assignment y cada ejercicio ejecutado desde notebooks/…")
    changed = release.regenerate(dry_run, lambda name, _: progress(f"  {relative(release.stored(name))}"))
    return {relative(release.stored(name)): c for name, c in changed.items()}


def sources_digest(path, root=paths.ROOT):
    """La huella de lo que decide las salidas de ``path``: sus celdas de código, todo el paquete
    ``harness`` y los dos agentes. Se guarda con las salidas; si cambia, las salidas son de otro código."""
    digest = hashlib.sha256()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            digest.update(cell.source.encode("utf-8"))
    files = [
        p for p in glob.glob(os.path.join(root, "harness", "**", "*"), recursive=True) if os.path.isfile(p)
    ]
    files += [os.path.join(root, "solutions", name) for name in ("agent_leccion.py", "agent.py")]
    for file in sorted(f for f in files if "__pycache__" not in f):
        digest.update(os.path.relpath(file, root).replace(os.sep, "/").encode("utf-8"))
        with open(file, "rb") as f:
            digest.update(f.read().replace(b"\r\n", b"\n"))  # un checkout de Windows no la cambia
    return digest.hexdigest()[:16]


def stamped(notebook, path):
    """El notebook ejecutado, con la huella del código que dio sus salidas."""
    notebook.metadata.setdefault("curso", {})[FINGERPRINT] = sources_digest(path)
    return notebook


def outputs(dry_run=False, progress=say):
    """Paso ``salidas``; {ruta: si cambia}."""
    changed = {}
    for path in stored_notebooks():
        start = time.perf_counter()
        changed[relative(path)] = write(stamped(rerun(path), path), path, dry_run=dry_run)
        progress(f"  {relative(path)} ({time.perf_counter() - start:.1f} s)")
    return changed


def workbook(dry_run=False, progress=say):
    """Paso ``taller``: sus celdas que vienen de la lección, al día (sus salidas las guarda ``salidas``)."""
    progress(f"  {relative(taller.WORKBOOK)}: sus celdas de la lección")
    return {relative(taller.WORKBOOK): taller.write(dry_run)}


RUN = {"agente": agent, "ejercicios": exercises, "taller": workbook, "salidas": outputs}


def summary(step, changed, dry_run=False):
    """La línea de resumen de un paso: qué cambió (o cambiaría) y qué no."""
    verb = "cambiaría" if dry_run else "cambió"
    new = [path for path, c in changed.items() if c]
    same = len(changed) - len(new)
    parts = [f"{verb} {path}" for path in new]
    parts += [f"sin cambios en {same} archivo{'s' if same > 1 else ''}"] if same else []
    return f"{step}: {'; '.join(parts) or 'nada que regenerar'}"


def prepare(steps=STEPS, dry_run=False, progress=say):
    """Corre ``steps`` en orden, con una línea de avance por archivo y una de resumen por paso;
    devuelve {ruta: si cambia} de todos."""
    changed = {}
    for i, step in enumerate(steps, 1):
        progress(f"[{i}/{len(steps)}] {step}…")
        done = RUN[step](dry_run, progress)
        progress(summary(step, done, dry_run))
        changed.update(done)
    return changed


def stored_problems(path):
    """Lo que delata que las salidas guardadas de ``path`` no salieron de una sola corrida limpia,
    guardada con ``notebook_run`` (lo mismo que mira tests/test_notebook_sync.py); [] si nada."""
    code = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    problems = []
    if [cell.execution_count for cell in code] != list(range(1, len(code) + 1)):
        problems.append("las celdas no se ejecutaron en orden, de arriba abajo")
    if any("execution" in cell.metadata for cell in code):
        problems.append("guarda tiempos de ejecución")
    for i, cell in enumerate(code, 1):
        streams = [o.name for o in cell.outputs if o.output_type == "stream"]
        if len(streams) != len(set(streams)):
            problems.append(f"la celda de código {i} tiene streams partidos")
        if any(WIDGET_VIEW in o.get("data", {}) for o in cell.outputs):
            problems.append(f"la celda de código {i} guarda una vista de widget")
    return problems


def stale_outputs(path):
    """Si las salidas guardadas de ``path`` salieron de otro código que el de hoy ([] si no)."""
    stored = nbformat.read(path, as_version=4).metadata.get("curso", {}).get(FINGERPRINT)
    if stored == sources_digest(path):
        return []
    return ["sus salidas son de otro código (cambió una celda, harness o un agente): vuelve a ejecutarlo"]


def checks(progress=say):
    """Las comprobaciones, sin escribir nada; devuelve los problemas encontrados, en español."""
    found = []
    progress("comprobaciones…")
    for path in (agent_source.LESSON_AGENT, agent_source.AGENT):
        if path.read_text(encoding="utf-8") != agent_source.rendered(path):
            found.append(f"{relative(path)} no es lo que generan sus notebooks")
        else:
            progress(f"  {relative(path)} coincide con sus notebooks")
    drift = taller.drift()
    found += [f"{relative(taller.WORKBOOK)} {problem}" for problem in drift]
    if not drift:
        progress(f"  las celdas de {relative(taller.WORKBOOK)} que vienen de la lección coinciden con ella")
    stale = release.differences()
    found += [f"{relative(release.stored(name))} no es lo que generan sus fuentes" for name in stale]
    if not stale:
        progress("  los ejercicios de notebooks/ son lo que generan sus fuentes")
    notebooks = [release.stored(name) for name in release.EXERCISES] + stored_notebooks()
    bad = [f"{relative(path)}: {problem}" for path in notebooks for problem in stored_problems(path)]
    bad += [f"{relative(path)}: {problem}" for path in stored_notebooks() for problem in stale_outputs(path)]
    if not bad:
        progress(f"  los {len(notebooks)} notebooks guardan las salidas de una corrida limpia")
    return found + bad

"""Todo lo que se genera en el repositorio, regenerado y comprobado de una vez (como ``nbdev_prepare``).

Lo corre ``python -m maintainer prepare`` (ver ``maintainer/__main__.py``). Los pasos, en este orden
(cada uno usa lo que dejó el anterior):

1. ``agente``: ``solutions/agent.py`` desde las celdas ``#| export`` de la lección (``agent_source``);
2. ``ejercicios``: los ejercicios repartidos, generados con nbgrader desde sus fuentes y ejecutados
   desde notebooks/ (``solutions.grading.release``);
3. ``taller``: ``notebooks/taller_tu_agente.ipynb`` desde la lección y su plantilla (``maintainer.taller``);
4. ``salidas``: cada otro notebook de notebooks/ (la lección, el laboratorio, «Más allá») ejecutado
   desde cero, como un «Restart & Run All», con sus salidas guardadas.

Después, las comprobaciones (``checks``): el agente es el que genera la lección, los ejercicios son
lo que generan sus fuentes y cada notebook guardado salió de una sola corrida limpia, guardado como lo
guarda ``notebook_run``. Que las salidas sean las de hoy lo compara nbval en cada corrida de pruebas.
"""

import glob
import os
import time

import nbformat

from maintainer import agent_source, paths, taller
from solutions.grading import release
from solutions.grading.notebook_run import WIDGET_VIEW, cleared, execute, write

STEPS = ("agente", "ejercicios", "taller", "salidas")


def say(line):
    """Una línea de avance, al momento (también si la salida va a un archivo)."""
    print(line, flush=True)


def relative(path):
    return os.path.relpath(path, paths.ROOT).replace(os.sep, "/")


def stored_notebooks():
    """Los notebooks de notebooks/ cuyas salidas se guardan ejecutándolos ahí mismo: todos menos los
    ejercicios repartidos, que salen de sus fuentes (paso ``ejercicios``)."""
    exercises = {release.stored(name) for name in release.EXERCISES}
    return [p for p in sorted(glob.glob(os.path.join(paths.NOTEBOOKS, "*.ipynb"))) if p not in exercises]


def rerun(path):
    """El notebook de ``path`` ejecutado desde cero en un kernel nuevo que arranca en su carpeta (como
    JupyterLab): sin salidas, todas las celdas, de arriba abajo."""
    return execute(cleared(path), os.path.dirname(os.path.abspath(path)))


def agent(dry_run=False, progress=say):
    """Paso ``agente``; {ruta: si cambia}."""
    new = agent_source.rendered()
    changed = agent_source.AGENT.read_text(encoding="utf-8") != new
    if changed and not dry_run:
        agent_source.AGENT.write_text(new, encoding="utf-8")
    progress(f"  {relative(agent_source.AGENT)} desde {agent_source.SHOWN_AS}")
    return {relative(agent_source.AGENT): changed}


def exercises(dry_run=False, progress=say):
    """Paso ``ejercicios``; {ruta: si cambia}."""
    progress("  nbgrader generate_assignment y cada ejercicio ejecutado desde notebooks/…")
    changed = release.regenerate(dry_run, lambda name, _: progress(f"  {relative(release.stored(name))}"))
    return {relative(release.stored(name)): c for name, c in changed.items()}


def outputs(dry_run=False, progress=say):
    """Paso ``salidas``; {ruta: si cambia}."""
    changed = {}
    for path in stored_notebooks():
        start = time.perf_counter()
        changed[relative(path)] = write(rerun(path), path, dry_run=dry_run)
        progress(f"  {relative(path)} ({time.perf_counter() - start:.1f} s)")
    return changed


def workbook(dry_run=False, progress=say):
    """Paso ``taller``: el taller desde la lección y su plantilla, sin salidas (las guarda ``salidas``)."""
    progress(f"  {relative(taller.WORKBOOK)} desde la lección y maintainer/taller_plantilla.py")
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


def checks(progress=say):
    """Las comprobaciones, sin escribir nada; devuelve los problemas encontrados, en español."""
    found = []
    progress("comprobaciones…")
    if agent_source.AGENT.read_text(encoding="utf-8") != agent_source.rendered():
        found.append(f"{relative(agent_source.AGENT)} no es lo que genera la lección")
    else:
        progress(f"  {relative(agent_source.AGENT)} coincide con la lección")
    if taller.stale():
        found.append(f"{relative(taller.WORKBOOK)} no es lo que generan la lección y su plantilla")
    else:
        progress(f"  {relative(taller.WORKBOOK)} coincide con la lección y su plantilla")
    stale = release.differences()
    found += [f"{relative(release.stored(name))} no es lo que generan sus fuentes" for name in stale]
    if not stale:
        progress("  los ejercicios de notebooks/ son lo que generan sus fuentes")
    notebooks = [release.stored(name) for name in release.EXERCISES] + stored_notebooks()
    bad = [f"{relative(path)}: {problem}" for path in notebooks for problem in stored_problems(path)]
    if not bad:
        progress(f"  los {len(notebooks)} notebooks guardan las salidas de una corrida limpia")
    return found + bad

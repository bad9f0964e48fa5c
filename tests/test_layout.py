"""La casa: las carpetas de ``harness/`` dicen quién usa qué, un solo lugar lanza procesos, ningún ciclo
de imports y cada hecho (las variables del agente) escrito una vez. Todo se lee del código con ``ast``:
nada se ejecuta, así que estas pruebas valen para cualquier módulo que se agregue."""

import ast
import pathlib

import pytest

from maintainer.paths import ROOT

HARNESS = pathlib.Path(ROOT, "harness")
# Lo que se instala (harness) y lo de instructores (solutions): lo que la regla de un lanzador cubre.
LAUNCH_SCOPE = ("harness", "solutions")
# Todo el código del curso salvo las pruebas: donde un hecho se escribe una sola vez.
CODE = ("harness", "solutions", "maintainer", "benchmarks")
AGENT_VARIABLES = ("CRASH_AFTER", "AGENT_WORKDIR", "AGENT_VARIANT")
MAX_TOP_MODULES = 12
MAX_LAUNCHING_MODULES = 5
# Llamadas que arrancan un proceso: ``módulo.función`` (o todo lo del módulo, con «*»).
LAUNCHING = {("subprocess", "*"), ("os", "fork"), ("os", "forkpty"), ("asyncio", "create_subprocess_exec")}
LAUNCHING |= {("asyncio", "create_subprocess_shell"), ("pty", "fork")}
LAUNCHING_PREFIXES = {"os": ("exec", "posix_spawn", "spawn")}
SUBPROCESS_STARTERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}


def python_files(*tops):
    for top in tops:
        yield from sorted(pathlib.Path(ROOT, top).rglob("*.py"))


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def parsed(path):
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def test_the_top_of_harness_holds_only_what_the_lessons_agent_stands_on():
    top = sorted(p.name for p in HARNESS.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, f"{len(top)} módulos arriba de harness/: {top}"


@pytest.mark.parametrize(
    "package",
    sorted(p.parent for p in HARNESS.rglob("__init__.py") if p.parent != HARNESS),
    ids=lambda p: p.name,
)
def test_every_subfolder_says_in_one_line_who_it_is_for(package):
    doc = ast.get_docstring(parsed(package / "__init__.py"))
    assert doc and "\n" not in doc.strip(), (
        f"{package.relative_to(ROOT)}: el docstring de __init__ es una línea"
    )
    assert doc.startswith("Para "), f"{package.relative_to(ROOT)}: la línea dice para quién es («Para …»)"


def launches(tree):
    """Las líneas de ``tree`` que arrancan un proceso (con el nombre del módulo tal como se importó)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname or a.name: a.name for a in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "subprocess", "asyncio", "pty"):
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func, aliases)
        if name and _starts_a_process(name):
            found.append(f"{node.lineno}: {name}")
    return found


def _dotted(func, aliases):
    if isinstance(func, ast.Name):
        return aliases.get(func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        base = aliases.get(func.value.id)
        return f"{base}.{func.attr}" if base else None
    return None


def _starts_a_process(name):
    module, _, function = name.rpartition(".")
    if module == "subprocess":
        return function in SUBPROCESS_STARTERS
    if (module, function) in LAUNCHING:
        return True
    return any(function.startswith(p) for p in LAUNCHING_PREFIXES.get(module, ()))


def test_launches_recognises_every_way_of_starting_a_process():
    code = (
        "import os, subprocess as sp\nfrom os import fork as f\nfrom subprocess import Popen\n"
        "sp.run([]); Popen([]); f(); os.execv('a', []); os.posix_spawnp('a', [], {}); os.getpid()\n"
    )
    assert [line.split(": ")[1] for line in launches(ast.parse(code))] == [
        "subprocess.run",
        "subprocess.Popen",
        "os.fork",
        "os.execv",
        "os.posix_spawnp",
    ]


def test_at_most_five_modules_start_a_process():
    starting = {}
    for path in python_files(*LAUNCH_SCOPE):
        lines = launches(parsed(path))
        if lines:
            starting[str(path.relative_to(ROOT))] = lines
    assert len(starting) <= MAX_LAUNCHING_MODULES, f"{len(starting)} módulos arrancan procesos: {starting}"


def imports(path, known):
    """Los módulos del curso que importa ``path`` (también dentro de funciones y con importlib)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
        elif (
            isinstance(node, ast.Call)
            and _dotted(node.func, {"importlib": "importlib"}) == "importlib.import_module"
        ):
            if node.args and isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
    return {m for m in found if m in known and m != here}


def cycles(graph):
    """Las componentes fuertemente conexas de más de un módulo (Tarjan, sin recursión)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_cycles_finds_a_loop_through_three_modules():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_back():
    files = list(python_files(*CODE))
    known = {module_name(p) for p in files}
    graph = {module_name(p): imports(p, known) for p in files}
    assert cycles(graph) == []


def string_literals(tree):
    """Los literales de texto de ``tree`` que no son docstrings (con su línea)."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def test_the_agents_variables_are_named_in_one_module():
    holders = {}
    for path in python_files(*CODE):
        for line, text in string_literals(parsed(path)):
            for name in AGENT_VARIABLES:
                if name in text:
                    holders.setdefault(str(path.relative_to(ROOT)), []).append(f"{line}: {name}")
    assert len(holders) <= 1, f"las variables del agente se escriben en más de un módulo: {holders}"


def test_the_instructors_package_holds_no_test_data():
    """Cada módulo de ``solutions/`` lo usa un comando de instructores, un agente o un notebook: uno que
    solo importan las pruebas es un dato de prueba y va en ``tests/``."""
    files = list(python_files("solutions"))
    known = {module_name(p) for p in files}
    graph = {module_name(p): imports(p, known) for p in files}
    roots = {module_name(p) for p in files if is_command(parsed(p))} | {"solutions", "solutions.grading"}
    roots |= _used_by_notebooks_and_harness(known)
    reached, todo = set(), list(roots)
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(graph.get(module, ()))
    assert sorted(known - reached) == []


def is_command(tree):
    """¿Tiene el módulo su ``if __name__ == "__main__":``? (es un comando: ``python -m …``)."""
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__":
            return True
    return False


def _used_by_notebooks_and_harness(known):
    """Lo de ``solutions`` que nombra otro archivo que no es de pruebas: un notebook, la configuración o
    un módulo de harness, maintainer o solutions (por su nombre con puntos, su ruta o su archivo, como
    ``nbgrader_config.py``, que nbgrader carga por su ruta)."""
    texts = {
        p: p.read_text(encoding="utf-8")
        for p in pathlib.Path(ROOT).glob("**/*.ipynb")
        if "_trabajo" not in p.parts
    }
    texts |= {p: p.read_text(encoding="utf-8") for p in python_files("harness", "maintainer", "solutions")}
    texts[pathlib.Path(ROOT, "pyproject.toml")] = pathlib.Path(ROOT, "pyproject.toml").read_text(
        encoding="utf-8"
    )
    used = set()
    for module in known:
        own = pathlib.Path(ROOT, *module.split(".")).with_suffix(".py")
        names = (module, module.replace(".", "/") + ".py", f'"{own.name}"')
        if any(path != own and any(n in text for n in names) for path, text in texts.items()):
            used.add(module)
    return used


def package_map():
    """La sección «El mapa del paquete» de docs/mantenimiento.md."""
    text = pathlib.Path(ROOT, "docs", "mantenimiento.md").read_text(encoding="utf-8")
    start = text.index("## El mapa del paquete")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_the_package_map_in_the_docs_matches_the_folders():
    """Cada carpeta de harness/ y cada uno de sus módulos aparece en el mapa, y el mapa no nombra módulos
    que ya no existen."""
    section = package_map()
    modules = {p for p in HARNESS.rglob("*.py") if p.name != "__init__.py" and p.parent.name != "checks"}
    missing = [str(p.relative_to(ROOT)) for p in modules if f"`{p.stem}`" not in section]
    folders = [str(p.relative_to(ROOT)) for p in HARNESS.iterdir() if (p / "__init__.py").exists()]
    missing += [f for f in folders if f"`{f}/`" not in section]
    assert missing == [], "el mapa de docs/mantenimiento.md no nombra: " + ", ".join(sorted(missing))
    named = {name for name in _backticked(section) if name.isidentifier()}
    stems = {p.stem for p in modules}
    ghosts = {n for n in named if n.islower() and "_" in n and n not in stems and not _defined(n)}
    assert ghosts == set(), f"el mapa nombra módulos que no existen: {sorted(ghosts)}"


def _backticked(text):
    return [part for i, part in enumerate(text.split("`")) if i % 2]


def _defined(name):
    """¿Es ``name`` una función o constante del paquete (el mapa puede nombrar alguna)?"""
    return any(f"def {name}(" in p.read_text(encoding="utf-8") for p in HARNESS.rglob("*.py"))

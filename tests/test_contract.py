"""Un solo contrato (``harness.contract``): cada línea se lee como se escribió, y el paquete no tiene
ciclos ni copias de los nombres del contrato. Que el agente de la lección imprima exactamente esa
gramática con sus propios literales lo prueba la suite de conformidad (``test_log_grammar.py``)."""

import ast
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import contract
from harness.contract import format_line, parse_line
from harness.crash import KINDS

HARNESS = pathlib.Path(contract.__file__).parent
LABELS = [f"{kind}:{turn}" for turn in (1, 2, 3) for kind in KINDS]

# —— Escribir y leer ——

names = st.sampled_from(["read_notes", "count_words", "write_report", "check_report"])
ids = st.from_regex(r"toolu_[A-Za-z0-9_-]{1,12}", fullmatch=True)
turns = st.integers(min_value=1, max_value=10_000)
texts = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1).map(str.strip)


@given(turn=turns, pending=st.lists(names, min_size=1, max_size=4))
def test_a_save_a_line_reads_back(turn, pending):
    line = contract.save_a_line(turn, pending)
    parsed = parse_line(line)
    assert (parsed.kind, parsed.turn, parsed.point, list(parsed.pending)) == ("save", turn, "A", pending)
    assert format_line(parsed) == line


@given(turn=turns, refilled=st.booleans(), pending=st.one_of(st.none(), names))
def test_save_b_and_resume_lines_read_back(turn, refilled, pending):
    for line in (contract.save_b_line(turn, refilled), contract.resume_line(turn, pending)):
        assert format_line(parse_line(line)) == line
    assert parse_line(contract.save_b_line(turn, refilled)).refilled is refilled
    assert parse_line(contract.resume_line(turn, pending)).pending == ((pending,) if pending else ())


@given(tool_use_id=ids, name=names, branch=st.sampled_from(list(contract.BRANCH_MARKERS)))
def test_a_reconcile_line_names_its_branch(tool_use_id, name, branch):
    for reason in (contract.READ_ONLY_REASON, contract.KEYED_REASON):
        line = contract.reconcile_line(tool_use_id, name, branch, reason)
        parsed = parse_line(line)
        assert (parsed.tool_use_id, parsed.name, parsed.branch) == (tool_use_id, name, branch)
        assert format_line(parsed) == line


@given(label=st.sampled_from(LABELS), text=texts.filter(bool))
def test_kill_and_done_lines_read_back(label, text):
    kill = parse_line(contract.kill_line(contract.crash_message(label)))
    assert (kill.kind, kill.label) == ("kill", label)
    assert parse_line(contract.done_line(text)).text == text
    assert contract.done_text(f"[turn 1][save B]\n{contract.done_line(text)}\n") == text


def test_lines_outside_the_contract_are_not_read():
    for line in (
        "[falló la escritura del registro] tool_use_id=toolu_01: …",
        "[turn 1][paso modelo] x",
        "hola",
    ):
        assert parse_line(line) is None


# —— El paquete: las flechas van hacia abajo y los nombres del contrato viven en un solo módulo ——


def module_name(path):
    return ".".join(path.relative_to(HARNESS.parent).with_suffix("").parts).removesuffix(".__init__")


def _is_main_guard(node):
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def imports(path, modules):
    """Cada módulo de ``harness`` que importa ``path``, también dentro de funciones. ``from paquete import
    submódulo`` cuenta como importar el submódulo, no el ``__init__`` del paquete."""
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Lo que importa un «if __name__ == "__main__":» no corre al importar el módulo: no hace ciclo.
    script = {id(n) for b in tree.body if _is_main_guard(b) for n in ast.walk(b)}
    for node in ast.walk(tree):
        if id(node) in script:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            found |= submodules or {node.module}
    return found & modules


def import_graph():
    modules = {module_name(p): p for p in HARNESS.rglob("*.py")}
    return {name: imports(path, set(modules)) for name, path in modules.items()}


def test_the_harness_import_graph_has_no_cycle():
    graph, done, path = import_graph(), set(), []

    def visit(name):
        if name in path:
            pytest.fail("ciclo de importaciones: " + " → ".join([*path[path.index(name) :], name]))
        if name in done:
            return
        path.append(name)
        for target in sorted(graph[name]):
            visit(target)
        path.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)


def test_the_lab_and_the_tools_do_not_reach_beyond():
    graph = import_graph()
    lab = [name for name in graph if name.startswith("harness.crash_lab")] + ["harness.tools"]
    reaching = {name: sorted(t for t in graph[name] if t.startswith("harness.beyond")) for name in lab}
    assert {name: targets for name, targets in reaching.items() if targets} == {}
    for path in (HARNESS / "crash_lab").rglob("*.py"):
        assert "harness.beyond" not in path.read_text(encoding="utf-8"), path


# Lo que solo el contrato escribe: los nombres de los archivos y las palabras que se leen del log.
CONTRACT_WORDS = [
    contract.CHECKPOINT_FILE,
    contract.EFFECTS_FILE,
    *contract.BRANCH_MARKERS.values(),
    "[resume][reconcile]",
    "][save ",
    "[resume] leído",
]


def literals(path):
    """Los textos literales de ``path`` (partes de f-strings incluidas), sin los docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_the_contracts_words_are_spelled_in_one_module():
    spelled = {
        module_name(path): sorted(
            {word for text in literals(path) for word in CONTRACT_WORDS if word in text}
        )
        for path in HARNESS.rglob("*.py")
    }
    assert {name: words for name, words in spelled.items() if words} == {
        "harness.contract": sorted(CONTRACT_WORDS)
    }

"""The package's import graph: no cycles, and the layers point one way.

Every ``import`` in every module counts, including the deferred ones inside functions (a
cycle hidden in a function is still a cycle: it only fails later, at a call). Imports under
``if TYPE_CHECKING:`` are left out because they never run.
"""
from __future__ import annotations

import ast
from pathlib import Path

from spine_helpers import REPO

PACKAGE = REPO / "skilleval"


def _module_names() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Module names this tree imports at run time (``from pkg import sub`` -> ``pkg.sub``)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = _imports(ast.parse(path.read_text()), name, path.name == "__init__.py")
        edges = {t for t in targets if t in modules and t != name}
        # `from skilleval import hookspecs` imports the submodule, not the package's contents
        graph[name] = {t for t in edges if not any(o.startswith(t + ".") for o in edges)}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative enough
    for a package of this size)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return out


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_deferred_imports() -> None:
    graph = _graph()
    # claude_cli imports its executor inside `execute`: a deferred import, still an edge
    assert "skilleval.backends.cli_executor" in graph["skilleval.backends.claude_cli"]


def test_package_has_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert not cycles, f"import cycles: {cycles}"


def test_layers_point_one_way() -> None:
    """The execution contract is low; backends and the simulator never import functional/."""
    graph = _graph()
    for name, targets in graph.items():
        if name.startswith(("skilleval.backends", "skilleval.sim", "skilleval.execution")):
            upward = sorted(t for t in targets if t.startswith("skilleval.functional"))
            assert not upward, f"{name} imports {upward}"
        if name == "skilleval.execution":
            assert not {t for t in targets if t.startswith(("skilleval.backends", "skilleval.sim"))}


def test_product_modules_never_import_the_simulator() -> None:
    """The simulator answers skilleval's prompts from its own modules (``sim/*_responder.py``):
    a proposer, drafter or grader that imported it could lean on its internals. Only the
    backends that drive it may (stub, and the loopback hints of the real ones); ``serve-sim``
    is reached by a lazy string in cli.py."""
    graph = _graph()
    allowed = ("skilleval.sim", "skilleval.backends")
    for name, targets in graph.items():
        if not name.startswith(allowed):
            into_sim = sorted(t for t in targets if t.startswith("skilleval.sim"))
            assert not into_sim, f"{name} imports {into_sim}"

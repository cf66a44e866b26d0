"""CPU tier: the packages stack in one direction, and no module imports itself back.

    cuda/         pure CUDA (no Python)
    bindings/     the CUDA ops as torch ops; bindings/config.py reads cuda/'s headers
    triton_impl/  the Triton kernels and their wrappers (may read bindings.config,
                  bindings.precision and bindings.derivatives only: the tiles of cuda/'s
                  headers, the precision table, the backward formulas of both languages)
    bench/        the harness: sits on everything
    tests/        imported by nothing else

Imports are read from the source (every `import`, at module level or inside a function),
so a lazy import that closes a cycle counts too. `from pkg import name` is an edge to
pkg.name when that is a module, else to pkg; importing a submodule runs its package's
__init__, but that is Python's doing, not a dependency, so it is not an edge.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bindings", "triton_impl", "bench", "tests")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of PACKAGES it imports."""
    mods = modules()
    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                subs = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in mods]
                targets.update(subs)
                if len(subs) < len(node.names):      # names defined in `source` itself
                    targets.add(source)
        graph[name] = {t for t in targets if t in mods and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _edges(graph, source_pkgs, target_pkgs, allowed=()):
    return sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                  if m.split(".")[0] in source_pkgs and t.split(".")[0] in target_pkgs
                  and t not in allowed)


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_kernels_and_bindings_do_not_import_the_harness_or_the_tests():
    bad = _edges(import_graph(), ("triton_impl", "bindings"), ("bench", "tests"))
    assert not bad, "arrows running up:\n" + "\n".join(bad)


def test_nothing_imports_the_tests():
    bad = _edges(import_graph(), ("triton_impl", "bindings", "bench"), ("tests",))
    assert not bad, "product code importing tests/:\n" + "\n".join(bad)


def test_triton_reads_only_the_cuda_config_from_bindings():
    shared = ("bindings.config", "bindings.precision", "bindings.derivatives")
    bad = _edges(import_graph(), ("triton_impl",), ("bindings",), allowed=shared)
    assert not bad, (f"triton_impl may read {', '.join(shared)} only:\n" + "\n".join(bad))
    bad = _edges(import_graph(), ("bindings",), ("triton_impl",))
    assert not bad, "bindings sits on cuda/ only:\n" + "\n".join(bad)


def test_the_graph_sees_lazy_imports_and_cycles():
    """The reader itself: a function-level import is an edge, and a two-module loop is found."""
    graph = import_graph()
    assert "bench.plot_style" in graph["bench.images"]       # imported inside main()
    assert "tests.support.checks" in graph["tests.gpu.test_matmul_triton"]   # tests/ subfolders
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]

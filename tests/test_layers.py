"""Imports point one way (dse -> archmodels -> workloads) and dse/ has no import circles."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["workloads", "archmodels", "dse"]  # a package may import only those before it


def _imports(path: Path, package: str) -> set[str]:
    """Absolute module names imported in ``path`` (relative imports resolved; type-checking-only ones left out)."""
    tree = ast.parse(path.read_text())
    pkg_parts = list(path.relative_to(ROOT).parent.parts)
    type_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                 and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
                 for n in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg_parts[: len(pkg_parts) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names)
    return out


def _modules(package: str):
    for p in sorted((ROOT / package).rglob("*.py")):
        yield p


def test_imports_point_one_way():
    bad = []
    for i, pkg in enumerate(ORDER):
        higher = ORDER[i + 1:]
        for p in _modules(pkg):
            for name in _imports(p, pkg):
                if name.split(".")[0] in higher:
                    bad.append(f"{p.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_no_import_circles_in_dse():
    mods = {p.stem: p for p in _modules("dse") if p.parent == ROOT / "dse" and p.stem != "__init__"}
    graph = {m: {n.split(".")[1] for n in _imports(p, "dse") if n.startswith("dse.") and n.split(".")[1] in mods} - {m}
             for m, p in mods.items()}

    def cycle_from(start):
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    return path + [start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
        return None

    cycles = [c for m in graph if (c := cycle_from(m))]
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles)

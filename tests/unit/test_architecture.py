"""The package's import graph: no cycle, the command layer on top, the library below `models`."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The entry points: the only modules that may import the command layer and `models` (which fills the registry).
ENTRY_POINTS = ("gan_sru.__main__", "gan_sru.commands", "gan_sru.api")


def is_entry_point(module):
    return any(module == e or module.startswith(e + ".") for e in ENTRY_POINTS)


def import_graph(package="gan_sru"):
    """{module: set of modules it imports} over `package`, module- and function-level imports alike.
    A module importing an ancestor package is not an edge (Python runs the ancestor's __init__ first anyway);
    `external` collects every imported name outside the package."""
    mods = {}
    for p in (ROOT / package).rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        mods[name[: -len(".__init__")] if name.endswith(".__init__") else name] = p
    graph, external = {m: set() for m in mods}, {m: set() for m in mods}
    for m, p in mods.items():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = m.split(".") if p.name == "__init__.py" else m.split(".")[:-1]
                    base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                target = name
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if not target:
                    external[m].add(name.split(".")[0])
                elif target != m and not m.startswith(target + "."):
                    graph[m].add(target)
    return graph, external


def test_no_module_imports_a_module_that_imports_it_back():
    graph, _ = import_graph()
    cycles = []

    def walk(node, path):
        for nxt in sorted(graph[node]):
            if nxt in path:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif len(path) < 20:
                walk(nxt, path + [nxt])

    for m in sorted(graph):
        walk(m, [m])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles[:5])


def test_nothing_below_the_command_layer_imports_it():
    graph, _ = import_graph()
    offenders = {m: sorted(t for t in targets if t.startswith("gan_sru.commands"))
                 for m, targets in graph.items() if not is_entry_point(m)}
    assert not {m: t for m, t in offenders.items() if t}


def test_the_library_never_imports_models():
    _, external = import_graph()
    assert not [m for m, names in external.items() if "models" in names and not is_entry_point(m)]


def test_the_checker_sees_a_cycle(tmp_path, monkeypatch):
    """The graph walk is live: two modules importing each other form a cycle it finds."""
    pkg = tmp_path / "loop_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from loop_pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    graph, _ = import_graph("loop_pkg")
    assert "loop_pkg.b" in graph["loop_pkg.a"] and "loop_pkg.a" in graph["loop_pkg.b"]


def private_imports(package="gan_sru"):
    """['module: from target import _name', ...]: names with a leading underscore (not dunders) that a module
    of `package` imports from another module of it."""
    found = []
    for p in sorted((ROOT / package).rglob("*.py")):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        module = name[: -len(".__init__")] if name.endswith(".__init__") else name
        for node in ast.walk(ast.parse(p.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if p.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            if base != package and not base.startswith(package + "."):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{module}: from {base} import {alias.name}")
    return found


def folder_edges(graph, package="gan_sru"):
    """{(folder A, folder B)}: some module under package/A imports some module under package/B (A != B);
    a folder is a subpackage directly under the package."""
    folders = {p.name for p in (ROOT / package).iterdir() if (p / "__init__.py").exists()}

    def folder(module):
        parts = module.split(".")
        return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in folders) else None

    edges = set()
    for m, targets in graph.items():
        for t in targets:
            a, b = folder(m), folder(t)
            if a in folders and b in folders and a != b:
                edges.add((a, b))
    return edges


def test_no_module_imports_another_modules_private_name():
    found = private_imports()
    assert not found, "private names imported across modules (make them public): " + "; ".join(found)


def test_no_two_top_level_folders_import_each_other():
    edges = folder_edges(import_graph()[0])
    both = sorted(f"{a}/ <-> {b}/" for a, b in edges if (b, a) in edges and a < b)
    assert not both, "top-level folders that import each other: " + "; ".join(both)


def test_the_checkers_see_private_imports_and_two_way_folders(tmp_path, monkeypatch):
    """Both rules are live: a private import and two folders importing each other are found."""
    pkg = tmp_path / "rooms_pkg"
    for folder in ("ops", "metrics"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "ops" / "cpu.py").write_text("def _sigmoid(x):\n    return x\n")
    (pkg / "metrics" / "gru.py").write_text("from rooms_pkg.ops.cpu import _sigmoid\n")
    (pkg / "ops" / "fit.py").write_text("def f():\n    from ..metrics import gru\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert private_imports("rooms_pkg") == ["rooms_pkg.metrics.gru: from rooms_pkg.ops.cpu import _sigmoid"]
    edges = folder_edges(import_graph("rooms_pkg")[0], "rooms_pkg")
    assert ("ops", "metrics") in edges and ("metrics", "ops") in edges

"""A Python file's symbols, imports and calls, read with the standard library's ``ast``.

``ast`` is exact for the Python version the kernel runs on, costs no dependency, and
Python is the kernel's own language. A call is resolved from the file alone (its own
definitions, its imports, ``self``/``cls`` in a class) to the qualified name it most
likely means; a call on any other object (``store.run(...)``) is left out rather than
guessed, so the call graph may miss an edge but never invents one. Facts depend on the
file's text only: that is what lets a re-ingest parse just the files that changed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
DOC_CHARS = 300


@dataclass
class SymbolFacts:
    kind: str  # function | method | class | test
    name: str
    qname: str
    signature: str
    line: int
    end_line: int
    calls: list[str] = field(default_factory=list)
    doc: str = ""  # the docstring's first paragraph, cut to DOC_CHARS


@dataclass(frozen=True)
class ModuleFacts:
    module: str
    imports: tuple[str, ...]
    symbols: tuple[SymbolFacts, ...]
    parse_error: str | None = None


def module_name(path: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; a package's ``__init__.py`` is the package."""
    parts = path.removesuffix(".pyi").removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _absolute(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if level == 0:
        return target or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, *([target] if target else [])])


def _imports(tree: ast.Module, module: str, is_package: bool) -> tuple[dict[str, str], set[str]]:
    """Local name -> qualified name it stands for; and the modules imported."""
    names: dict[str, str] = {}
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.add(alias.name)
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    names[head] = head
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_package, node.level, node.module)
            modules.add(source)
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{source}.{alias.name}"
                    modules.add(f"{source}.{alias.name}")  # it may be a submodule
    return names, modules


def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


@dataclass(frozen=True)
class _Scope:
    module: str
    names: dict[str, str]  # imports and the module's own top-level definitions
    cls: str | None  # the qualified name of the enclosing class, for self.x() and cls.x()


def _resolve(call: ast.Call, scope: _Scope) -> str | None:
    dotted = _dotted(call.func)
    if dotted is None:
        return None
    head, rest = dotted[0], dotted[1:]
    if head in ("self", "cls") and scope.cls is not None and len(rest) == 1:
        return f"{scope.cls}.{rest[0]}"
    base = scope.names.get(head)
    return None if base is None else ".".join([base, *rest])


def _calls(body: ast.AST, scope: _Scope) -> list[str]:
    found = {q for node in ast.walk(body) if isinstance(node, ast.Call)
             if (q := _resolve(node, scope)) is not None}
    return sorted(found)


def _signature(node: _Def) -> str:
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        return f"class {node.name}({bases})" if bases else f"class {node.name}"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def _doc(node: _Def) -> str:
    """What the docstring says first: the part a reader (and an embedding) needs."""
    text = ast.get_docstring(node) or ""
    return " ".join(text.split("\n\n")[0].split())[:DOC_CHARS]


def _kind(node: _Def, in_class: bool, test_file: bool) -> str:
    if isinstance(node, ast.ClassDef):
        return "class"
    if test_file and node.name.startswith("test"):
        return "test"
    return "method" if in_class else "function"


def _symbols(body: list[ast.stmt], prefix: str, scope: _Scope, test_file: bool,
             out: dict[str, SymbolFacts]) -> None:
    """Top-level definitions and those of classes, nested classes included; a function's
    inner definitions count as its own body."""
    for node in body:
        if not isinstance(node, _Def):
            continue
        qname = f"{prefix}.{node.name}"
        out[qname] = SymbolFacts(  # a later definition of the same name wins, as in Python
            kind=_kind(node, scope.cls is not None, test_file), name=node.name, qname=qname,
            signature=_signature(node), line=node.lineno,
            end_line=node.end_lineno or node.lineno, doc=_doc(node))
        if isinstance(node, ast.ClassDef):
            inner = _Scope(scope.module, scope.names, qname)
            _symbols(node.body, qname, inner, test_file, out)
            out[qname].calls = _calls(ast.Module(body=[b for b in node.body
                                                       if not isinstance(b, _Def)],
                                                 type_ignores=[]), inner)
        else:
            out[qname].calls = _calls(node, scope)


def python_facts(path: str, text: str, test_file: bool) -> ModuleFacts:
    module = module_name(path)
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        return ModuleFacts(module, (), (), parse_error=str(exc).splitlines()[0][:200])
    is_package = path.endswith("__init__.py")
    names, modules = _imports(tree, module, is_package)
    for node in tree.body:
        if isinstance(node, _Def):
            names[node.name] = f"{module}.{node.name}"
    found: dict[str, SymbolFacts] = {}
    _symbols(tree.body, module, _Scope(module, names, None), test_file, found)
    return ModuleFacts(module, tuple(sorted(modules - {""})), tuple(found.values()))

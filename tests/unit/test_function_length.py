"""No function in the package is over 60 lines (from its `def` to its last line, decorators
left out, a nested function counted in its parent too): a longer one has more than one
responsibility to split out, as docs/design.md says of the package's rooms."""

from __future__ import annotations

import ast
from pathlib import Path

import mockllm

LIMIT = 60
PACKAGE = Path(mockllm.__file__).parent


def long_functions(root: Path, limit: int = LIMIT) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > limit:
                    where = path.relative_to(root.parent)
                    found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_the_package_is_over_sixty_lines() -> None:
    assert long_functions(PACKAGE) == []


def test_the_count_sees_a_long_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    (package / "m.py").write_text(f"def short():\n    pass\n\n\nasync def long():\n{body}")
    assert long_functions(package) == [f"pkg/m.py:5 long ({LIMIT + 1} lines)"]

"""Every default of a setting has one home, guard/defaults.py: no settings class writes a number
or a string as its default."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SETTINGS_MODULES = [
    "guard/settings.py",
    "guard/budgets/settings.py",
    "guard/cost_settings.py",
    "consumers/settings.py",
]


def _literal_defaults(path: Path) -> list[str]:
    """``field = Field(default=<number or string>)`` and ``field: int = <number>`` in classes."""
    found = []
    for cls in (
        n for n in ast.walk(ast.parse(path.read_text("utf-8"))) if isinstance(n, ast.ClassDef)
    ):
        for stmt in cls.body:
            if not isinstance(stmt, ast.AnnAssign) or stmt.value is None:
                continue
            value = stmt.value
            if isinstance(value, ast.Call):
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            if _is_literal(value):
                found.append(f"{cls.name}.{ast.unparse(stmt.target)}")
    return found


def _is_literal(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool)
    return isinstance(node, ast.BinOp) and _is_literal(node.left) and _is_literal(node.right)


@pytest.mark.parametrize("module", SETTINGS_MODULES)
def test_settings_read_their_defaults_from_guard_defaults(module: str) -> None:
    assert _literal_defaults(ROOT / module) == []


def test_the_check_sees_a_literal_default(tmp_path: Path) -> None:
    source = tmp_path / "s.py"
    source.write_text(
        "class S:\n    a: int = Field(default=3, ge=1)\n    b: int = 2 * 4\n"
        "    c: bool = False\n    d: int = Field(default=defaults.D)\n"
    )
    assert _literal_defaults(source) == ["S.a", "S.b"]

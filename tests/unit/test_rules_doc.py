"""The offline rules reference (docs/rules.md) is generated from the rule registry and checked
for drift like the settings reference: `groundguard rules-doc --check` fails on any change."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from consumers import rules_doc
from consumers.cli.commands import rules_doc as command
from guard.offline.registry import BASES, RULES

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_reference_is_the_one_generated_from_the_registry() -> None:
    """Changing a rule without `groundguard rules-doc --write` fails here, with a diff."""
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_doc.render(), "\n".join(rules_doc.drift())
    assert rules_doc.drift() == []


def test_the_reference_has_a_row_per_rule_and_names_every_basis() -> None:
    text = rules_doc.render()
    assert all(f"| `{rule.name}` |" in text for rule in RULES)
    assert all(f"`{basis}`" in text for basis in BASES)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    return parser


def test_check_exits_1_naming_the_fix_when_the_file_drifted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "rules.md"
    check = _parser().parse_args(["rules-doc", "--check", "--file", str(target)])
    assert check.func(check) == 1
    assert "missing" in capsys.readouterr().err
    target.write_text(rules_doc.render().replace("| `number` |", "| `numbers` |"), "utf-8")
    assert check.func(check) == 1
    assert "groundguard rules-doc --write" in capsys.readouterr().err


def test_write_then_check_passes(tmp_path: Path) -> None:
    target = tmp_path / "rules.md"
    write = _parser().parse_args(["rules-doc", "--write", "--file", str(target)])
    assert write.func(write) == 0
    check = _parser().parse_args(["rules-doc", "--check", "--file", str(target)])
    assert check.func(check) == 0


def test_invisible_characters_of_an_example_are_written_as_escapes() -> None:
    """display_reordered's example holds a right-to-left override: shown as \\u202e, never
    raw (a raw one would reorder the page for its reader)."""
    text = rules_doc.render()
    assert "\u202e" not in text
    assert "\\u202e" in text

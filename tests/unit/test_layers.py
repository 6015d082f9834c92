"""The layers stay apart: the core never imports the runtime or Kafka, and the runtime never
imports the command line (consumers/cli/ sits on top of both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _loaded_after(*modules: str) -> set[str]:
    """Top modules in ``sys.modules`` after importing ``modules`` in a fresh interpreter."""
    code = (
        "import importlib, sys\n"
        f"for name in {list(modules)!r}: importlib.import_module(name)\n"
        "print('\\n'.join(sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize(
    "module", ["consumers.runtime.run", "consumers.health", "consumers.metrics"]
)
def test_the_runtime_does_not_import_the_cli(module: str) -> None:
    assert not {m for m in _loaded_after(module) if m.startswith("consumers.cli")}


def test_the_core_imports_neither_the_runtime_nor_kafka() -> None:
    loaded = _loaded_after("guard.assembly", "guard.boundary", "guard.engine", "guard.replay")
    assert not {m for m in loaded if m.split(".")[0] in ("consumers", "aiokafka")}


def test_the_judge_settings_load_no_budget_layer() -> None:
    """Settings import nothing above them: reading ``JudgeSettings`` builds no judge."""
    loaded = _loaded_after("guard.settings")
    above = {
        m
        for m in loaded
        if m.startswith(("guard.budgets.", "guard.providers", "guard.engine", "guard.offline"))
    }
    assert above <= {"guard.budgets.settings"}


def test_the_providers_do_not_import_the_test_fakes() -> None:
    """providers/ builds LLM judges only; the fake judge is wired in by guard.assembly."""
    root = Path(__file__).parents[2]
    sources = sorted((root / "guard" / "providers").glob("*.py"))
    assert sources
    assert not [p.name for p in sources if "guard.testing" in p.read_text("utf-8")]

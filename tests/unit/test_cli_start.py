"""The CLI checks what it can before any side effect: ``demo`` with an LLM judge and no key
fails before it starts a broker, creates topics or produces a message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from consumers.cli.commands import demo
from consumers.cli.main import main


@pytest.mark.parametrize(
    ("judge", "var"),
    [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"), ("cascade", "OPENAI")],
)
def test_demo_with_an_llm_judge_and_no_key_fails_before_touching_kafka(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], judge: str, var: str
) -> None:
    started: list[Any] = []

    async def run_demo(*args: Any, **kwargs: Any) -> None:
        started.append(args)

    monkeypatch.setattr(demo, "run_demo", run_demo)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["demo", "--judge", judge, "--bootstrap", "127.0.0.1:1"]) == 2
    assert started == []
    assert var in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "source"),
    [
        (["--context", "Returns within 30 days."], "context"),
        (["--context", "Returns within 30 days.", "--messages", "{msgs}"], "context"),
        (["--messages", "{msgs}", "--expected-output", "30 days"], "messages"),
        (["--expected-output", "Returns within 30 days."], "expected_output"),
        ([], "context"),
    ],
)
def test_check_judges_against_the_source_its_help_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], source: str
) -> None:
    """``check --help`` says which grounding source is taken when none is named; the verdict
    names the one taken."""
    msgs = tmp_path / "msgs.json"
    msgs.write_text(json.dumps([{"role": "user", "content": "Returns within 30 days?"}]))
    flags = [str(msgs) if flag == "{msgs}" else flag for flag in flags]
    main(["check", "--output", "Returns within 30 days.", "--json", *flags])
    assert json.loads(capsys.readouterr().out)["source"] == source
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = capsys.readouterr().out
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    for said in (help_text, readme):
        assert "when --messages is given" in " ".join(said.replace("`", "").split())

"""First-hour frictions of the ``groundguard`` command line, each as a new user meets it."""

from __future__ import annotations

import contextlib
import io
import json
from importlib.metadata import version
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumers.cli.main import main
from guard.models import Label, Verdict


def test_version_prints_the_installed_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"groundguard {version('groundguard')}"


PARIS = "Paris is the capital of France. It has a population of 2.1 million."


class TestGroundingSourceOfCheck:
    def test_an_expected_output_given_alone_is_the_grounding_source(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status = main(
            [
                "check",
                "--json",
                "--expected-output",
                PARIS,
                "--output",
                "Paris, the capital of France, has about 2.1 million residents.",
            ]
        )
        verdict = Verdict.model_validate_json(capsys.readouterr().out)
        assert (status, verdict.label, verdict.source.value) == (0, Label.PASS, "expected_output")

    def test_an_explicit_context_field_still_wins(self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(
            [
                "check",
                "--json",
                "--context-field",
                "context",
                "--expected-output",
                PARIS,
                "--output",
                "Paris is in France.",
            ]
        )
        out, err = capsys.readouterr()
        assert (status, Verdict.model_validate_json(out).reason) == (1, "no_evidence")
        assert "hint:" in err
        assert "--context" in err

    def test_no_evidence_comes_with_a_hint_naming_the_source_that_was_given(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status = main(["check", "--input", PARIS, "--output", "Paris is in France."])
        out, err = capsys.readouterr()
        assert status == 1
        assert "no_evidence" in out
        assert "--context-field input" in err


class TestBadRequestFile:
    """A bad ``--request`` file: the message names the file and the real problem."""

    @pytest.mark.parametrize(
        ("content", "problem"),
        [
            (None, "not found"),
            ("not json", "not valid JSON"),
            ("[1, 2]", "holds a JSON array, not an object"),
            ('{"answer": "x", "context": "y"}', 'no "output" field'),
            ('{"output": 5, "context": "y"}', "output: input should be a valid string"),
            ('{"output": "a", "context": "a", "output": "b"}', "duplicate key 'output'"),
        ],
    )
    def test_the_file_and_the_problem_are_named(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | None, problem: str
    ) -> None:
        path = tmp_path / "req.json"
        if content is not None:
            path.write_text(content, encoding="utf-8")
        assert main(["check", "--request", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"--request {path}" in err
        assert problem in err

    def test_an_output_flag_completes_a_request_file_without_one(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = tmp_path / "req.json"
        path.write_text('{"context": "Paris is in France."}', encoding="utf-8")
        assert main(["check", "--request", str(path), "--output", "Paris is in France."]) == 0

    def test_a_bad_messages_file_is_named_too(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        path = tmp_path / "chat.json"
        path.write_text("{oops", encoding="utf-8")
        assert main(["check", "--messages", str(path), "--output", "x"]) == 2
        err = capsys.readouterr().err
        assert f"--messages {path}" in err
        assert "not valid JSON" in err


class TestDemoJudge:
    """The demo stays offline (free, no network) unless a judge is asked for by name."""

    def _judge(self, *argv: str) -> str:
        from consumers.cli.commands.demo import _judge_for_demo
        from consumers.cli.main import build_parser

        return _judge_for_demo(build_parser().parse_args(["demo", *argv])).provider.value

    def test_an_api_key_in_the_environment_does_not_switch_to_a_paid_judge(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used-0123456789")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-used-0123456789")
        assert self._judge() == "offline"

    def test_judge_openai_asks_for_the_llm_judge(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used-0123456789")
        assert self._judge("--judge", "openai") == "openai"

    def test_the_help_says_the_demo_is_offline_unless_asked(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit):
            main(["demo", "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "offline judge unless --judge" in text
        assert "OPENAI_API_KEY, then" not in text


def _requests(tmp_path: Path, rows: int, *, bad: bool = False) -> Path:
    path = tmp_path / "requests.jsonl"
    lines = [
        json.dumps({"id": f"r{i}", "context": PARIS, "output": "Paris is in France."})
        for i in range(rows)
    ]
    path.write_text("\n".join([*lines, *(["{not json"] if bad else [])]) + "\n", encoding="utf-8")
    return path


def test_replay_writes_no_terminal_escape_codes_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert (
        main(["replay", str(_requests(tmp_path, 3, bad=True)), "--out", str(tmp_path / "v.jsonl")])
        == 0
    )
    captured = capsys.readouterr()
    assert "line 4: invalid_json" in captured.err
    for stream in (captured.out, captured.err):
        assert "\033" not in stream
        assert "\r" not in stream


def test_replay_summary_only_prints_the_summary_and_no_verdicts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["replay", str(_requests(tmp_path, 20)), "--summary-only"]) == 0
    out = capsys.readouterr().out
    assert "{" not in out
    assert "20" in out
    assert "pass" in out


def test_replay_summary_only_and_out_exclude_each_other(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as done:
        main(["replay", str(_requests(tmp_path, 1)), "--summary-only", "--out", "v.jsonl"])
    assert done.value.code == 2


@settings(max_examples=60, deadline=None)
@given(
    content=st.one_of(
        st.binary(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["output", "context", "messages", "id", "question", "x"]),
                    inner,
                    max_size=4,
                )
            ),
            max_leaves=10,
        ).map(lambda value: json.dumps(value).encode()),
    )
)
def test_any_request_file_gets_a_verdict_or_a_usage_error_naming_it(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    path = tmp_path_factory.mktemp("req") / "req.json"
    path.write_bytes(content)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["check", "--request", str(path)])
    assert status in (0, 1, 2, 3)
    if status == 2:
        assert f"--request {path}" in err.getvalue()

"""First-hour frictions of the ``groundguard`` command line, each as a new user meets it."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from consumers.cli import main
from guard.models import Label, Verdict


def test_version_prints_the_installed_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"groundguard {version('groundguard')}"


PARIS = "Paris is the capital of France. It has a population of 2.1 million."


class TestGroundingSourceOfCheck:
    def test_an_expected_output_given_alone_is_the_grounding_source(
            self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(["check", "--json", "--expected-output", PARIS, "--output",
                       "Paris, the capital of France, has about 2.1 million residents."])
        verdict = Verdict.model_validate_json(capsys.readouterr().out)
        assert (status, verdict.label, verdict.source.value) == (0, Label.PASS, "expected_output")

    def test_an_explicit_context_field_still_wins(
            self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(["check", "--json", "--context-field", "context",
                       "--expected-output", PARIS, "--output", "Paris is in France."])
        out, err = capsys.readouterr()
        assert (status, Verdict.model_validate_json(out).reason) == (1, "no_evidence")
        assert "hint:" in err
        assert "--context" in err

    def test_no_evidence_comes_with_a_hint_naming_the_source_that_was_given(
            self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(["check", "--input", PARIS, "--output", "Paris is in France."])
        out, err = capsys.readouterr()
        assert status == 1
        assert "no_evidence" in out
        assert "--context-field input" in err


class TestBadRequestFile:
    """A bad ``--request`` file: the message names the file and the real problem."""

    @pytest.mark.parametrize(("content", "problem"), [
        (None, "not found"),
        ("not json", "not valid JSON"),
        ("[1, 2]", "holds a JSON array, not an object"),
        ('{"answer": "x", "context": "y"}', 'no "output" field'),
        ('{"output": 5, "context": "y"}', "output: input should be a valid string"),
    ])
    def test_the_file_and_the_problem_are_named(
            self, capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | None,
            problem: str) -> None:
        path = tmp_path / "req.json"
        if content is not None:
            path.write_text(content, encoding="utf-8")
        assert main(["check", "--request", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"--request {path}" in err
        assert problem in err

    def test_an_output_flag_completes_a_request_file_without_one(
            self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        path = tmp_path / "req.json"
        path.write_text('{"context": "Paris is in France."}', encoding="utf-8")
        assert main(["check", "--request", str(path), "--output", "Paris is in France."]) == 0

    def test_a_bad_messages_file_is_named_too(self, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
        path = tmp_path / "chat.json"
        path.write_text("{oops", encoding="utf-8")
        assert main(["check", "--messages", str(path), "--output", "x"]) == 2
        err = capsys.readouterr().err
        assert f"--messages {path}" in err
        assert "not valid JSON" in err

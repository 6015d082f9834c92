"""``groundguard check`` and ``replay`` end to end: the real OpenAI and Anthropic SDKs talk over
HTTP to the loopback fake, scripted to judge numbers strictly; and the offline judge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from consumers.cli.main import main
from guard.models import Label, Verdict
from guard.testing.fake_api import Fault, numbers_verdict
from guard.testing.fake_server import FakeLLMServer

POLICY = "Our return policy allows returns within 30 days."
PARIS = "Paris is the capital of France. It has a population of 2.1 million."
CONVERSATION = [
    {"role": "user", "content": "What's our refund window?"},
    {"role": "tool", "name": "lookup_policy", "content": "Refunds: 30 days from delivery."},
    {"role": "assistant", "content": "30 days from delivery."},
    {"role": "user", "content": "And for electronics?"},
]
SECRET = "sk-test-THIS-KEY-MUST-NEVER-BE-PRINTED-0123456789"


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=numbers_verdict) as server:
        yield server


@pytest.fixture(params=["openai", "anthropic", "offline"])
def judge_args(
    request: pytest.FixtureRequest, llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """The same reference examples through each judge: two LLM SDKs (scripted) and offline."""
    llm.clear_faults()
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    if request.param == "openai":
        return ["--judge", "openai", "--base-url", llm.openai_base_url]
    if request.param == "anthropic":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", llm.anthropic_base_url)
        return ["--judge", "anthropic", "--model", "claude-haiku-4-5"]
    return ["--judge", "offline"]


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Verdict, str]:
    status = main(["check", "--json", *args])
    out, err = capsys.readouterr()
    return status, Verdict.model_validate_json(out), err


class TestReferenceExamples:
    def test_a_faithful_answer_passes_with_full_score(
        self, capsys: pytest.CaptureFixture[str], judge_args: list[str]
    ) -> None:
        status, verdict, _ = check(
            capsys,
            *judge_args,
            "--context",
            POLICY,
            "--output",
            "You can return items within 30 days.",
        )
        assert (status, verdict.label, verdict.hallucinated) == (0, Label.PASS, False)
        # the offline judge cannot prove a paraphrase: it passes it unsure, at raw 4
        assert verdict.score == (0.75 if verdict.judge.unsure else 1.0)

    def test_a_changed_number_fails(
        self, capsys: pytest.CaptureFixture[str], judge_args: list[str]
    ) -> None:
        status, verdict, _ = check(
            capsys,
            *judge_args,
            "--context",
            POLICY,
            "--output",
            "You can return items within 90 days for a full refund.",
        )
        assert (status, verdict.label, verdict.hallucinated) == (1, Label.FAIL, True)
        assert verdict.unsupported_claims
        assert "90" in verdict.unsupported_claims[0].claim

    def test_expected_output_as_source_passes_a_paraphrase(
        self, capsys: pytest.CaptureFixture[str], judge_args: list[str]
    ) -> None:
        status, verdict, _ = check(
            capsys,
            *judge_args,
            "--context-field",
            "expected_output",
            "--expected-output",
            PARIS,
            "--output",
            "Paris, the capital of France, has about 2.1 million residents.",
        )
        assert (status, verdict.label, verdict.source.value) == (0, Label.PASS, "expected_output")

    def test_expected_output_as_source_fails_an_invented_date(
        self, capsys: pytest.CaptureFixture[str], judge_args: list[str]
    ) -> None:
        status, verdict, _ = check(
            capsys,
            *judge_args,
            "--context-field",
            "expected_output",
            "--expected-output",
            PARIS,
            "--output",
            "Paris, the capital of France, was founded in 250 BC.",
        )
        assert (status, verdict.label) == (1, Label.FAIL)

    def test_a_conversation_answer_beyond_the_tool_result_is_hallucinated(
        self, capsys: pytest.CaptureFixture[str], judge_args: list[str], tmp_path: Path
    ) -> None:
        messages = tmp_path / "conversation.json"
        messages.write_text(json.dumps(CONVERSATION))
        status, verdict, _ = check(
            capsys,
            *judge_args,
            "--messages",
            str(messages),
            "--output",
            "Electronics can be returned within 90 days.",
        )
        assert (status, verdict.hallucinated, verdict.source.value) == (1, True, "messages")


class TestExitStatusAndSecrets:
    def test_a_judge_error_exits_3_with_an_error_verdict(
        self,
        capsys: pytest.CaptureFixture[str],
        llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        llm.inject(Fault("unauthorized"), times=1)
        status, verdict, _ = check(
            capsys,
            "--judge",
            "openai",
            "--base-url",
            llm.openai_base_url,
            "--context",
            POLICY,
            "--output",
            "x y z",
        )
        assert (status, verdict.label, verdict.hallucinated) == (3, Label.ERROR, None)
        assert verdict.error is not None
        assert verdict.error.kind == "judge_rejected"

    def test_missing_output_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(["check", "--context", POLICY])
        assert status == 2
        assert "--output" in capsys.readouterr().err

    def test_a_bad_setting_names_the_field(self, capsys: pytest.CaptureFixture[str]) -> None:
        status = main(["check", "--threshold", "7", "--context", POLICY, "--output", "x"])
        assert status == 2
        assert "judge.threshold" in capsys.readouterr().err

    def test_the_api_key_is_never_printed(
        self,
        capsys: pytest.CaptureFixture[str],
        llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        llm.inject(Fault("unauthorized"), times=1)
        for extra in ([], ["--json"]):
            main(
                [
                    "check",
                    *extra,
                    "--judge",
                    "openai",
                    "--base-url",
                    llm.openai_base_url,
                    "--context",
                    POLICY,
                    "--output",
                    "Returns within 30 days.",
                ]
            )
            out, err = capsys.readouterr()
            assert out
            assert SECRET not in out + err


class TestReplay:
    def test_replay_writes_a_verdict_per_good_line_and_reports_bad_lines(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        rows = [
            {
                "id": "a",
                "context": POLICY,
                "output": "Returns within 30 days.",
                "hallucinated": False,
            },
            {
                "id": "b",
                "context": POLICY,
                "output": "Returns within 90 days.",
                "hallucinated": True,
            },
        ]
        lines = [
            json.dumps(rows[0]),
            "{not json",
            json.dumps({"context": POLICY}),
            json.dumps(rows[1]),
        ]
        source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        source.write_text("\n".join(lines) + "\n")
        status = main(
            [
                "replay",
                str(source),
                "--out",
                str(out),
                "--label-field",
                "hallucinated",
                "--no-progress",
            ]
        )
        printed = capsys.readouterr()
        verdicts = [json.loads(line) for line in out.read_text().splitlines()]
        assert status == 0
        assert {v["request_id"]: v["label"] for v in verdicts} == {"a": "pass", "b": "fail"}
        assert "line 2: invalid_json" in printed.err
        assert "line 3:" in printed.err
        assert "balanced accuracy" in printed.out


def test_the_readmes_routing_on_unsure_sends_review_the_undecided_answers_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README: ``groundguard replay traffic.jsonl | jq -c 'select(.judge.unsure)'``: the
    offline judge's undecided passes, never a decided fail (the jq filter applied here)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "groundguard replay traffic.jsonl | jq -c 'select(.judge.unsure)'" in readme
    rows = [
        {"id": "fail", "output": "You can return items within 90 days.", "context": POLICY},
        {"id": "open", "output": "Customers love how quick it all feels.", "context": POLICY},
        {
            "id": "pass",
            "output": "2.1 million",
            "question": "Population of Paris?",
            "context": PARIS,
        },
    ]
    traffic = tmp_path / "traffic.jsonl"
    traffic.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["replay", str(traffic), "--no-progress"]) in (0, 1)
    verdicts = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    labels = {v["request_id"]: (v["label"], v["judge"]["unsure"]) for v in verdicts}
    assert labels["fail"] == ("fail", False)
    assert labels["open"] == ("pass", True)
    assert [v["request_id"] for v in verdicts if v["judge"]["unsure"]] == ["open"]

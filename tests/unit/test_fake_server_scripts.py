"""FakeLLMServer's verdict scripts and request helpers (no network)."""

from __future__ import annotations

import pytest

from guard.testing.fake_server import (
    FakeLLMServer,
    default_verdict,
    fenced_text,
    fit_to_schema,
    marker_verdict,
    numbers_verdict,
    prompt_text,
)

PROMPT = (
    "EVIDENCE:\n<<BEGIN_EVIDENCE_ab12>>\n[1] Our return policy allows returns within 30 "
    "days. Shipping is free.\n<<END_EVIDENCE_ab12>>\n\nOUTPUT to check:\n"
    "<<BEGIN_OUTPUT_ab12>>\n{output}\n<<END_OUTPUT_ab12>>"
)


def test_default_verdict_quotes_the_fenced_evidence() -> None:
    verdict = default_verdict({}, PROMPT.format(output="Returns within 30 days. Free shipping."))
    assert verdict["score"] == 5
    assert verdict["claims"][0]["claim"] == "Returns within 30 days."
    assert (
        verdict["claims"][0]["evidence_quote"] == "Our return policy allows returns within 30 days."
    )


def test_default_verdict_fails_on_the_marker() -> None:
    verdict = default_verdict({}, PROMPT.format(output="It is fine. HALLUCINATED claim here."))
    assert (verdict["score"], verdict["grounded"]) == (1, False)
    assert verdict["claims"][0]["claim"] == "HALLUCINATED claim here."


@pytest.mark.parametrize(
    ("output", "score"),
    [
        ("You can return items within 30 days.", 5),
        ("You can return items within 90 days for a full refund.", 1),
    ],
)
def test_numbers_verdict_fails_numbers_missing_from_the_evidence(output: str, score: int) -> None:
    assert numbers_verdict({}, PROMPT.format(output=output))["score"] == score


def test_the_default_fake_fails_a_wrong_number_and_the_marker_script_does_not() -> None:
    """The shipped fake's default must not pass a hallucination a user's test feeds it
    ("90 days" against "30 days"); the plumbing-only script is named as such (issue 29)."""
    wrong = PROMPT.format(output="You can return items within 90 days.")
    assert FakeLLMServer().verdict is default_verdict
    assert default_verdict({}, wrong)["grounded"] is False
    assert (
        default_verdict({}, wrong)["claims"][0]["claim"] == "You can return items within 90 days."
    )
    assert marker_verdict({}, wrong)["grounded"] is True


def test_fit_to_schema_derives_the_missing_verdict_field() -> None:
    scale = {"properties": {"explanation": {}, "claims": {}, "score": {}}}
    binary = {"properties": {"explanation": {}, "claims": {}, "grounded": {}}}
    assert fit_to_schema({"explanation": "", "claims": [], "grounded": True}, scale)["score"] == 5
    assert fit_to_schema({"explanation": "", "claims": [], "score": 2}, binary) == {
        "explanation": "",
        "claims": [],
        "grounded": False,
    }
    assert "_refusal" in fit_to_schema({"_refusal": "no"}, scale)


def test_prompt_text_reads_all_three_request_shapes() -> None:
    assert (
        prompt_text(
            {
                "messages": [
                    {"role": "system", "content": "S"},
                    {"role": "user", "content": [{"type": "text", "text": "U"}]},
                ]
            }
        )
        == "S\nU"
    )
    assert prompt_text({"instructions": "I", "input": "U"}) == "I\nU"
    assert prompt_text({"system": "S", "messages": [{"role": "user", "content": "U"}]}) == "S\nU"


def test_fenced_text_is_none_without_markers() -> None:
    assert fenced_text("plain text", "EVIDENCE") is None


def test_control_rejects_unknown_fault_kinds() -> None:
    srv = FakeLLMServer()
    reply = srv._control("POST", "/_faults", b'{"faults": [{"kind": "meteor"}]}')
    assert reply.status == 400
    ok = srv._control(
        "POST", "/_faults", b'{"faults": [{"kind": "hang", "times": 2}], "latency_ms": 5}'
    )
    assert ok.status == 200
    assert srv.latency_s == 0.005


def test_only_loopback_hosts_are_allowed() -> None:
    with pytest.raises(ValueError, match="loopback"):
        FakeLLMServer(host="0.0.0.0")


def test_script_endpoint_selects_named_or_fixed_verdicts() -> None:
    srv = FakeLLMServer()
    assert srv._control("POST", "/_script", b'{"script": "numbers"}').status == 200
    assert srv.verdict is numbers_verdict
    assert srv._control("POST", "/_script", b'{"script": "psychic"}').status == 400
    fixed = b'{"verdict": {"explanation": "x", "claims": [], "score": 2}}'
    assert srv._control("POST", "/_script", fixed).status == 200
    assert srv.verdict({}, "")["score"] == 2
    assert srv._control("POST", "/_script", b"{}").status == 200
    assert srv.verdict is default_verdict

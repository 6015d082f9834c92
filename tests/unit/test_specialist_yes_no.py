"""Granite Guardian and MiniCheck: their messages, strict Yes/No reading, and the probabilities
read from token logprobs as the model cards and reference code compute them."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from guard.case import Passage, PreparedCase
from guard.errors import MalformedJudgeOutput
from guard.models import ContextField, Cut, ScoringMode, Truncation
from guard.specialist import granite, minicheck
from guard.specialist.granite import GraniteGuardian, risk_probability
from guard.specialist.minicheck import SYSTEM_PROMPT, MiniCheck, claims_of
from guard.specialist.reply import Reply, label_mass

OUTPUT = "You can return items within 30 days. Shipping is free."


def case(**changes: object) -> PreparedCase:
    cut = Cut(original_chars=10, kept_chars=10, truncated=False)
    base = PreparedCase(
        request_id="r1",
        output=OUTPUT,
        evidence="[1] Returns within 30 days.\n\n[2] Shipping costs nothing.",
        passages=(
            Passage("[1]", "Returns within 30 days."),
            Passage("[2]", "Shipping costs nothing."),
        ),
        source=ContextField.CONTEXT,
        mode=ScoringMode.SCALE5,
        threshold=0.5,
        question="Can I return it?",
        truncation=Truncation(context=cut, output=cut),
        injections=(),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def lp(p: float) -> float:
    return math.log(p)


class TestGraniteMessages:
    def test_context_then_assistant_and_the_risk_as_template_kwargs(self) -> None:
        fmt = GraniteGuardian(use_logprobs=True, risk_via="chat_template_kwargs")
        (call,) = fmt.calls(case())
        assert list(call.messages) == [
            {"role": "context", "content": "Returns within 30 days.\n\nShipping costs nothing."},
            {"role": "assistant", "content": OUTPUT},
        ]
        assert call.extra == {
            "logprobs": True,
            "top_logprobs": 5,
            "chat_template_kwargs": {"guardian_config": {"risk_name": "groundedness"}},
        }

    def test_for_ollama_the_risk_is_the_system_message_and_nothing_else_is_in_it(self) -> None:
        fmt = GraniteGuardian(use_logprobs=False, risk_via="system")
        (call,) = fmt.calls(case())
        assert [m["role"] for m in call.messages] == ["system", "context", "assistant"]
        assert call.messages[0]["content"] == "groundedness"
        assert call.extra == {}


class TestGraniteParse:
    @pytest.mark.parametrize(
        ("text", "risky", "level"),
        [
            ("Yes", True, None),
            ("No", False, None),
            ("  no\n", False, None),
            ("YES", True, None),
            ("Yes\n<confidence> High </confidence>", True, "High"),
            ("No\n<confidence> low </confidence>", False, "Low"),
        ],
    )
    def test_yes_no_and_the_3_2_confidence_tag(
        self, text: str, risky: bool, level: str | None
    ) -> None:
        assert granite.parse(text) == (risky, level)

    @pytest.mark.parametrize(
        "text",
        ["Yes.", "Yes, it is risky", "Maybe", "No No", "<score> no </score>", "Yes <confidence>"],
    )
    def test_anything_else_is_malformed(self, text: str) -> None:
        with pytest.raises(MalformedJudgeOutput):
            granite.parse(text)


class TestGraniteProbability:
    def test_the_yes_share_of_the_yes_and_no_mass_over_every_position(self) -> None:
        positions = (
            (("Yes", lp(0.6)), ("No", lp(0.3)), ("yes", lp(0.05))),
            (("\n", lp(0.9)), (" no", lp(0.05))),
        )
        yes, no = 0.65, 0.35
        assert risk_probability(positions) == pytest.approx(yes / (yes + no))

    def test_no_yes_or_no_alternative_gives_none_not_one_half(self) -> None:
        assert risk_probability(((("Maybe", lp(0.9)),),)) is None

    def test_only_no_reported_is_near_zero_risk(self) -> None:
        assert risk_probability(((("No", lp(0.99)),),)) == pytest.approx(0.0, abs=1e-40)

    def test_reading_uses_logprobs_and_the_confidence_is_the_models_own(self) -> None:
        fmt = GraniteGuardian(use_logprobs=True, risk_via="chat_template_kwargs")
        calls = fmt.calls(case())
        reply = Reply("No", False, ((("No", lp(0.8)), ("Yes", lp(0.2))),))
        reading = fmt.read(calls, [reply])
        assert reading.grounded_p == pytest.approx(0.8)
        assert reading.confidence == pytest.approx(0.8)
        assert reading.claims == ()
        assert "P(risk) 0.200" in reading.explanation

    def test_without_logprobs_the_answer_gives_one_or_zero(self) -> None:
        fmt = GraniteGuardian(use_logprobs=False, risk_via="chat_template_kwargs")
        calls = fmt.calls(case())
        risky = fmt.read(calls, [Reply("Yes", False, None)])
        assert (risky.grounded_p, risky.confidence) == (0.0, None)
        (claim,) = risky.claims
        assert (claim.claim, claim.supported) == (OUTPUT, False)
        assert fmt.read(calls, [Reply("No", False, None)]).grounded_p == 1.0

    def test_a_cut_reply_that_is_a_whole_answer_still_counts(self) -> None:
        fmt = GraniteGuardian(use_logprobs=False, risk_via="chat_template_kwargs")
        calls = fmt.calls(case())
        assert fmt.read(calls, [Reply("No", True, None)]).grounded_p == 1.0
        with pytest.raises(MalformedJudgeOutput):
            fmt.read(calls, [Reply("No\n<confidence> Hi", True, None)])


class TestMiniCheckMessages:
    def test_one_call_per_sentence_with_the_reference_prompts(self) -> None:
        calls = MiniCheck(use_logprobs=True, max_sentences=32).calls(case())
        assert [c.claim for c in calls] == [
            "You can return items within 30 days.",
            "Shipping is free.",
        ]
        system, user = calls[1].messages
        assert system == {"role": "system", "content": SYSTEM_PROMPT}
        assert user == {
            "role": "user",
            "content": "Document: Returns within 30 days.\n\nShipping costs nothing.\n"
            "Claim: Shipping is free.",
        }
        assert calls[1].extra == {"logprobs": True, "top_logprobs": 5}

    def test_the_system_prompt_is_the_reference_text_and_holds_no_answer(self) -> None:
        assert SYSTEM_PROMPT.startswith(
            "Determine whether the provided claim is consistent with the corresponding "
            "document. Consistency in this context implies that all information presented in "
            "the claim is substantiated by the document."
        )
        assert SYSTEM_PROMPT.endswith('by responding with either "Yes" or "No".')
        for call in MiniCheck(use_logprobs=False, max_sentences=32).calls(case()):
            assert OUTPUT not in call.messages[0]["content"]

    def test_sentences_past_the_limit_are_checked_with_the_last_claim(self) -> None:
        text = "One is here. Two is here. Three is here. Four is here."
        assert claims_of(text, 2) == ["One is here.", "Two is here. Three is here. Four is here."]
        assert claims_of(text, 1) == [text]
        assert claims_of(text, 4) == [s.strip() + "." for s in text.split(".") if s.strip()]

    def test_an_output_without_sentence_ends_is_one_claim(self) -> None:
        assert claims_of("  30 days  ", 5) == ["30 days"]


class TestMiniCheckRead:
    def read(self, *replies: Reply) -> tuple[float, float | None, list[bool]]:
        fmt = MiniCheck(use_logprobs=True, max_sentences=32)
        reading = fmt.read(fmt.calls(case()), list(replies))
        return reading.grounded_p, reading.confidence, [c.supported for c in reading.claims]

    @pytest.mark.parametrize(("text", "said"), [("Yes", True), (" no ", False), ("YES", True)])
    def test_yes_or_no(self, text: str, said: bool) -> None:
        assert minicheck.parse(text) is said

    @pytest.mark.parametrize("text", ["Yes.", "Yes it is", "Supported", "N"])
    def test_anything_else_is_malformed(self, text: str) -> None:
        with pytest.raises(MalformedJudgeOutput):
            minicheck.parse(text)

    def test_grounded_p_is_the_least_p_yes_of_the_first_token(self) -> None:
        first = Reply("Yes", False, ((("Yes", lp(0.9)), ("No", lp(0.1))), (("x", lp(1.0)),)))
        second = Reply("Yes", False, ((("Yes", lp(0.7)), (" yes", lp(0.05))),))
        grounded_p, confidence, held = self.read(first, second)
        assert grounded_p == pytest.approx(0.75)
        assert confidence == pytest.approx(0.75)
        assert held == [True, True]

    def test_p_yes_is_not_renormalised_against_no(self) -> None:
        """As the reference: a Yes outside the top alternatives is probability 0."""
        reply = Reply("No", False, ((("No", lp(0.97)), ("Maybe", lp(0.01))),))
        grounded_p, _, held = self.read(Reply("Yes", False, ((("Yes", lp(0.99)),),)), reply)
        assert grounded_p == 0.0
        assert held == [True, False]

    def test_without_logprobs_each_answer_is_one_or_zero_and_confidence_unknown(self) -> None:
        grounded_p, confidence, held = self.read(
            Reply("Yes", False, None), Reply("No", False, None)
        )
        assert (grounded_p, confidence, held) == (0.0, None, [True, False])

    def test_a_garbage_answer_for_any_sentence_is_malformed(self) -> None:
        with pytest.raises(MalformedJudgeOutput):
            self.read(Reply("Yes", False, None), Reply("I think so", False, None))


def test_label_mass_ignores_space_and_case_and_impossible_tokens() -> None:
    positions = ((("Yes", lp(0.5)), (" YES ", lp(0.25)), ("Yesterday", lp(0.2))),)
    assert label_mass(positions, "yes") == pytest.approx(0.75)
    assert label_mass(((("yes", -math.inf),),), "yes") == 0.0

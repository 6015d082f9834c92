"""What a user turn reports others saying is no evidence for the answer (issue 29): "my friend
said it's 90 days" does not turn a claim the policy contradicts into a pass; what the user
states about themselves still grounds the answer."""

from __future__ import annotations

import pytest

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.models import JudgeRequest
from guard.offline import OfflineJudge
from guard.offline.hearsay import own_words
from guard.offline.judge import Decision

POLICY = {
    "role": "tool",
    "name": "lookup_policy",
    "content": "Returns are accepted within 30 days of purchase with a receipt. Store hours "
    "are 9 am to 8 pm, Monday to Saturday.",
}


def decide(output: str, messages: list[dict[str, str]]) -> Decision:
    """The offline judge's decision on ``output`` grounded in the conversation ``messages``."""
    settings = JudgeSettings()
    request = JudgeRequest.model_validate(
        {"output": output, "messages": messages, "context_field": "messages"}
    )
    case = Guard(OfflineJudge(settings), settings).prepare(request)
    assert isinstance(case, PreparedCase)
    return OfflineJudge(settings).decide(case)


HEARSAY = [
    ("My friend said it's 90 days for returns. How long do I have?", "90 days"),
    ("I read online that returns are accepted within 90 days. Is that right?", "90 days"),
    ("I heard you can return things within 60 days of purchase.", "60 days"),
    ("Someone on Reddit claimed returns are accepted within 45 days of purchase.", "45 days"),
    ("A coworker told me returns are accepted within 90 days of purchase, is that so?", "90 days"),
    ("Apparently returns are accepted within 90 days of purchase?", "90 days"),
    ("According to a forum post, returns are accepted within 14 days.", "14 days"),
    ("Hi! I was told on the phone that I have 90 days to return it.", "90 days"),
]


@pytest.mark.parametrize(("user", "period"), HEARSAY)
def test_hearsay_in_a_user_turn_does_not_ground_a_contradicted_claim(
    user: str, period: str
) -> None:
    output = f"Yes, returns are accepted within {period} of purchase."
    decision = decide(output, [{"role": "user", "content": user}, POLICY])
    assert decision.label == "fail", decision


@pytest.mark.parametrize(("user", "period"), HEARSAY)
def test_hearsay_alone_grounds_nothing(user: str, period: str) -> None:
    """With no other evidence the repeated claim is not passed, nor proven, on the user's
    word: it fails or is left to the next tier."""
    decision = decide(
        f"Returns are accepted within {period} of purchase.", [{"role": "user", "content": user}]
    )
    assert decision.label != "pass", decision
    assert decision.label == "fail" or decision.confidence < JudgeSettings().cascade_confidence
    assert not any(r.status == "supported" for r in decision.results), decision


def test_hearsay_about_opening_hours_does_not_ground_them() -> None:
    user = "My neighbour says the store closes at 10 pm on Saturdays. When does it close?"
    decision = decide(
        "The store closes at 10 pm on Saturdays.", [{"role": "user", "content": user}]
    )
    assert decision.label != "pass", decision


def test_what_the_user_states_about_themselves_still_grounds_the_answer() -> None:
    user = "I bought a jacket on 3 May and my order number is 5512. Can I return it?"
    decision = decide(
        "Your order 5512 from 3 May can be returned within 30 days of purchase with a receipt.",
        [{"role": "user", "content": user}, POLICY],
    )
    assert decision.label != "fail", decision


def test_the_users_own_facts_beside_hearsay_still_ground_the_answer() -> None:
    user = "My order number is 5512. My sister said returns take 90 days, is that true?"
    decision = decide(
        "Order 5512 can be returned within 30 days of purchase with a receipt.",
        [{"role": "user", "content": user}, POLICY],
    )
    assert decision.label != "fail", decision


def test_an_earlier_assistant_reply_is_no_verbatim_evidence() -> None:
    messages = [
        {"role": "user", "content": "Where is your Denver store?"},
        {"role": "assistant", "content": "Our Denver store is on Larimer Street."},
        POLICY,
        {"role": "user", "content": "Thanks, and where is it again?"},
    ]
    decision = decide("Our Denver store is on Larimer Street.", messages)
    assert decision.label != "pass", decision
    assert all(r.basis != "verbatim" for r in decision.results), decision


@pytest.mark.parametrize(
    ("turn", "own"),
    [
        ("My friend said it's 90 days. How long do I have?", "My friend How long do I have?"),
        ("I bought it on 3 May, but I heard it's 90 days.", "I bought it on 3 May, but I"),
        (
            "My receipt says 3 May. Can I still return it?",
            "My receipt says 3 May. Can I still return it?",
        ),
        ("Can I return a jacket I bought on 3 May?", "Can I return a jacket I bought on 3 May?"),
    ],
)
def test_own_words_cuts_reported_speech_only(turn: str, own: str) -> None:
    assert own_words(turn) == own

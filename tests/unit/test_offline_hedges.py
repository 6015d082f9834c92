"""A hedged claim is still a claim (issue 29): "I believe the fee is $59" against a fee of $49
fails as "the fee is $59" does; the hedge only makes it polite, never uncheckable."""

from __future__ import annotations

import pytest

from guard.offline.hedges import unhedged
from tests.unit.offline_helpers import decide

FEES = (
    "Membership plans. The annual membership fee is $49 and includes free shipping on every "
    "order. Members can cancel at any time from the account page."
)
OFFICE = (
    "About us. Brightline Logistics is headquartered in Houston, Texas, and runs depots in "
    "Austin and San Antonio."
)
RETURNS = (
    "Returns policy. Items can be returned within 30 days of delivery for a full refund. "
    "Refunds go back to the original payment method within 5 business days."
)

# lead-ins of every kind: opinion verbs, memory, certainty, appearance, adverbs, stacked ones
LEADS = [
    "I believe",
    "I think",
    "I'm not completely sure, but I believe",
    "Probably",
    "As far as I know,",
    "If I recall correctly,",
    "It seems",
    "I'd guess",
    "Maybe",
    "I suppose",
    "Perhaps",
    "To my knowledge,",
    "I'm pretty sure",
    "My understanding is that",
    "If memory serves,",
    "I could be wrong, but",
    "Correct me if I'm wrong, but",
    "From what I remember,",
    "Off the top of my head,",
    "Not 100% sure, but I think",
    "I want to say",
    "Presumably",
    "It looks like",
    "Honestly, I think",
    "Yes, I believe",
]


@pytest.mark.parametrize("lead", LEADS)
def test_a_hedged_wrong_fee_fails(lead: str) -> None:
    decision = decide(f"{lead} the fee is $59 a year.", FEES, "How much is the membership?")
    assert decision.label == "fail", decision


@pytest.mark.parametrize("lead", LEADS)
def test_a_hedged_wrong_city_fails(lead: str) -> None:
    decision = decide(
        f"{lead} the company is headquartered in Dallas.",
        OFFICE,
        "Where is Brightline headquartered?",
    )
    assert decision.label == "fail", decision


@pytest.mark.parametrize(
    "output",
    [
        "I think it might be Dallas.",
        "I believe it's Dallas, but you may want to double-check.",
        "Probably Dallas.",
        "I'd guess Dallas.",
    ],
)
def test_a_hedged_short_answer_with_another_name_is_not_passed(output: str) -> None:
    decision = decide(output, OFFICE, "Where is Brightline headquartered?")
    assert decision.label == "fail", decision


@pytest.mark.parametrize(
    "output",
    [
        "I believe you have 90 days from delivery to send an item back.",
        "Refunds go back to the original payment method. I think items can be returned within 60 "
        "days of delivery.",
        "You can return items within 14 days, if I remember right.",
        "The window is, I believe, 45 days from delivery.",
        "Thanks for asking! As far as I'm aware, items can be returned within 90 days.",
    ],
)
def test_a_hedge_anywhere_in_the_answer_does_not_hide_a_wrong_period(output: str) -> None:
    decision = decide(output, RETURNS, "How long do I have to return something?")
    assert decision.label == "fail", decision


@pytest.mark.parametrize("lead", ["I believe", "As far as I know,", "Probably", "I'm fairly sure"])
def test_a_hedged_true_claim_is_not_failed(lead: str) -> None:
    decision = decide(f"{lead} the annual membership fee is $49.", FEES, "How much is it?")
    assert decision.label != "fail", decision


@pytest.mark.parametrize(
    "output",
    [
        "I'm not sure.",
        "I think that's everything. Let me know if you need anything else.",
        "I hope this helps!",
    ],
)
def test_a_hedge_or_courtesy_alone_claims_nothing(output: str) -> None:
    decision = decide(output, FEES, "How much is the membership?")
    assert decision.basis == "undecided:no_claims", decision


@pytest.mark.parametrize(
    ("sentence", "claim"),
    [
        ("I believe the fee is $59.", "the fee is $59."),
        ("I'm not completely sure, but I believe the fee is $59.", "the fee is $59."),
        ("If I recall correctly, returns take 90 days.", "returns take 90 days."),
        ("I think so.", "so."),
        ("I'm not sure.", "I'm not sure."),
        ("The fee is $49.", "The fee is $49."),
        ("Likelihood of rain is low.", "Likelihood of rain is low."),
    ],
)
def test_unhedged_drops_only_the_lead_in(sentence: str, claim: str) -> None:
    assert unhedged(sentence) == claim


@pytest.mark.parametrize(
    "output",
    [
        "Yes, we ship to P.O. boxes.",
        "Yes, I believe we ship to P.O. boxes.",
        "I think so, yes, we ship to P.O. boxes.",
    ],
)
def test_a_yes_before_a_negated_fact_is_still_compared(output: str) -> None:
    """The regression that reverted this fix once (sample support-011): without its "Yes," the
    sentence read as a short answer, and its negation was never compared."""
    evidence = "We ship with UPS to all 50 US states. We do not ship to P.O. boxes."
    assert decide(output, evidence, "Can you ship to my P.O. box?").label == "fail"

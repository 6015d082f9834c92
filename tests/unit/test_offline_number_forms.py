"""Numbers in other notations (issue 29): scientific notation, powers of ten, vulgar and slashed
shares, dozens, years in words, and answers in scripts the rules do not read. A wrong number in
any of them fails; the same number in another notation is never failed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard.offline import numbers
from guard.offline.notation import notations
from tests.unit.offline_helpers import decide


@pytest.mark.parametrize(
    ("evidence", "wrong", "right"),
    [
        (
            "Returns are accepted within 30 days of delivery.",
            "Returns are accepted within 9e1 days of delivery.",
            "Returns are accepted within 3e1 days of delivery.",
        ),
        (
            "The battery holds 5000 mAh.",
            "The battery holds 5 x 10^4 mAh.",
            "The battery holds 5 x 10^3 mAh.",
        ),
        (
            "The battery holds 5000 mAh.",
            "The battery holds 5×10⁴ mAh.",
            "The battery holds 5×10³ mAh.",
        ),
        (
            "All winter coats are 50% off this week.",
            "All winter coats are 1/4 off this week.",
            "All winter coats are 1/2 off this week.",
        ),
        (
            "All winter coats are 50% off this week.",
            "All winter coats are ¼ off this week.",
            "All winter coats are ½ off this week.",
        ),
        (
            "The company was founded in 1998 in Leeds.",
            "The company was founded in nineteen ninety-two in Leeds.",
            "The company was founded in 1998 in Leeds.",
        ),
    ],
)
def test_a_wrong_number_in_another_notation_fails_and_the_right_one_does_not(
    evidence: str, wrong: str, right: str
) -> None:
    assert decide(wrong, evidence).label == "fail"
    assert decide(right, evidence).label != "fail"


def test_a_dozen_is_twelve() -> None:
    """Not proven wrong with no noun to compare on ("a dozen eggs" against "6 eggs" is left to
    the next tier), but never passed, and half a dozen is six."""
    assert decide("Each box contains a dozen eggs.", "Each box contains 6 eggs.").label != "pass"
    assert (
        decide("Each box contains half a dozen eggs.", "Each box contains 6 eggs.").label != "fail"
    )
    assert [q.value for q in numbers.extract("two dozen eggs")] == [24.0]


@pytest.mark.parametrize(
    ("evidence", "output"),
    [
        ("退货期限为交货后30天。", "退货期限为交货后90天。"),
        (
            "Возврат принимается в течение 30 дней после доставки.",
            "Возврат принимается в течение 90 дней после доставки.",
        ),
        (
            "يمكن إرجاع المنتجات خلال 30 يومًا من التسليم.",
            "يمكن إرجاع المنتجات خلال 90 يومًا من التسليم.",
        ),
    ],
)
def test_a_wrong_number_in_a_script_the_rules_do_not_read_fails(evidence: str, output: str) -> None:
    decision = decide(output, evidence)
    assert decision.label == "fail"
    assert decide(evidence, evidence).label != "fail"


def test_numbers_glued_to_chinese_characters_are_read() -> None:
    assert [(q.value, q.kind) for q in numbers.extract("退货期限为交货后30天。")] == [
        (30.0, "count")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "hash 3e5a1 of the file",
        "version v2e3",
        "call 0x1e3",
        "on 1/4 we open",
        "the ratio 3/4",
        "twenty five people",
        "see you at twelve thirty",
    ],
)
def test_codes_dates_and_counts_are_not_read_as_notations(text: str) -> None:
    assert notations(text) == []


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("within 9e1 days", 90.0, "duration"),
        ("holds 5 x 10^4 mAh", 50000.0, "count"),
        ("about 1e6 users", 1_000_000.0, "count"),
        ("1.5E-3 g", 1.5e-6, "mass"),  # in kilograms
        ("¼ off", 25.0, "percent"),
        ("founded in nineteen ninety-two", 1992.0, "year"),
        ("twenty twenty-four", 2024.0, "year"),
        ("nineteen oh five", 1905.0, "year"),
    ],
)
def test_notations_read_as_one_quantity(text: str, value: float, kind: str) -> None:
    (quantity,) = numbers.extract(text)
    assert quantity.value == pytest.approx(value)
    assert quantity.kind == kind


@given(st.text(alphabet="0123456789eE.x×^*·/½¼ -⁰¹²³⁴abc", max_size=40))
def test_reading_notations_never_raises_and_spans_stay_in_the_text(text: str) -> None:
    for found in notations(text):
        assert 0 <= found.start < found.end <= len(text)
        float(found.plain)
    numbers.extract(text)


def test_an_order_number_or_a_number_from_the_question_is_not_checked_in_an_unread_script() -> None:
    evidence = "Возврат принимается в течение 30 дней после доставки."
    assert decide("Ваш заказ 4839201 будет возвращён в течение 30 дней.", evidence).label != "fail"
    question = "Можно ли вернуть заказ через 14 дней?"
    assert decide("Да, через 14 дней можно, срок 30 дней.", evidence, question).label != "fail"

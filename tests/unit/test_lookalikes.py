"""Look-alike characters reach the checks as what a reader sees (issue 29): digits and letters
in disguise are folded, bidi controls that reorder the display flag the output, and ordinary
non-Latin text is left as it was."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard.case import PreparedCase
from guard.engine import Guard
from guard.models import JudgeRequest
from guard.offline import OfflineJudge
from guard.prepare.bidi import reorders_display
from guard.prepare.injection import Fence
from guard.prepare.lookalikes import MAX_GROWTH, fold_lookalikes
from guard.prepare.sanitize import sanitize
from guard.providers.prompts import build_prompt
from guard.settings import JudgeSettings
from tests.unit.offline_helpers import decide

POLICY = ["Returns are accepted within 30 days of delivery. Our head office is in Austin."]
CYRILLIC_O = "\u041e"
RLO, PDF = "\u202e", "\u202c"


def prepared(output: str, context: list[str] = POLICY) -> PreparedCase:
    settings = JudgeSettings()
    request = JudgeRequest.model_validate({"output": output, "context": context})
    case = Guard(OfflineJudge(settings), settings).prepare(request)
    assert isinstance(case, PreparedCase)
    return case


class TestDisguisedNumbersAreRead:
    @pytest.mark.parametrize(
        "ninety",
        [
            "9O",  # Latin capital O
            "9o",
            f"9{CYRILLIC_O}",
            "9\u03bf",  # Greek omicron
            "⁹⁰",  # superscript digits standing alone
            "₉₀",
            "⑨⓪",  # circled
            "❾⓿",  # dingbat and negative circled, no decomposition
            "9\ufe0f\u20e30\ufe0f\u20e3",  # keycaps
            "9\u20e30\u20e3",
            "\U0001d7d7\U0001d7ce",  # mathematical bold digits
            "９０",  # full-width
        ],
    )
    def test_a_disguised_90_against_30_days_fails(self, ninety: str) -> None:
        output = f"Returns are accepted within {ninety} days of delivery."
        assert sanitize(output) == "Returns are accepted within 90 days of delivery."
        decision = decide(output, POLICY)
        assert decision.label == "fail"
        assert decision.basis == "fail:number_contradicted"

    @pytest.mark.parametrize(
        "dallas",
        [
            "\U0001d403\U0001d41a\U0001d425\U0001d425\U0001d41a\U0001d42c",  # bold
            "\U0001d437\U0001d44e\U0001d459\U0001d459\U0001d44e\U0001d460",  # italic
            "\U0001d673\U0001d68a\U0001d695\U0001d695\U0001d68a\U0001d69c",  # monospace
            "Ⓓⓐⓛⓛⓐⓢ",  # circled
        ],
    )
    def test_a_wrong_name_in_styled_letters_fails_like_the_plain_name(self, dallas: str) -> None:
        output = f"Our head office is in {dallas}."
        assert sanitize(output) == "Our head office is in Dallas."
        assert decide(output, POLICY).basis == decide("Our head office is in Dallas.", POLICY).basis
        assert decide(output, POLICY).label == "fail"

    def test_the_llm_judge_sees_the_folded_text_too(self) -> None:
        case = prepared("Returns are accepted within 9O days of delivery.")
        assert case.output == "Returns are accepted within 90 days of delivery."
        user = build_prompt(case, Fence("feedface00112233")).user
        assert "within 90 days" in user
        assert "9O" not in user

    @pytest.mark.parametrize(
        ("text", "folded"),
        [
            ("1,5OO", "1,500"),
            ("3.O", "3.0"),
            ("1l0 items", "110 items"),
            ("в 2О21 году", "в 2021 году"),
            ("⑴ first ⒇", "(1) first (20)"),
            ("ℌilbert ℓ", "Hilbert l"),
        ],
    )
    def test_other_disguises(self, text: str, folded: str) -> None:
        assert fold_lookalikes(text) == folded


class TestOrdinaryTextIsKept:
    @pytest.mark.parametrize(
        "text",
        [
            "The area is 3 m² and 10⁹ cells; H₂O boils at 100 °C; see note¹.",
            "x² + y² = r²; ½ of it; Acme™ and № 5; 4 ℃",
            "GPT-4o and 4o-mini; O2 and CO2; 10l of water; 2 L; Figure 1b; A4 paper; 5G",
            "ООО «Ромашка» открыто с 9 до 18, Оренбург, 30 дней на возврат.",
            "Возврат возможен в течение 30 дней. Офис в Москве, ул. Тверская 7.",
            "يمكن إرجاع المنتجات خلال ٣٠ يوماً من التسليم. المكتب في دبي.",
            "ניתן להחזיר מוצרים תוך 30 ימים ממועד המסירה. המשרד בתל אביב.",
            "退货期限为交货后30天。总部位于上海。営業時間は9時から18時です。",
            "반품은 배송 후 30일 이내에 가능합니다.",
            "Great choice 👍🏽 — ships in 2 days 🚚🇬🇧; family 👨‍👩‍👧 plan ❤️",
            "Café naïve façade, Straße, Ærø, Łódź, İstanbul, 1º piso, 2ª planta",
        ],
    )
    def test_realistic_multilingual_prose_is_unchanged(self, text: str) -> None:
        assert fold_lookalikes(text) == text
        assert reorders_display(text) is False

    @pytest.mark.parametrize(
        "text",
        [
            "מחיר: 90 ₪, \u200fתוך 30 ימים",  # an RLM in Hebrew text
            "اسم المدير: \u2066John Smith\u2069، المكتب في دبي",  # LRI around a Latin name
            "The street is \u2067רחוב הרצל\u2069 in Tel Aviv.",  # RLI around a Hebrew name
            "Hebrew \u202bשלום עולם\u202c quoted",  # RLE over right-to-left letters only
        ],
    )
    def test_bidi_controls_that_do_not_reorder_are_not_flagged(self, text: str) -> None:
        assert reorders_display(text) is False
        assert prepared(text).display_reordered is False


class TestReorderedDisplay:
    STORED = f"{RLO}yrevileD fo syad 09 nihtiw detpecca era snruteR{PDF}"  # reads "... 90 days"

    @pytest.mark.parametrize(
        "text",
        [
            STORED,
            "within \u202bdays 90\u202c",  # an RTL embedding over Latin words
            "codes \u202b30 60\u202c",  # an RTL embedding shows "60 30"
            "from 90\u200f 30",  # an RLM between numbers swaps them on screen
            "\u202dשלום\u202c",  # LRO reverses Hebrew letters
            "\u2068abc שלום\u2069",  # FSI over mixed directions
        ],
    )
    def test_controls_that_reorder_the_display_are_flagged(self, text: str) -> None:
        assert reorders_display(text) is True

    def test_a_reordered_output_fails_offline_with_a_reason_and_no_confidence(self) -> None:
        case = prepared(self.STORED)
        assert case.display_reordered is True
        decision = OfflineJudge().decide(case)
        assert decision.label == "fail"
        assert decision.basis == "fail:display_reordered"
        assert decision.confidence == 0.0  # a cascade asks its LLM
        outcome = asyncio.run(OfflineJudge().assess(case))
        assert "another order" in outcome.assessment.explanation
        assert outcome.unsure is True

    def test_the_llm_judge_is_told(self) -> None:
        user = build_prompt(prepared(self.STORED), Fence("feedface00112233")).user
        assert "bidirectional control characters" in user
        assert RLO not in user
        plain = build_prompt(prepared("Returns are accepted within 30 days."), Fence("f" * 16))
        assert "bidirectional" not in plain.user


@given(st.text(max_size=200))
def test_folding_is_idempotent_bounded_and_total(text: str) -> None:
    folded = fold_lookalikes(text)
    assert fold_lookalikes(folded) == folded
    assert len(folded) <= MAX_GROWTH * len(text)


LOOKALIKE_ALPHABET = st.sampled_from(
    [
        *"0123456789Oo.,-_ lI/",
        *(CYRILLIC_O, "\u043e", "\u03bf", "\u0406", "\u04c0", "\u20e3", "\ufe0f", "\u0301"),
        *"⁰¹²³⁹₀₂⑨⓪❾⓿⑴⒇ℌℓ™ªº𝐃𝟗ａ９",
    ]
)


@pytest.mark.parametrize("text", ["⁰\u20e3", "0O\u20e3", "0\u20e3\u20e3", "1l2O", "9O\u0301"])
def test_folds_found_by_hypothesis_are_idempotent(text: str) -> None:
    folded = fold_lookalikes(text)
    assert fold_lookalikes(folded) == folded


@given(st.text(LOOKALIKE_ALPHABET, max_size=60))
def test_folding_look_alike_soup_is_idempotent_and_bounded(text: str) -> None:
    folded = fold_lookalikes(text)
    assert fold_lookalikes(folded) == folded
    assert len(folded) <= MAX_GROWTH * len(text)
    assert sanitize(sanitize(text)) == sanitize(text)


@given(st.text(max_size=200))
def test_the_bidi_test_never_raises(text: str) -> None:
    assert reorders_display(text) in (True, False)
    assert reorders_display(sanitize(text)) is False  # sanitizing removes every control

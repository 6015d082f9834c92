"""The quote check: cited evidence quotes must really occur in the evidence."""

from __future__ import annotations

from guard.decide.quotes import check_quotes, quote_occurs
from guard.models import ClaimVerdict

EVIDENCE = (
    "[1] Our return policy allows returns within 30 days—no receipt needed.\n\n"
    "[2] Electronics: \u201cRefunds are issued to the original payment method.\u201d"
)


def claim(quote: str | None, supported: bool = True) -> ClaimVerdict:
    return ClaimVerdict(claim="c", supported=supported, reason="r", evidence_quote=quote)


class TestQuoteOccurs:
    def test_an_exact_quote_is_found(self) -> None:
        assert quote_occurs("returns within 30 days", EVIDENCE)

    def test_case_whitespace_and_punctuation_are_ignored(self) -> None:
        assert quote_occurs("RETURN   POLICY allows returns within 30 days,", EVIDENCE)

    def test_quote_and_dash_styles_are_ignored(self) -> None:
        assert quote_occurs("30 days - no receipt needed", EVIDENCE)
        assert quote_occurs('"Refunds are issued to the original payment method."', EVIDENCE)

    def test_an_ellipsis_joins_parts_found_in_order(self) -> None:
        assert quote_occurs("Our return policy ... no receipt needed", EVIDENCE)
        assert quote_occurs("Our return policy…original payment method", EVIDENCE)

    def test_ellipsis_parts_out_of_order_are_not_found(self) -> None:
        assert not quote_occurs("no receipt needed ... Our return policy", EVIDENCE)

    def test_a_changed_number_is_not_found(self) -> None:
        assert not quote_occurs("returns within 90 days", EVIDENCE)

    def test_partial_words_do_not_match(self) -> None:
        assert not quote_occurs("3 days", EVIDENCE)

    def test_a_quote_of_only_punctuation_is_not_found(self) -> None:
        assert not quote_occurs("...", EVIDENCE)


class TestCheckQuotes:
    def test_quote_found_is_set_per_claim_and_fabrications_are_counted(self) -> None:
        claims, check = check_quotes(
            [claim("returns within 30 days"), claim("returns within 90 days"), claim(None)],
            EVIDENCE,
        )
        assert [c.quote_found for c in claims] == [True, False, None]
        assert (check.quotes, check.fabricated, check.trusted) == (2, 1, False)

    def test_all_quotes_found_is_trusted(self) -> None:
        _, check = check_quotes([claim("no receipt needed")], EVIDENCE)
        assert (check.quotes, check.fabricated, check.trusted) == (1, 0, True)

    def test_no_quotes_is_trusted_with_nothing_counted(self) -> None:
        claims, check = check_quotes([claim(None, supported=False), claim("  ")], EVIDENCE)
        assert [c.quote_found for c in claims] == [None, None]
        assert (check.quotes, check.fabricated, check.trusted) == (0, 0, True)

    def test_claims_are_otherwise_unchanged(self) -> None:
        original = claim("returns within 30 days")
        (checked,), _ = check_quotes([original], EVIDENCE)
        assert checked.model_dump(exclude={"quote_found"}) == original.model_dump(
            exclude={"quote_found"}
        )
        assert original.quote_found is None

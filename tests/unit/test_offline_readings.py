"""Readings the new checks rely on: "-ing" and "-ed" forms that double their consonant stem
like their base ("starring" / "star"), and an ordering side read past its appositive ("Hole,
the band Courtney Love fronted, was formed first")."""

from __future__ import annotations

from guard.offline import ordering
from guard.offline.text import stem
from tests.unit.test_offline_relations import decide, failed_by, index


class TestUndoubledStems:
    def test_doubled_consonants_stem_like_their_base(self) -> None:
        assert stem("starring") == stem("star")
        assert stem("planned") == stem("plan")
        assert stem("shipped") == stem("ship")

    def test_words_that_end_in_a_double_letter_keep_it(self) -> None:
        assert stem("called") == stem("call")
        assert stem("added") == stem("add")
        assert stem("pressing") == stem("press")

    def test_a_denial_of_a_starring_role_fails(self) -> None:
        context = "Glass Harbour is a 2016 thriller starring Mara Quint and Ivo Brandt."
        decision = decide("Mara Quint did not star in Glass Harbour.", context)
        assert decision.label == "fail"
        assert failed_by(decision) & {"negation", "denied_stated"}


class TestOrderingAppositive:
    BANDS = (
        "Kate Orr is a singer. She fronted the rock band Lowlight, which she formed in 1991. "
        "The Marrows are a folk band formed in Leeds in 1984."
    )
    QUESTION = "Which band was formed first, Lowlight, the band Kate Orr fronted, or The Marrows?"

    def test_a_side_with_an_appositive_is_dated_by_its_name(self) -> None:
        claim = "Lowlight, the band Kate Orr fronted, was formed first."
        found = ordering.reversed_order(claim, self.QUESTION, index(self.BANDS))
        assert found is not None
        assert "1991" in found[0]
        assert "1984" in found[0]

    def test_the_right_order_with_an_appositive_passes(self) -> None:
        claim = "The Marrows, the folk band from Leeds, were formed first."
        assert ordering.reversed_order(claim, self.QUESTION, index(self.BANDS)) is None

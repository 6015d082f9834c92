"""Denials of what the evidence states (guard.offline.denials): a negated claim whose names
and words one unnegated sentence states fails as ``denied_stated``, and so does an elliptic
"A is P, B isn't"; a denial the evidence agrees with, a sentence that limits what it says,
a title with "No" in it, a claim without a name and another language are left alone."""

from __future__ import annotations

from guard.offline import denials
from tests.unit.test_offline_relations import decide, failed_by, index

TOWNS = (
    "Aldmoor is a market town in the north of Yorkshire, England. Kelso Bay is a fishing "
    "village on the coast of Cornwall, England."
)
CAST = "Mara Quint is a Dutch actor best known for her role in the 2016 thriller Glass Harbour."


class TestDeniedStated:
    def test_an_elliptic_denial_of_a_stated_place_fails(self) -> None:
        """(The negation check may see it first; either way it fails.)"""
        assert decide("Aldmoor is in England, Kelso Bay isn't.", TOWNS).label == "fail"
        found = denials.denied("Aldmoor is in England, Kelso Bay isn't.", index(TOWNS))
        assert found is not None
        assert "Kelso Bay is a fishing village" in found[0]

    def test_an_elliptic_denial_the_evidence_agrees_with_is_left_alone(self) -> None:
        found = denials.denied("Kelso Bay is in Cornwall, Aldmoor isn't.", index(TOWNS))
        assert found is None

    def test_a_denial_of_what_one_sentence_states_fails(self) -> None:
        found = denials.denied("Mara Quint is not a Dutch actor.", index(CAST))
        assert found is not None
        assert "Mara Quint is a Dutch actor" in found[0]


class TestDenialLeftAlone:
    def test_a_denial_the_evidence_agrees_with_is_left_alone(self) -> None:
        context = "Mara Quint is a Dutch actor. She has never appeared in a British film."
        assert (
            denials.denied("Mara Quint has not appeared in a British film.", index(context)) is None
        )

    def test_a_sentence_that_limits_what_it_says_is_no_statement(self) -> None:
        context = "Refunds are issued to Visa cards only, except for gift purchases."
        assert denials.denied("Refunds are not issued to Visa cards.", index(context)) is None

    def test_a_title_with_no_in_it_is_no_denial(self) -> None:
        context = "Jon Reyes recorded the album No Fences Left in 1999 in Austin."
        assert (
            denials.denied('Jon Reyes recorded "No Fences Left" in Austin.', index(context)) is None
        )

    def test_a_claim_without_a_name_is_left_alone(self) -> None:
        context = "Parcels sent by courier can be delivered to a locker."
        assert denials.denied("Parcels can't be delivered to a locker.", index(context)) is None

    def test_a_place_denied_that_the_evidence_does_not_give_is_left_alone(self) -> None:
        assert denials.denied("Aldmoor isn't in Scotland.", index(TOWNS)) is None
        assert denials.denied("Aldmoor isn't in Cornwall.", index(TOWNS)) is None

    def test_a_paraphrased_denial_is_not_failed_here(self) -> None:
        """The evidence says who she is, not what she is not: "not British" restates it."""
        decision = decide("Mara Quint is Dutch, not British.", CAST)
        assert "denied_stated" not in failed_by(decision)

    def test_a_german_denial_is_not_read_by_this_check(self) -> None:
        decision = decide("Mara Quint ist keine niederländische Schauspielerin.", CAST)
        assert "denied_stated" not in failed_by(decision)

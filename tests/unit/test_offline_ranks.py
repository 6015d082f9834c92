"""Top ranks a claim gives against the ranks the evidence gives (guard.offline.ranks): a rank
the evidence lowers ("2nd largest", "one of the largest") or gives another subject fails as
``rank_raised``; a rank the evidence gives the same subject, a lowered rank restated, a rank
computed from amounts and a rank in another language are left alone."""

from __future__ import annotations

from guard.offline import ranks
from tests.unit.test_offline_relations import decide, failed_by, index

MALLS = (
    "Northgate Centre has 180 stores, making it the second-largest shopping centre in the "
    "county and one of the largest in the region. Riverside Mall opened in 1998. It is the "
    "largest shopping centre in the county."
)
PLAYERS = (
    "The club's squad includes Tom Baker, Ali Hassan and Marco Vidal. Hassan joined in 2019 "
    "and was named the best goalkeeper in the league in 2022."
)


class TestRankRaised:
    def test_a_rank_the_evidence_lowers_for_that_subject_fails(self) -> None:
        decision = decide("Northgate Centre is the largest shopping centre in the county.", MALLS)
        assert decision.label == "fail"
        assert "rank_raised" in failed_by(decision)
        failed = next(r for r in decision.results if r.basis == "rank_raised")
        assert "second-largest" in failed.reason

    def test_a_rank_the_evidence_gives_another_subject_fails(self) -> None:
        decision = decide("Tom Baker was named the best goalkeeper in the league.", PLAYERS)
        assert "rank_raised" in failed_by(decision)
        failed = next(r for r in decision.results if r.basis == "rank_raised")
        assert "Hassan" in failed.reason
        assert "Tom Baker" in failed.reason

    def test_a_short_answer_with_a_lowered_rank_fails(self) -> None:
        context = "Leeds is the third-largest city in England by population."
        decision = decide("largest city in England", context, "What is Leeds known as?")
        assert "rank_raised" in failed_by(decision)


class TestRankLeftAlone:
    def test_the_rank_the_evidence_gives_the_subject_passes(self) -> None:
        decision = decide("Riverside Mall is the largest shopping centre in the county.", MALLS)
        assert "rank_raised" not in failed_by(decision)

    def test_the_rank_of_the_subject_named_by_a_pronoun_passes(self) -> None:
        decision = decide("Ali Hassan was the best goalkeeper in the league in 2022.", PLAYERS)
        assert "rank_raised" not in failed_by(decision)

    def test_a_lowered_rank_restated_passes(self) -> None:
        decision = decide(
            "Northgate Centre is the second largest shopping centre in the county.", MALLS
        )
        assert "rank_raised" not in failed_by(decision)

    def test_a_rank_the_evidence_never_writes_is_not_this_checks_business(self) -> None:
        """ "The largest payment" computed from a list of payments: no rank word to compare."""
        context = "Payments this week: €120 on Monday, €640 on Wednesday, €85 on Friday."
        assert ranks.raised("The largest payment this week was €640.", index(context)) is None

    def test_a_negated_rank_is_left_alone(self) -> None:
        decision = decide(
            "Northgate Centre is not the largest shopping centre in the county.", MALLS
        )
        assert "rank_raised" not in failed_by(decision)

    def test_words_ending_in_est_that_rank_nothing_are_not_ranks(self) -> None:
        assert ranks.ranks("the interest on the loan and the west wing") == []

    def test_a_rank_in_german_is_not_read(self) -> None:
        decision = decide(
            "Das Northgate Centre ist das größte Einkaufszentrum im Landkreis.", MALLS
        )
        assert "rank_raised" not in failed_by(decision)
        assert decision.label != "fail"

"""Who did it (guard.offline.agents): an active claim crediting an act the evidence writes as
"<act> by" someone else fails as ``doer_misbound``, naming the evidence's doer; the
evidence's doer, a doer among several, a doer the evidence credits actively elsewhere, a
negated claim and another language are left alone."""

from __future__ import annotations

from guard.offline import agents
from tests.unit.test_offline_relations import decide, failed_by, index

FILM = (
    "Nadia Brel (born 1984) is a Belgian stage and film actress, best known for the film "
    "Harbour Lights. Harbour Lights is a 2011 drama film directed by Pieter Maes and "
    "starring Nadia Brel and Jonas Wirth."
)
SCRIPT = (
    "An ostracon is a shard of pottery used as a writing surface. Demotic script, a late "
    "form of Egyptian writing, was developed by scribes of the Nile Delta. The Phoenicians "
    "traded along the same coast."
)


class TestDoerMisbound:
    def test_an_actress_credited_with_directing_fails(self) -> None:
        decision = decide("Nadia Brel directed Harbour Lights.", FILM)
        assert decision.label == "fail"
        assert "doer_misbound" in failed_by(decision)
        failed = next(r for r in decision.results if r.basis == "doer_misbound")
        assert "Pieter Maes" in failed.reason
        assert "Nadia Brel" in failed.reason

    def test_a_people_credited_with_an_invention_fails(self) -> None:
        decision = decide("The Phoenicians developed the demotic script.", SCRIPT)
        assert "doer_misbound" in failed_by(decision)

    def test_a_date_between_the_act_and_its_doer_is_read(self) -> None:
        context = (
            "Founded in 1432 by Bishop Alwin, the college admits 300 students a year. Mayor "
            "Ellis opened its new library in 1990."
        )
        decision = decide("Mayor Ellis founded the college.", context)
        assert "doer_misbound" in failed_by(decision)


class TestDoerLeftAlone:
    def test_the_evidence_doer_passes(self) -> None:
        decision = decide("Pieter Maes directed Harbour Lights.", FILM)
        assert "doer_misbound" not in failed_by(decision)

    def test_one_of_several_doers_passes(self) -> None:
        context = "The Lantern Press was founded by Ruth Adeyemi and Karl Lund in 1990."
        decision = decide("Karl Lund founded the Lantern Press.", context)
        assert "doer_misbound" not in failed_by(decision)

    def test_a_doer_the_evidence_credits_actively_elsewhere_passes(self) -> None:
        context = (
            "Harbour Lights was directed by Pieter Maes. Nadia Brel directed its stage "
            "version in 2014."
        )
        assert agents.misbound("Nadia Brel directed Harbour Lights.", index(context)) is None

    def test_a_passive_claim_is_left_to_agent_swapped(self) -> None:
        assert agents.misbound("Harbour Lights was directed by Nadia Brel.", index(FILM)) is None

    def test_a_claim_without_a_named_doer_is_left_alone(self) -> None:
        assert agents.misbound("The team directed the film.", index(FILM)) is None

    def test_a_negated_claim_is_left_alone(self) -> None:
        assert agents.misbound("Nadia Brel never directed a film.", index(FILM)) is None

    def test_a_paraphrase_of_the_doer_does_not_fail(self) -> None:
        decision = decide("Harbour Lights, a 2011 drama, was made by director Pieter Maes.", FILM)
        assert "doer_misbound" not in failed_by(decision)

    def test_a_spanish_claim_is_not_read(self) -> None:
        decision = decide("Nadia Brel dirigió la película Harbour Lights.", FILM)
        assert "doer_misbound" not in failed_by(decision)

"""Names whose words the evidence has, never as that name (guard.offline.unwritten): a name
assembled from evidence words fails as ``name_unwritten`` (``short_name_unwritten`` for a
short answer); a name written with a middle name left out, a possessive or plural, other
separators or accents, a name the question writes, codes and a list of names joined by "and"
are written; another language is not read."""

from __future__ import annotations

from guard.offline import unwritten
from guard.offline.entities import names
from tests.unit.test_offline_relations import decide, failed_by, index

ESTATE = (
    "Hartley House, now known as Bramble Court, is a Georgian manor built for the Okafor "
    "family. The Quiet Garden is a walled garden beside it."
)
SHOWS = (
    "The Night Shift is a 2019 British sitcom starring Mina Rao and Owen Pike. Rao also "
    "hosts the quiz show Final Answer."
)


class TestNameUnwritten:
    def test_a_name_assembled_from_two_evidence_names_fails(self) -> None:
        decision = decide("Hartley Court is the current name of the manor.", ESTATE)
        assert decision.label == "fail"
        assert "name_unwritten" in failed_by(decision)
        failed = next(r for r in decision.results if r.basis == "name_unwritten")
        assert "'Hartley Court'" in failed.reason

    def test_a_short_answer_title_no_evidence_writes_fails(self) -> None:
        decision = decide(
            "The Night Answer", SHOWS, "Which sitcom starring Mina Rao aired in 2019?"
        )
        assert decision.label == "fail"
        assert decision.basis == "fail:short_name_unwritten"

    def test_a_one_word_short_answer_the_evidence_only_has_inside_another_word_fails(
        self,
    ) -> None:
        context = "An autograph in Assyriology is the hand copy of a clay tablet."
        decision = decide("Assyrians", context, "Who made the clay tablets?")
        assert "short_name_unwritten" in failed_by(decision)


class TestNameWritten:
    def test_the_evidence_name_passes(self) -> None:
        decision = decide("Bramble Court is the current name of the manor.", ESTATE)
        assert "name_unwritten" not in failed_by(decision)

    def test_a_name_without_its_middle_name_is_written(self) -> None:
        context = "Carl Heinrich Maria Orff was a German composer."
        assert (
            unwritten.unwritten(
                names("Carl Orff was a German composer."),
                "Carl Orff was a German composer.",
                index(context),
                "",
                short_answer=False,
            )
            is None
        )

    def test_possessives_plurals_and_accents_are_written(self) -> None:
        context = "Café Müller's Gardens open at nine. The Okafor family owns them."
        for claim in (
            "Cafe Muller Garden opens at nine.",
            "The Okafors own Café Müller's Gardens.",
        ):
            decision = decide(claim, context)
            assert "name_unwritten" not in failed_by(decision)

    def test_a_name_the_question_writes_is_the_users_spelling(self) -> None:
        decision = decide(
            "Lizzy Hale sings in The Night Shift.",
            SHOWS,
            "Which show does Lizzy Hale sing in?",
        )
        assert "name_unwritten" not in failed_by(decision)

    def test_codes_and_names_joined_by_and_are_read_apart(self) -> None:
        context = "Official SDKs: Python, Node.js, Go, Java. Train ICE578 leaves from platform 7."
        for claim in (
            "The SDKs are Python, Go and Java.",
            "Your train ICE 578 leaves from platform 7.",
        ):
            decision = decide(claim, context)
            assert "name_unwritten" not in failed_by(decision)

    def test_a_store_name_written_with_an_underscore_in_a_tool_result_is_written(self) -> None:
        context = '{"sizes": {"42": {"online": 12, "berlin_mitte": 3}}}'
        decision = decide("The Berlin Mitte store has 3 pairs in size 42.", context)
        assert "name_unwritten" not in failed_by(decision)

    def test_a_paraphrase_with_lower_case_words_does_not_fail(self) -> None:
        decision = decide(
            "The manor, built for the Okafor family, is now called Bramble Court.", ESTATE
        )
        assert decision.label != "fail"

    def test_a_name_in_a_french_answer_is_not_read(self) -> None:
        decision = decide("Le manoir s'appelle aujourd'hui Hartley Court.", ESTATE)
        assert "name_unwritten" not in failed_by(decision)

"""Names a short answer gives that the evidence never writes, though it has their words
(guard.offline.unwritten): a title or name built from evidence words fails as
``short_name_unwritten`` (the answer is the name) or ``name_unwritten`` (the answer contains
it); a name written with a middle name left out, a plural, possessive or adjective ending,
accents, other spellings or separators, a shortening or a nickname is written; a name the
question writes, codes, names joined by "and", a name in a longer claim and another language
are left alone. The same reading of "written" lets ``name_assembled``
(guard.offline.chimeras) see a name whose words the evidence separates with a clause."""

from __future__ import annotations

import pytest

from guard.offline import unwritten
from tests.unit.test_offline_relations import decide, failed_by, index

ESTATE = (
    "Hartley House, now known as Bramble Court, is a Georgian manor built for the Okafor "
    "family. The Quiet Garden is a walled garden beside it."
)
SHOWS = (
    "The Night Shift is a 2019 British sitcom starring Mina Rao and Owen Pike. Rao also "
    "hosts the quiz show Final Answer."
)
ASKED = "Which sitcom starring Mina Rao aired in 2019?"


class TestShortNameUnwritten:
    def test_a_title_no_evidence_writes_fails(self) -> None:
        decision = decide("The Night Answer", SHOWS, ASKED)
        assert decision.label == "fail"
        assert decision.basis == "fail:name_absent"  # the rule it is a case of
        failed = next(r for r in decision.results if r.basis == "short_name_unwritten")
        assert "'Night Answer'" in failed.reason

    def test_a_short_answer_containing_an_unwritten_name_fails(self) -> None:
        decision = decide("the Rao Shift series", SHOWS, ASKED)
        assert "name_unwritten" in failed_by(decision)

    def test_a_word_the_evidence_only_has_inside_another_word_fails(self) -> None:
        context = "An autograph in Assyriology is the hand copy of a clay tablet."
        decision = decide("Assyrians", context, "Who made the clay tablets?")
        assert "short_name_unwritten" in failed_by(decision)

    def test_the_evidence_title_passes(self) -> None:
        for answer in ("The Night Shift", "Night Shift", "the sitcom The Night Shift"):
            decision = decide(answer, SHOWS, ASKED)
            assert not failed_by(decision) & {"short_name_unwritten", "name_unwritten"}

    def test_a_name_the_question_writes_is_the_users_spelling(self) -> None:
        decision = decide("Mina Rhao", SHOWS, "Which sitcom did Mina Rhao star in?")
        assert not failed_by(decision) & {"short_name_unwritten", "name_unwritten"}

    def test_a_name_in_a_longer_claim_is_left_to_the_assembled_name_check(self) -> None:
        decision = decide("The Rao Shift is a British sitcom.", SHOWS, ASKED)
        assert not failed_by(decision) & {"short_name_unwritten", "name_unwritten"}

    def test_codes_are_left_alone(self) -> None:
        context = "Train ICE578 leaves Hamburg from platform 7."
        decision = decide("ICE 578", context, "Which train leaves from platform 7?")
        assert decision.label != "fail"

    def test_a_french_answer_is_not_read(self) -> None:
        decision = decide("la série Rao Shift de la chaîne", SHOWS, ASKED)
        assert not failed_by(decision) & {"short_name_unwritten", "name_unwritten"}


class TestWritten:
    @pytest.mark.parametrize(
        ("name", "context"),
        [
            ("Carl Orff", "Carl Heinrich Maria Orff was a German composer."),
            ("Cafe Muller Garden", "Café Müller's Gardens open at nine."),
            ("Mike's Gym in Oostzaan", "He trains at Mike's Gym in Oostzaan."),
            ("Midwest", "It is the second-largest city in the Midwestern United States."),
            ("Help Centre", "Visit the help center to reset it."),
            ("Acme Corporation", "Acme Corp. reported a loss."),
            ("Bill Gates", "The foundation was founded by William Gates."),
            ("Acme GmbH", "The Acme office is in Berlin."),
            ("Berlin Mitte", '{"berlin_mitte": 3}'),
            ("Matthew Orven", 'The league was founded by Matthew "The Hammer" Orven.'),
        ],
    )
    def test_a_name_in_a_form_the_project_reads_is_written(self, name: str, context: str) -> None:
        assert unwritten.written(name, index(context))

    @pytest.mark.parametrize(
        ("name", "context"),
        [
            ("Hartley Court", ESTATE),
            ("Brer Rabbit's Adventure", "The Adventures of Brer Rabbit is a book."),
            ("Singer and the Producer", "The Producers stars IU, a South Korean singer."),
        ],
    )
    def test_a_name_whose_words_are_apart_or_reordered_is_not_written(
        self, name: str, context: str
    ) -> None:
        assert not unwritten.written(name, index(context))

    def test_a_name_split_by_a_clause_is_an_assembled_name(self) -> None:
        decision = decide("Hartley Court is the current name of the manor.", ESTATE)
        assert decision.label == "fail"
        assert "name_assembled" in failed_by(decision)

    def test_a_paraphrase_with_the_evidence_name_does_not_fail(self) -> None:
        decision = decide("The manor, built for the Okafor family, is now Bramble Court.", ESTATE)
        assert decision.label != "fail"

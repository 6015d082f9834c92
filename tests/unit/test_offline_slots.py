"""The words an answer adds to its question, against the evidence (guard.offline.slots): a
claim that restates the question and answers it with words no document has fails as
``slot_absent``, naming the closest evidence sentence; an answer the evidence states, a
negated claim, a claim with amounts or one that says mostly its own thing are left to the
other checks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from guard.offline import bindings, chimeras, choices, slots
from guard.offline.checks import Premise
from guard.offline.judge import Decision
from guard.offline.text import content_stems
from tests.unit.test_offline_relations import decide, index

BRIDGE = (
    "The Meridian Bridge opened in 1931 over the river Aln. It was designed by Ana Ruiz, an "
    "engineer and sculptor from Valencia. Its central span is 240 metres long."
)
ASKED = "The Meridian Bridge was designed by an engineer and what?"


def bases(decision: Decision) -> set[str]:
    return {r.basis for r in decision.results}


class TestAnswerAbsent:
    def test_an_answer_no_document_gives_fails_and_names_the_closest_sentence(self) -> None:
        decision = decide(
            "The Meridian Bridge was designed by an engineer and painter.", BRIDGE, ASKED
        )
        assert decision.label == "fail"
        assert decision.basis == "fail:slot_absent"
        failed = next(r for r in decision.results if r.basis == "slot_absent")
        assert "'painter'" in failed.reason
        assert "designed by Ana Ruiz" in failed.reason
        assert failed.sentence is not None
        assert "Ana Ruiz" in failed.sentence.text

    def test_the_answer_the_evidence_gives_does_not_fail(self) -> None:
        decision = decide(
            "The Meridian Bridge was designed by an engineer and sculptor.", BRIDGE, ASKED
        )
        assert decision.label != "fail"
        assert "slot_absent" not in bases(decision)

    def test_a_kind_the_question_names_is_not_the_answer(self) -> None:
        """Asked "which genre", answered "the genre is opera": "genre" is the question's."""
        context = "Lina Varga is a Hungarian soprano who sings opera and operetta."
        decision = decide("Lina Varga sings opera.", context, "Which genre does Lina Varga sing?")
        assert "slot_absent" not in bases(decision)

    def test_an_invented_kind_fails(self) -> None:
        context = "Lina Varga is a Hungarian soprano who sings opera and operetta."
        decision = decide("Lina Varga sings jazz.", context, "Which genre does Lina Varga sing?")
        assert decision.label == "fail"
        assert "slot_absent" in bases(decision)


class TestDatedAnswers:
    def test_a_date_in_the_claim_is_read_past(self) -> None:
        """The year is the detail checks' to compare; the added word is still the answer."""
        asked = "The Meridian Bridge, opened in 1931, was designed by an engineer and what?"
        decision = decide(
            "The Meridian Bridge, opened in 1931, was designed by an engineer and painter.",
            BRIDGE,
            asked,
        )
        assert "slot_absent" in bases(decision)

    def test_an_ordinal_is_read_past_too(self) -> None:
        asked = "The bridge's third span was painted by which artist?"
        context = "The third span of the bridge was painted by Ana Ruiz in 1940."
        decision = decide("The third span was painted by a famous muralist.", context, asked)
        assert "slot_absent" in bases(decision) or "judgement_absent" in bases(decision)
        decision = decide("The third span was painted by a muralist.", context, asked)
        assert "slot_absent" in bases(decision)

    def test_dates_and_the_word_after_them_are_dropped(self) -> None:
        assert slots._without_amounts("opened on 3 May 1931 by Ana Ruiz").split() == [
            "opened",
            "on",
            "Ana",
            "Ruiz",
        ]


class TestShortAnswer:
    CONTEXT = "Asters, sometimes called starworts or Michaelmas daisies, flower in autumn."
    ASKED = "What are asters sometimes called?"

    def test_a_word_of_a_short_answer_no_document_has_fails(self) -> None:
        decision = decide("starworts or Michaelmas daisies or bluebells", self.CONTEXT, self.ASKED)
        assert decision.label == "fail"
        failed = next(r for r in decision.results if r.status == "contradicted")
        assert "'bluebells'" in failed.reason

    def test_a_short_answer_the_evidence_has_does_not_fail(self) -> None:
        decision = decide("starworts or Michaelmas daisies", self.CONTEXT, self.ASKED)
        assert decision.label != "fail"


class TestLeftToOtherChecks:
    def test_without_a_question_nothing_is_asked(self) -> None:
        decision = decide(
            "The Meridian Bridge was designed by an engineer and painter.", BRIDGE, None
        )
        assert "slot_absent" not in bases(decision)

    def test_a_negated_claim_may_say_what_no_document_says(self) -> None:
        decision = decide(
            "The Meridian Bridge was not designed by an engineer and painter.", BRIDGE, ASKED
        )
        assert "slot_absent" not in bases(decision)

    def test_a_claim_with_amounts_is_left_to_the_detail_checks(self) -> None:
        found = slots.slot_absent(
            "The Meridian Bridge span is 240 metres, about 790 feet.",
            index(BRIDGE),
            Premise.of("How long is the Meridian Bridge span?").stems,
            None,
        )
        assert found is None

    def test_a_claim_saying_mostly_its_own_thing_is_a_paraphrase_to_judge_elsewhere(
        self,
    ) -> None:
        """Two of six content words come from the question: not a restated question."""
        found = slots.slot_absent(
            "Ana Ruiz sketched the Meridian Bridge while touring Portuguese viaducts.",
            index(BRIDGE),
            Premise.of(ASKED).stems,
            None,
        )
        assert found is None


# the bridge's words, the question's, filler, contractions, a negation and details
VOCABULARY = (
    "bridge designed engineer painter sculptor the a of and was opened river span long "
    "Meridian Ruiz actually it's we'll not 240 Friday"
)
words = st.sampled_from(VOCABULARY.split(" "))
sentences = st.lists(words, min_size=0, max_size=14).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(claim=sentences, question=sentences)
def test_added_words_split_the_claim_s_content_between_question_and_answer(
    claim: str, question: str
) -> None:
    split = slots.added_words(claim, Premise.of(question).stems)
    if split is None:
        return
    restated, added = split
    assert added, "a claim that adds nothing has no answer of its own"
    assert set(restated) | set(added) <= set(content_stems(claim))
    assert not set(restated) & set(added)
    assert len(restated) >= slots.RESTATED_SHARE * (len(restated) + len(added))


@settings(max_examples=150, deadline=None)
@given(claim=sentences, question=sentences)
def test_a_slot_failure_names_only_words_no_document_has(claim: str, question: str) -> None:
    evidence = index(BRIDGE)
    found = slots.slot_absent(claim, evidence, Premise.of(question).stems, None)
    if found is not None:
        assert found.absent
        assert not any(evidence.has(s) for s in found.absent)
        assert "no document says" in found.reason


FILM = (
    "Northlight is a 2011 drama film directed by Mara Olsen and written by Tomas Berg, "
    "based on a novel by Ines Kahl. It was shot in Tromsø."
)


class TestMisbound:
    """An answer that puts an entity of the evidence where the evidence binds another."""

    def test_a_name_bound_to_another_slot_of_the_sentence_fails(self) -> None:
        decision = decide(
            "Tomas Berg directed Northlight.", FILM, "Northlight was directed by whom?"
        )
        assert decision.label == "fail"
        assert decision.basis == "fail:slot_misbound"
        failed = next(r for r in decision.results if r.basis == "slot_misbound")
        assert "'directed by' to 'Mara Olsen'" in failed.reason
        assert "'Tomas Berg'" in failed.reason

    def test_a_short_answer_bound_elsewhere_fails(self) -> None:
        decision = decide("Tomas Berg", FILM, "Northlight was directed by whom?")
        assert decision.basis == "fail:slot_misbound"

    def test_the_bound_name_does_not_fail(self) -> None:
        for answer in ("Mara Olsen", "Mara Olsen directed Northlight."):
            decision = decide(answer, FILM, "Northlight was directed by whom?")
            assert decision.label != "fail", answer

    def test_a_claim_that_does_not_restate_the_phrase_is_left_alone(self) -> None:
        decision = decide("Tomas Berg wrote Northlight.", FILM, "Northlight was directed by whom?")
        assert "slot_misbound" not in bases(decision)

    def test_a_binding_that_restates_the_question_tells_nothing(self) -> None:
        """Asked "based on what novel?", the evidence's "based on a novel by ..." binds the
        novel's author, and the question typed "novle": not the answer's slot."""
        decision = decide("Ines Kahl", FILM, "Northlight is based on what novle?")
        assert "slot_misbound" not in bases(decision)

    def test_a_name_outside_the_binding_sentence_may_be_an_alias(self) -> None:
        context = f"{FILM} Mara Olsen is the stage name of Maria Olsson."
        decision = decide("Maria Olsson", context, "Northlight was directed by whom?")
        assert "slot_misbound" not in bases(decision)


class TestKindAsked:
    """ "Which state ...?": the evidence's "the state of X" binds the kind."""

    CONTEXT = (
        "Dana Holt was the CEO of Pine Pharmacies out of Oregon. Pine Pharmacies runs "
        "30 drug stores throughout the state of Idaho."
    )
    ASKED = "Which state are the drug stores of which Dana Holt was CEO located in?"

    def test_a_place_of_the_evidence_in_the_kind_s_slot_fails(self) -> None:
        decision = decide("The drug stores are located in Oregon.", self.CONTEXT, self.ASKED)
        assert decision.basis == "fail:slot_misbound"
        failed = next(r for r in decision.results if r.basis == "slot_misbound")
        assert "'state of' to 'Idaho'" in failed.reason

    def test_the_bound_place_does_not_fail(self) -> None:
        for answer in ("Idaho", "The drug stores are located in Idaho."):
            assert decide(answer, self.CONTEXT, self.ASKED).label != "fail", answer

    def test_the_kind_is_read_from_the_question_s_opening(self) -> None:
        assert bindings.cue_of(self.ASKED) == bindings.Cue("state", "of")
        assert bindings.cue_of("In which city was she born?") == bindings.Cue("city", "of")


class TestCue:
    def test_the_trailing_phrase_of_a_question_is_its_cue(self) -> None:
        assert bindings.cue_of("Northlight was directed by whom?") == bindings.Cue("directed", "by")
        assert bindings.cue_of("The race is officially known as?") == bindings.Cue("known", "as")
        assert bindings.cue_of("It is best known for what cantata?") == bindings.Cue("known", "for")

    def test_a_question_without_one_has_no_cue(self) -> None:
        assert bindings.cue_of("Who directed Northlight?") is None
        assert bindings.cue_of("Which film did Mara Olsen direct?") is None
        assert bindings.cue_of("Pearl Lowe is of which nationality?") is None
        assert bindings.cue_of("He starred as Ash Morgan in what series?") is None

    def test_a_binding_ends_at_the_next_clause(self) -> None:
        found = bindings.bindings(bindings.Cue("directed", "by"), index(FILM))
        assert [b.text for b in found] == ["Mara Olsen"]


@settings(max_examples=150, deadline=None)
@given(question=sentences)
def test_a_cue_is_read_from_any_question_without_error(question: str) -> None:
    cue = bindings.cue_of(question + " by whom?")
    if cue is not None:
        assert cue.prep == "by"
        assert cue.head.islower()
        for binding in bindings.bindings(cue, index(FILM)):
            assert binding.stems
            assert binding.text in binding.sentence.text


PRIZE = (
    "Lena Ortiz (born 1961) is a Chilean poet. In 2009 she was awarded the Hallberg Prize "
    "for poetry. Marco Feld (born 1958) is an Austrian novelist and translator."
)
PRIZE_Q = "Who was awarded the Hallberg Prize, Lena Ortiz or Marco Feld?"


class TestChoice:
    """A question offering two options: the answer's pick against the evidence."""

    def test_the_option_the_evidence_does_not_say_it_of_fails(self) -> None:
        decision = decide("Marco Feld was awarded it.", PRIZE, PRIZE_Q)
        assert decision.label == "fail"
        assert decision.basis == "fail:wrong_option"
        failed = next(r for r in decision.results if r.basis == "wrong_option")
        assert "says it of Lena Ortiz" in failed.reason
        assert "the answer picks Marco Feld" in failed.reason
        assert failed.sentence is not None
        assert "Hallberg" in failed.sentence.text

    def test_the_option_the_evidence_says_it_of_does_not_fail(self) -> None:
        for answer in ("Lena Ortiz", "Lena Ortiz was awarded the Hallberg Prize."):
            assert "wrong_option" not in bases(decide(answer, PRIZE, PRIZE_Q)), answer

    def test_a_negated_pick_picks_nobody(self) -> None:
        decision = decide("Marco Feld was never awarded the Hallberg Prize.", PRIZE, PRIZE_Q)
        assert "wrong_option" not in bases(decision)

    def test_a_predicate_said_of_both_or_neither_decides_nothing(self) -> None:
        both = PRIZE + " He was awarded the Hallberg Prize in 2015."
        assert "wrong_option" not in bases(decide("Marco Feld", both, PRIZE_Q))
        asked = "Who has more readers, Lena Ortiz or Marco Feld?"
        assert "wrong_option" not in bases(decide("Marco Feld", PRIZE, asked))

    def test_an_ordering_is_left_to_the_dates(self) -> None:
        assert choices.options("Who was born first, Lena Ortiz or Marco Feld?") is None

    def test_the_options_are_the_names_around_or(self) -> None:
        pair = choices.options(PRIZE_Q)
        assert pair is not None
        assert [o.name for o in pair] == ["Lena Ortiz", "Marco Feld"]
        assert choices.predicate(PRIZE_Q, pair) == content_stems("awarded Hallberg Prize")


@settings(max_examples=150, deadline=None)
@given(head=sentences, a=sentences, b=sentences)
def test_options_are_two_distinct_names_of_the_question(head: str, a: str, b: str) -> None:
    question = f"{head}, {a.title()} or {b.title()}?"
    pair = choices.options(question)
    if pair is not None:
        first, second = pair
        assert first.stems
        assert second.stems
        assert not first.stems & second.stems
        assert first.name in question
        assert second.name in question


PARK = (
    "Kestrel Point State Park is a 900 acre park on a sandy spit of Lake Orven. "
    "Lake Orven is fed by the Marl River."
)


class TestAssembledName:
    """A name put together from pieces of two names of the evidence."""

    def test_pieces_of_two_names_fail(self) -> None:
        decision = decide("The park is called Lake Orven State Park.", PARK, None)
        assert decision.label == "fail"
        failed = next(r for r in decision.results if r.basis == "name_assembled")
        assert "'Lake Orven State Park'" in failed.reason
        assert "Kestrel Point State Park is a 900 acre park" in failed.reason

    def test_the_name_as_written_does_not_fail(self) -> None:
        decision = decide("The park is called Kestrel Point State Park.", PARK, None)
        assert "name_assembled" not in bases(decision)

    def test_a_name_with_a_nickname_inside_is_still_written(self) -> None:
        context = 'The league was founded by Matthew "The Hammer" Orven in 2004.'
        decision = decide("Matthew Orven founded the league.", context, None)
        assert "name_assembled" not in bases(decision)

    def test_a_name_restated_with_common_words_may_be_a_paraphrase(self) -> None:
        """ "Orven Canal" for "the canal near Lake Orven": one name and a common word."""
        context = "The canal near Lake Orven carries barges. It is 12 km long."
        decision = decide("The Orven Canal carries barges.", context, None)
        assert "name_assembled" not in bases(decision)

    def test_two_names_joined_by_and_are_two_names(self) -> None:
        decision = decide("Kestrel Point and Lake Orven are in the park.", PARK, None)
        assert "name_assembled" not in bases(decision)


@settings(max_examples=150, deadline=None)
@given(claim=sentences.map(str.title))
def test_an_assembled_name_is_never_written_in_the_evidence(claim: str) -> None:
    evidence = index(PARK, BRIDGE)
    found = chimeras.assembled(claim, evidence)
    if found is not None:
        assert "no document names" in found[0]
        named = found[0].split("'")[1]
        assert named.lower() not in evidence.normalized


CHAINS = (
    "Brava Tacos is a restaurant chain founded in Oregon in 1994.Green Bowl is a salad "
    "chain that was started in Austin, Texas in 2009."
)


class TestSharedByBoth:
    """One thing said of two names, where the evidence says it of one."""

    def test_both_where_the_evidence_says_one_is_reported(self) -> None:
        # seen once in the labelled data: the rule annotates (its finding on the claim) and
        # decides nothing until labelled answers vouch for it
        decision = decide("Both Brava Tacos and Green Bowl are restaurant chains.", CHAINS, None)
        assert decision.label == "undecided"
        failed = next(r for r in decision.results if r.basis == "unproven_shared_one_only")
        assert "says it of Brava Tacos only" in failed.reason
        assert "nothing of Green Bowl" in failed.reason

    def test_yes_to_a_both_question_says_it_of_both(self) -> None:
        asked = "Were Brava Tacos and Green Bowl both founded in Oregon?"
        decision = decide("Yes, both were founded in Oregon.", CHAINS, asked)
        assert "unproven_shared_one_only" in bases(decision)

    def test_what_the_evidence_says_of_both_does_not_fail(self) -> None:
        decision = decide("Both Brava Tacos and Green Bowl are chains.", CHAINS, None)
        assert "shared_one_only" not in bases(decision)

    def test_no_to_a_both_question_is_left_alone(self) -> None:
        asked = "Were Brava Tacos and Green Bowl both founded in Oregon?"
        assert "shared_one_only" not in bases(decide("No.", CHAINS, asked))

    def test_a_full_stop_glued_after_a_year_ends_the_sentence(self) -> None:
        sentences = [s.text for s in index(CHAINS).sentences]
        assert sentences[0].endswith("in 1994.")
        assert sentences[1].startswith("Green Bowl")


class TestNamesAround:
    def test_the_capitalised_run_each_side_of_the_joiner(self) -> None:
        pair = choices.options("Yes, The Kings of Leon and Your Pie are both bands.", "and")
        assert pair is not None
        assert [o.name for o in pair] == ["Kings of Leon", "Pie"]

    def test_a_comma_ends_a_name(self) -> None:
        pair = choices.options("Who was inducted into the Hall of Fame, Ann Lee or Cia Berg?")
        assert pair is not None
        assert pair[0].name == "Ann Lee"

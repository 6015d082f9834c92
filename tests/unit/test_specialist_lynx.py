"""The Lynx format: the model card's prompt, and the strict reading of its JSON verdict."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard.case import Passage, PreparedCase
from guard.errors import MalformedJudgeOutput
from guard.models import ContextField, Cut, ScoringMode, Truncation
from guard.specialist.lynx import PROMPT, Lynx, LynxVerdict, parse, render
from guard.specialist.reply import Reply

CARD_INSTRUCTION = (
    "Given the following QUESTION, DOCUMENT and ANSWER you must analyze the provided answer "
    "and determine whether it is faithful to the contents of the DOCUMENT. The ANSWER must not "
    "offer new information beyond the context provided in the DOCUMENT. The ANSWER also must "
    "not contradict information provided in the DOCUMENT. Output your final verdict by "
    'strictly following this format: "PASS" if the answer is faithful to the DOCUMENT and '
    '"FAIL" if the answer is not faithful to the DOCUMENT. Show your reasoning.'
)


def case(**changes: object) -> PreparedCase:
    cut = Cut(original_chars=10, kept_chars=10, truncated=False)
    base = PreparedCase(
        request_id="r1",
        output="You can return items within 30 days.",
        evidence="[1] Our return policy allows returns within 30 days.",
        passages=(Passage("[1]", "Our return policy allows returns within 30 days."),),
        source=ContextField.CONTEXT,
        mode=ScoringMode.SCALE5,
        threshold=0.5,
        question="How long do I have to return items?",
        truncation=Truncation(context=cut, output=cut),
        injections=(),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


class TestPrompt:
    def test_the_prompt_is_the_model_cards_text(self) -> None:
        lines = render(case()).split("\n")
        assert lines[0] == ""  # the card's triple-quoted prompt starts with a newline
        assert lines[1] == CARD_INSTRUCTION
        assert PROMPT.endswith(
            'Your output should be in JSON FORMAT with the keys "REASONING" and "SCORE":\n'
            '{{"REASONING": <your reasoning as bullet points>, "SCORE": <your final score>}}\n'
        )

    def test_question_document_and_answer_sit_in_their_sections(self) -> None:
        text = render(case())
        assert (
            "--\nQUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION):\n"
            "How long do I have to return items?\n\n"
            "--\nDOCUMENT:\nOur return policy allows returns within 30 days.\n\n"
            "--\nANSWER:\nYou can return items within 30 days.\n\n--\n"
        ) in text
        assert '{"REASONING": <your reasoning as bullet points>, "SCORE":' in text

    def test_a_case_without_a_question_has_an_empty_question_section(self) -> None:
        text = render(case(question=None))
        assert "BACKGROUND INFORMATION):\n\n\n--\nDOCUMENT:" in text

    def test_braces_in_the_texts_are_kept_as_written(self) -> None:
        text = render(case(output="Use {name} and {{x}}."))
        assert "ANSWER:\nUse {name} and {{x}}.\n" in text

    def test_the_document_is_the_passages_not_the_non_evidence_turns(self) -> None:
        convo = case(
            evidence="USER: Can I return it?\n\nASSISTANT (not evidence): Yes, 90 days.",
            passages=(Passage("user", "Can I return it?"),),
            source=ContextField.MESSAGES,
        )
        text = render(convo)
        assert "DOCUMENT:\nCan I return it?\n\n--" in text
        assert "90 days" not in text

    def test_one_user_message_and_no_system_prompt(self) -> None:
        (call,) = Lynx().calls(case())
        assert [m["role"] for m in call.messages] == ["user"]
        assert call.extra == {}


class TestParse:
    def test_a_bare_object(self) -> None:
        verdict = parse('{"REASONING": ["The document says 30 days."], "SCORE": "PASS"}')
        assert verdict == LynxVerdict("PASS", ("The document says 30 days.",))

    def test_an_object_wrapped_in_prose_and_a_code_fence(self) -> None:
        text = 'Here is my verdict:\n```json\n{"REASONING": ["a", "b"], "SCORE": "FAIL"}\n```\n'
        assert parse(text) == LynxVerdict("FAIL", ("a", "b"))

    def test_reasoning_may_be_one_string(self) -> None:
        assert parse('{"SCORE": "PASS", "REASONING": "fine"}').reasoning == ("fine",)

    def test_braces_inside_strings_are_part_of_the_object(self) -> None:
        assert parse('{"REASONING": ["says {x}"], "SCORE": "PASS"}').reasoning == ("says {x}",)

    @pytest.mark.parametrize(
        ("text", "why"),
        [
            ("PASS", "no object"),
            ("", "empty"),
            ('{"REASONING": [], "SCORE": "PASS"', "cut"),
            ("{'REASONING': [], 'SCORE': 'PASS'}", "single quotes"),
            ('{"REASONING": [], "SCORE": PASS}', "bare word"),
            ('{"REASONING": [], "SCORE": "pass"}', "lower case"),
            ('{"REASONING": [], "SCORE": "MAYBE"}', "other score"),
            ('{"REASONING": [], "SCORE": 1}', "number"),
            ('{"REASONING": [], "SCORE": ["PASS"]}', "list"),
            ('{"SCORE": "PASS"}', "no reasoning"),
            ('{"REASONING": []}', "no score"),
            ('{"REASONING": [], "SCORE": "PASS", "CONFIDENCE": 0.9}', "extra key"),
            ('{"REASONING": [], "SCORE": "PASS", "SCORE": "FAIL"}', "repeated key"),
            ('{"REASONING": [1, 2], "SCORE": "PASS"}', "reasoning of numbers"),
            ('{"REASONING": {"a": "b"}, "SCORE": "PASS"}', "reasoning object"),
            ('{"REASONING": NaN, "SCORE": "PASS"}', "NaN"),
            ('{"REASONING": [], "SCORE": "PASS"} {"REASONING": [], "SCORE": "FAIL"}', "two"),
            ('{"REASONING": [], "SCORE": "PASS"} }', "stray brace after"),
            ('{ note: {"REASONING": [], "SCORE": "PASS"}', "broken outer object"),
            ('["REASONING", "SCORE"]', "a list"),
        ],
    )
    def test_anything_but_one_well_formed_verdict_is_malformed(self, text: str, why: str) -> None:
        with pytest.raises(MalformedJudgeOutput):
            parse(text)

    def test_deep_nesting_is_malformed_not_a_crash(self) -> None:
        with pytest.raises(MalformedJudgeOutput):
            parse('{"REASONING": ' + "[" * 100_000 + "]" * 100_000 + ', "SCORE": "PASS"}')


class TestRead:
    def test_pass_is_grounded_without_claims(self) -> None:
        (call,) = Lynx().calls(case())
        reply = Reply('{"REASONING": ["ok"], "SCORE": "PASS"}', cut=False, positions=None)
        reading = Lynx().read([call], [reply])
        assert (reading.grounded_p, reading.confidence, reading.claims) == (1.0, None, ())
        assert reading.explanation == "Lynx: PASS. ok"

    def test_fail_names_the_answer_as_the_unsupported_claim_with_the_reasoning(self) -> None:
        (call,) = Lynx().calls(case())
        reply = Reply('{"REASONING": ["90 is not 30"], "SCORE": "FAIL"}', False, None)
        reading = Lynx().read([call], [reply])
        assert reading.grounded_p == 0.0
        (claim,) = reading.claims
        assert (claim.claim, claim.supported) == (case().output, False)
        assert claim.reason == "90 is not 30"

    def test_a_reply_cut_at_max_tokens_is_malformed_even_if_it_parses(self) -> None:
        (call,) = Lynx().calls(case())
        reply = Reply('{"REASONING": [], "SCORE": "PASS"}', cut=True, positions=None)
        with pytest.raises(MalformedJudgeOutput, match="max_tokens"):
            Lynx().read([call], [reply])


# --------------------------------------------------------------------------- properties

PROSE = st.text(st.characters(blacklist_characters="{}", blacklist_categories=["Cs"]), max_size=80)
FENCES = st.sampled_from([("", ""), ("```json\n", "\n```"), ("```\n", "\n```"), ("`", "`")])
REASONING = st.one_of(st.text(max_size=40), st.lists(st.text(max_size=40), max_size=4))
SCORE = st.sampled_from(["PASS", "FAIL"])


@st.composite
def encoded(draw: st.DrawFn, obj: object) -> str:
    """``obj`` as JSON, in one of the layouts a model writes."""
    indent = draw(st.sampled_from([None, 0, 2, 4]))
    ascii_only = draw(st.booleans())
    return json.dumps(obj, indent=indent, ensure_ascii=ascii_only)


@st.composite
def wrapped(draw: st.DrawFn, obj: object) -> str:
    before, after = draw(PROSE), draw(PROSE)
    open_fence, close_fence = draw(FENCES)
    return f"{before}{open_fence}{draw(encoded(obj))}{close_fence}{after}"


@st.composite
def valid_verdicts(draw: st.DrawFn) -> tuple[dict[str, object], str]:
    items: list[tuple[str, object]] = [("REASONING", draw(REASONING)), ("SCORE", draw(SCORE))]
    obj = dict(draw(st.permutations(items)))
    return obj, draw(wrapped(obj))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@st.composite
def invalid_verdicts(draw: st.DrawFn) -> str:
    """A verdict object broken one way: its score, its reasoning, or its keys."""
    obj: dict[str, object] = {"REASONING": draw(REASONING), "SCORE": draw(SCORE)}
    fault = draw(st.sampled_from(["score", "reasoning", "missing", "extra"]))
    if fault == "score":
        obj["SCORE"] = draw(JSON_VALUES.filter(lambda v: v not in ("PASS", "FAIL")))
    elif fault == "reasoning":
        obj["REASONING"] = draw(
            JSON_VALUES.filter(
                lambda v: (
                    not isinstance(v, str)
                    and not (isinstance(v, list) and all(isinstance(i, str) for i in v))
                )
            )
        )
    elif fault == "missing":
        del obj[draw(st.sampled_from(["REASONING", "SCORE"]))]
    else:
        obj[draw(st.text(max_size=8).filter(lambda k: k not in obj))] = draw(JSON_VALUES)
    return draw(wrapped(obj))


@given(valid_verdicts())
def test_any_valid_verdict_in_any_wrapper_is_read_as_written(
    drawn: tuple[dict[str, object], str],
) -> None:
    obj, text = drawn
    verdict = parse(text)
    assert verdict.score == obj["SCORE"]
    reasoning = obj["REASONING"]
    assert list(verdict.reasoning) == ([reasoning] if isinstance(reasoning, str) else reasoning)


@given(invalid_verdicts())
def test_any_broken_verdict_in_any_wrapper_is_malformed(text: str) -> None:
    with pytest.raises(MalformedJudgeOutput):
        parse(text)


@given(valid_verdicts(), valid_verdicts(), PROSE)
def test_two_verdicts_are_malformed_whatever_they_say(
    first: tuple[dict[str, object], str], second: tuple[dict[str, object], str], between: str
) -> None:
    with pytest.raises(MalformedJudgeOutput):
        parse(first[1] + between + second[1])


@given(valid_verdicts(), st.data())
def test_a_verdict_cut_anywhere_inside_the_object_is_malformed(
    drawn: tuple[dict[str, object], str], data: st.DataObject
) -> None:
    _, text = drawn
    start, end = text.index("{"), text.rindex("}")
    cut_at = data.draw(st.integers(min_value=start, max_value=end))
    with pytest.raises(MalformedJudgeOutput):
        parse(text[:cut_at])


@given(st.text(max_size=300))
def test_any_text_is_a_verdict_or_malformed_never_another_error(text: str) -> None:
    try:
        verdict = parse(text)
    except MalformedJudgeOutput:
        return
    assert verdict.score in ("PASS", "FAIL")

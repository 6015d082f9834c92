"""PatronusAI Lynx (Llama-3-Patronus-Lynx-8B/70B-Instruct): its published prompt, and a strict
reading of its JSON verdict.

Sources:

* The prompt is the one the model cards recommend, "the prompt we used for fine-tuning"
  (huggingface.co/PatronusAI/Llama-3-Patronus-Lynx-8B-Instruct and -70B-Instruct, README "How
  to Get Started with the Model"), character for character: QUESTION (marked "THIS DOES NOT
  COUNT AS BACKGROUND INFORMATION"), DOCUMENT, ANSWER, then the JSON format
  ``{"REASONING": <your reasoning as bullet points>, "SCORE": <your final score>}``. It is sent
  as the only message, a user turn, with no system prompt, as in the cards' pipeline example
  (``messages = [{"role": "user", "content": prompt}]``, ``temperature=0``).
* Labels, from the cards: "The model will output the score as 'PASS' if the answer is faithful
  to the document or FAIL if the answer is not faithful to the document."

Assumed, not confirmed by the cards:

* A case without a question gets an empty QUESTION section (the cards always show one).
* REASONING may be a list of strings (as the cards' "bullet points" suggest) or one string.
* The grounded probability is 1.0 for PASS and 0.0 for FAIL: the cards define no probability,
  so no logprobs are asked for.

Reading: the reply may wrap the object in prose or a Markdown code fence. It must hold exactly
one JSON object, well formed (no NaN or Infinity, no repeated key), with exactly the keys
REASONING and SCORE, SCORE being the string PASS or FAIL; no other brace may appear outside
it. Anything else, and a reply cut at ``max_tokens``, is :class:`MalformedJudgeOutput`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from guard.case import PreparedCase
from guard.errors import MalformedJudgeOutput
from guard.specialist.formats import (
    EXPLANATION_CHARS,
    Call,
    Reading,
    clipped,
    document_text,
    unsupported,
)
from guard.specialist.reply import Reply
from guard.specialist.settings import SpecialistFormat

PROMPT = """
Given the following QUESTION, DOCUMENT and ANSWER you must analyze the provided answer and \
determine whether it is faithful to the contents of the DOCUMENT. The ANSWER must not offer \
new information beyond the context provided in the DOCUMENT. The ANSWER also must not \
contradict information provided in the DOCUMENT. Output your final verdict by strictly \
following this format: "PASS" if the answer is faithful to the DOCUMENT and "FAIL" if the \
answer is not faithful to the DOCUMENT. Show your reasoning.

--
QUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION):
{question}

--
DOCUMENT:
{context}

--
ANSWER:
{answer}

--

Your output should be in JSON FORMAT with the keys "REASONING" and "SCORE":
{{"REASONING": <your reasoning as bullet points>, "SCORE": <your final score>}}
"""

Score = Literal["PASS", "FAIL"]
_KEYS = frozenset({"REASONING", "SCORE"})
_SCORES: dict[str, Score] = {"PASS": "PASS", "FAIL": "FAIL"}


@dataclass(frozen=True)
class LynxVerdict:
    score: Score
    reasoning: tuple[str, ...]


def render(case: PreparedCase) -> str:
    """The Lynx prompt for ``case``."""
    return PROMPT.format(
        question=case.question or "", context=document_text(case), answer=case.output
    )


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers whether a key was repeated."""

    repeated = False


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    obj.repeated = len(obj) != len(pairs)
    return obj


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_no_constant)


def parse(text: str) -> LynxVerdict:
    """The one verdict object in ``text`` (see the module docstring), or
    :class:`MalformedJudgeOutput`."""
    start = text.find("{")
    if start < 0:
        raise MalformedJudgeOutput("lynx answer holds no JSON object")
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        raise MalformedJudgeOutput("lynx answer is not a well-formed JSON object") from None
    outside = text[:start] + text[end:]
    if "{" in outside or "}" in outside:
        raise MalformedJudgeOutput("lynx answer holds more than the one JSON object")
    return _verdict(value)


def _verdict(obj: _Object) -> LynxVerdict:
    if obj.repeated or set(obj) != _KEYS:
        raise MalformedJudgeOutput('lynx answer is not {"REASONING": ..., "SCORE": ...}')
    score = obj["SCORE"]
    if not isinstance(score, str) or score not in _SCORES:
        raise MalformedJudgeOutput("lynx SCORE is neither PASS nor FAIL")
    return LynxVerdict(_SCORES[score], _reasoning(obj["REASONING"]))


def _reasoning(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise MalformedJudgeOutput("lynx REASONING is neither a string nor a list of strings")


class Lynx:
    """The ``lynx`` format: one call per output window."""

    name: SpecialistFormat = "lynx"

    def calls(self, case: PreparedCase) -> list[Call]:
        return [Call(messages=({"role": "user", "content": render(case)},), claim=case.output)]

    def read(self, calls: Sequence[Call], replies: Sequence[Reply]) -> Reading:
        (call,), (reply,) = calls, replies
        if reply.cut:
            raise MalformedJudgeOutput("lynx answer was cut at max_tokens (raise it)")
        verdict = parse(reply.text)
        said = "; ".join(r.strip() for r in verdict.reasoning if r.strip())
        explanation = clipped(f"Lynx: {verdict.score}. {said}", EXPLANATION_CHARS)
        if verdict.score == "PASS":
            return Reading(grounded_p=1.0, confidence=None, explanation=explanation)
        reason = said or "Lynx finds the answer not faithful to the document"
        return Reading(
            grounded_p=0.0,
            confidence=None,
            explanation=explanation,
            claims=(unsupported(call.claim, reason),),
        )

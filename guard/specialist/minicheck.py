"""Bespoke-MiniCheck-7B (bespokelabs/Bespoke-MiniCheck-7B): its prompt, one claim sentence at a
time, and its Yes/No answer read strictly.

Sources:

* Prompt, from the reference implementation the model card points to (github.com/Liyan06/
  MiniCheck, ``minicheck/utils.py`` and ``minicheck/inference.py`` ``LLMCheck``): the system
  prompt ``SYSTEM_PROMPT`` ("Determine whether the provided claim is consistent with the
  corresponding document. ... responding with either "Yes" or "No".") and the user turn
  ``Document: [DOCUMENT]\\nClaim: [CLAIM]``, with ``temperature=0`` and ``logprobs=5``. Ollama's
  announcement (ollama.com/blog/reduce-hallucinations-with-bespoke-minicheck) shows the same
  user turn.
* Labels: "If the document supports the claim, the model will output Yes. Otherwise, it will
  output No" (the same post).
* Per sentence, as the reference code does: the claim is split into sentences, each checked on
  its own; P(support) of one check is the probability mass of the first generated token's
  alternatives that read "yes" (``get_support_prob``: not renormalised against "no"); the
  output's score is the minimum over its sentences, and it is supported when that is above
  0.5 (here: at or above, the cascade's rule). The reference also splits a long document into
  chunks and takes the best chunk per sentence; here the evidence is already fitted to
  ``max_context_chars``, so each sentence is checked against the whole of it.

Assumed: sentences are split by the offline judge's splitter
(:func:`guard.offline.text.split_sentences`), not NLTK's ``sent_tokenize``; a token read as
"yes" ignores surrounding space (the reference compares the decoded token exactly).

Reading: each answer, stripped, must be Yes or No (any case); anything else is
:class:`MalformedJudgeOutput`, as is a reply cut at ``max_tokens`` that is not already such an
answer (the reference asks for one token, so a one-token cut "Yes" is a whole answer). Without
logprobs a sentence's probability is 1.0 for Yes and 0.0 for No. The output is grounded when
every sentence is supported; grounded_p is the minimum over its sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from guard.case import PreparedCase
from guard.decide.assessment import ClaimAssessment
from guard.errors import MalformedJudgeOutput
from guard.offline.text import split_sentences
from guard.specialist.formats import (
    Call,
    Reading,
    decision_confidence,
    document_text,
    logprob_fields,
    supported,
    unsupported,
)
from guard.specialist.reply import Reply, label_mass
from guard.specialist.settings import TOP_LOGPROBS, SpecialistFormat

SYSTEM_PROMPT = (
    "Determine whether the provided claim is consistent with the corresponding document. "
    "Consistency in this context implies that all information presented in the claim is "
    "substantiated by the document. If not, it should be considered inconsistent. Please "
    'assess the claim\'s consistency with the document by responding with either "Yes" or '
    '"No".'
)
USER_PROMPT = "Document: {document}\nClaim: {claim}"
_ANSWERS = {"yes": True, "no": False}


def claims_of(output: str, limit: int) -> list[str]:
    """The sentences of ``output``; past ``limit``, the rest go with the last claim."""
    spans = split_sentences(output)
    if not spans:
        return [output.strip()]
    if len(spans) <= limit:
        return [s.text for s in spans]
    tail = output[spans[limit - 1].start : spans[-1].end]
    return [s.text for s in spans[: limit - 1]] + [tail]


def parse(text: str) -> bool:
    """Whether a MiniCheck answer says the claim is supported."""
    answer = _ANSWERS.get(text.strip().lower())
    if answer is None:
        raise MalformedJudgeOutput("minicheck answer is not Yes or No")
    return answer


def support_probability(reply: Reply) -> float | None:
    """P(support) of one check: the "yes" mass of the first token (None without logprobs)."""
    if not reply.positions:
        return None
    return min(1.0, label_mass(reply.positions[:1], "yes"))


class MiniCheck:
    """The ``minicheck`` format: one call per claim sentence."""

    name: SpecialistFormat = "minicheck"

    def __init__(self, *, use_logprobs: bool, max_sentences: int) -> None:
        self.use_logprobs = use_logprobs
        self.max_sentences = max_sentences

    def calls(self, case: PreparedCase) -> list[Call]:
        document = document_text(case)
        extra = logprob_fields(self.use_logprobs, TOP_LOGPROBS)
        return [
            Call(
                messages=(
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": USER_PROMPT.format(document=document, claim=c)},
                ),
                claim=c,
                extra=extra,
            )
            for c in claims_of(case.output, self.max_sentences)
        ]

    def read(self, calls: Sequence[Call], replies: Sequence[Reply]) -> Reading:
        probabilities: list[float] = []
        known = True
        claims: list[ClaimAssessment] = []
        for call, reply in zip(calls, replies, strict=True):
            said_yes = parse(reply.text)
            p = support_probability(reply)
            known = known and p is not None
            p = (1.0 if said_yes else 0.0) if p is None else p
            probabilities.append(p)
            claims.append(_claim(call.claim, p))
        grounded_p = min(probabilities)
        confidence = decision_confidence(grounded_p) if known else None
        held = sum(c.supported for c in claims)
        said = f"MiniCheck: {held} of {len(claims)} sentences supported by the document"
        explanation = f"{said}, min P(Yes) {grounded_p:.3f}." if known else f"{said}."
        return Reading(grounded_p, confidence, explanation, tuple(claims))


def _claim(sentence: str, p: float) -> ClaimAssessment:
    if p >= 0.5:
        return supported(sentence)
    return unsupported(sentence, f"MiniCheck: not supported by the document (P(Yes) {p:.3f})")

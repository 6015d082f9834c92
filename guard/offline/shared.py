"""What a claim says two named things share, against what the evidence says of each.

"Both Eatza Pizza and Your Pie were founded in Arizona", or "Yes" to "Are Wenling and Xinzheng
both in China?", says one thing of two subjects. When the evidence states it in the sentences
about exactly one of them (each sentence speaks of the subject it names, or of the subject the
sentence before named: :func:`guard.offline.choices.said_of`), the claim extends to both what
the evidence says of one: a failure naming the sentence and the one subject it speaks of.

Left alone: a claim or question that names the two things with no "both"; a negated claim; a
"No" answer (it denies, and the evidence's silence on one subject does not show it wrong);
a thing stated of both or of neither; an ordering ("both born before 1950").
"""

from __future__ import annotations

import re

from guard.offline import choices, negation
from guard.offline.align import EvidenceIndex, EvidenceSentence
from guard.offline.details import short
from guard.offline.rules import AnswerView, Finding, Placed

_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)
_YES = re.compile(r"^\W*yes\b", re.IGNORECASE)


def extended(
    claim: str, output: str, question: str, index: EvidenceIndex
) -> tuple[str, EvidenceSentence] | None:
    """Why ``claim`` says of two things what the evidence says of one, with the sentence; or
    None. A "Yes" ``output`` to a "both" question says the question's predicate of both."""
    if negation.negated(claim):
        return None
    sources = [claim] if _BOTH.search(claim) else []
    if _YES.match(output) and _BOTH.search(question or ""):
        sources.append(question)  # "Yes" (", both are") to "Are A and B both ...?"
    found = [(text, pair) for text in sources if (pair := choices.options(text, "and"))]
    if not found:
        return None
    source, pair = found[0]
    said = {"both", *(s for o in pair for s in o.stems)}
    predicate = [s for s in choices.predicate(source, pair) if s not in said]
    holder = choices.said_of(pair, predicate, index)
    if holder is None:
        return None
    one, sentence = holder
    other = pair[1] if one is pair[0] else pair[0]
    return (
        f"the claim says it of both {pair[0].name} and {pair[1].name}; {sentence.passage} says "
        f'it of {one.name} only ("{short(sentence.text)}"), nothing of {other.name}',
        sentence,
    )


def checked(view: AnswerView) -> list[Placed]:
    """The first undecided or supported claim that extends to two things what the evidence
    says of one, failed as ``shared_one_only``."""
    for position in view.open():
        claim = view.results[position].claim
        found = extended(claim, view.output, view.premise.text, view.index)
        if found is not None:
            return [(position, Finding("shared_one_only", found[0], found[1]))]
    return []

"""The offline judge's rule model: a :class:`Rule` is a name, a stage, a check returning one
:class:`Finding` shape, and the examples it must fire on and must not.

The order the rules run in, first match wins within a stage, is fixed in one place:
:mod:`guard.offline.registry`. The stages, in the order a claim meets them:

- ``text``: read on the claim's words alone (a refusal, a courtesy);
- ``detail``: a detail the evidence lacks or states otherwise (:mod:`guard.offline.details`);
- ``foreign``: Spanish, German or French claims, whose words the other rules do not read;
- ``relation``: how the claim relates what it says (:mod:`guard.offline.relations`);
- ``stated``: what the evidence states otherwise, conditions left out, details added;
- ``support``: how well the evidence proves the claim (every claim ends here);
- ``answer``: a claim read with the rest of the answer and the question (rewrites results);
- ``decide``: the answer-level decision (:func:`guard.offline.judge.decide`).

Every check returns :class:`Finding` s. A claim-level check reads a :class:`ClaimView`, the
claim with everything computed about it once (its details, best sentence, support), and
returns one finding or None; an answer-level check reads an :class:`AnswerView` and returns
the findings it places on claims of the answer (position, finding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Generic, Literal, TypeVar

from guard.offline.align import EvidenceIndex, EvidenceSentence, best_sentence, local_support
from guard.offline.align import support as support_of
from guard.offline.claims import Claim
from guard.offline.details import Answer, Details
from guard.offline.text import content_stems

Status = Literal["supported", "contradicted", "undecided", "neutral"]
Stage = Literal["text", "detail", "foreign", "relation", "stated", "support", "answer", "decide"]
STAGES: tuple[Stage, ...] = (
    "text",
    "detail",
    "foreign",
    "relation",
    "stated",
    "support",
    "answer",
    "decide",
)
# the status a rule is declared with: "off" never runs; otherwise its status is set by its
# record in the calibration table (guard.offline.status: active decides, annotate is reported
# and decides nothing, off does not run)
RuleStatus = Literal["active", "annotate", "off"]


@dataclass(frozen=True)
class Premise:
    """What the question asks about: its words help find the answer's sentence, never support
    a claim (the question is the user's text, not evidence)."""

    text: str = ""
    stems: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: str | None) -> Premise:
        if not question:
            return cls()
        return cls(question, frozenset(content_stems(question)))


@dataclass(frozen=True)
class ClaimResult:
    claim: str
    status: Status
    basis: str
    reason: str
    support: float = 0.0
    sentence: EvidenceSentence | None = None
    local: float = 0.0

    @property
    def supported(self) -> bool:
        """Not contradicted: the offline judge flags only what it can show."""
        return self.status != "contradicted"


@dataclass(frozen=True)
class Finding:
    """What a claim-level rule found: the basis (one of its rule's), the reason naming the
    evidence compared, the sentence to quote (None: the claim's best sentence), the status."""

    basis: str
    reason: str
    sentence: EvidenceSentence | None = None
    status: Status = "contradicted"


@dataclass(frozen=True)
class ClaimView:
    """One claim with what the rules read of it, each computed once, when first read."""

    claim: Claim
    index: EvidenceIndex
    premise: Premise
    answer: Answer
    readable: bool

    @property
    def text(self) -> str:
        return self.claim.text

    @cached_property
    def details(self) -> Details:
        return Details.of(self.claim, self.readable)

    @cached_property
    def aligned(self) -> tuple[EvidenceSentence | None, float]:
        """The sentence the claim restates and the share of its words that sentence has."""
        details = self.details
        query = (
            details.stems + sorted(self.premise.stems) if self.claim.short_answer else details.stems
        )
        return best_sentence(query, details.quantities, self.index)

    @property
    def sentence(self) -> EvidenceSentence | None:
        return self.aligned[0]

    @property
    def overlap(self) -> float:
        return self.aligned[1]

    @cached_property
    def name_stems(self) -> set[str]:
        return {part for name in self.details.names for part in name.parts}

    @cached_property
    def supported(self) -> tuple[float, list[str]]:
        """The share of the claim's words the evidence has, and the words it lacks."""
        found = [q for q in self.details.quantities if self.index.amounts.supports(q)]
        return support_of(self.details.stems, self.index, self.name_stems, len(found))

    @property
    def share(self) -> float:
        return self.supported[0]

    @property
    def missing(self) -> list[str]:
        return self.supported[1]

    @cached_property
    def local(self) -> float:
        """The share of the claim's words and amounts found together in its best sentence."""
        index = self.index
        found = [q for q in self.details.quantities if index.amounts.supports(q)]
        present = [s for s in self.details.stems if index.has(s)]
        return local_support(present, found, self.sentence, self.name_stems, index)

    def result(self, finding: Finding) -> ClaimResult:
        return ClaimResult(
            self.text,
            finding.status,
            finding.basis,
            finding.reason,
            round(self.share, 3),
            finding.sentence or self.sentence,
            round(self.local, 3),
        )


@dataclass(frozen=True)
class AnswerView:
    """The whole answer, for the rules that read a claim with the rest of it."""

    claims: list[Claim]
    results: list[ClaimResult]
    index: EvidenceIndex
    premise: Premise
    output: str

    def open(self) -> list[int]:
        """The positions of the claims no rule contradicted or set aside (undecided or
        supported): the ones an answer-level rule may still fail."""
        return [i for i, r in enumerate(self.results) if r.status in ("undecided", "supported")]

    def applied(self, found: list[Placed]) -> AnswerView:
        """The view with each placed finding replacing its claim's status, basis, reason and
        sentence (an answer-level finding names the sentence it quotes, None for none)."""
        results = list(self.results)
        for position, finding in found:
            results[position] = replace(
                results[position],
                status=finding.status,
                basis=finding.basis,
                reason=finding.reason,
                sentence=finding.sentence,
            )
        return replace(self, results=results)


Placed = tuple[int, Finding]  # a finding on the claim at that position of the answer
ClaimCheck = Callable[[ClaimView], Finding | None]
AnswerCheck = Callable[[AnswerView], list[Placed]]
C = TypeVar("C")


@dataclass(frozen=True)
class Example:
    """An answer (and its evidence, and question) a rule must fire on, or must not. ``basis``
    names which of the rule's bases it fires with (default: the rule's first); for an example
    it must not fire on, the one basis it must not decide with (default: none of its bases).
    ``context_chars`` is the evidence budget the example needs, when more than the default."""

    output: str
    context: str | tuple[str, ...]
    question: str | None = None
    basis: str | None = None
    context_chars: int | None = None


@dataclass(frozen=True)
class Rule(Generic[C]):
    """One rule of the offline judge. ``keys`` are the calibration keys its findings may
    decide with ("fail:number_absent": label and basis; the first is its own; "neutral:" a
    claim that decides nothing); ``fires`` the examples that must be decided with one of its
    bases, ``passes`` the examples that must not."""

    name: str
    stage: Stage
    check: C
    keys: tuple[str, ...]
    what: str
    fires: tuple[Example, ...] = ()
    passes: tuple[Example, ...] = ()
    status: RuleStatus = "active"
    weak: bool = False  # its confidence is capped below any cascade threshold (calibration)

    @property
    def bases(self) -> tuple[str, ...]:
        """The bases its findings name ("number_absent")."""
        return tuple(key.split(":", 1)[1] for key in self.keys)

    def fires_with(self, example: Example) -> str:
        """The basis ``example`` must be decided with."""
        return example.basis or self.bases[0]


def failure(found: tuple[str, str, EvidenceSentence | None] | None) -> Finding | None:
    """A ``(basis, reason, sentence)`` failure as a finding."""
    return None if found is None else Finding(found[0], found[1], found[2])

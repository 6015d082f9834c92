"""The checks run on one claim: hard evidence first, then proof of support, else undecided.

A claim is *contradicted* only by something the judge can show: a detail the evidence lacks or
states differently (:mod:`guard.offline.details`), or a relation it reverses
(:mod:`guard.offline.relations`). It is *supported* only when it is close to verbatim: every
content word found, together in one sentence, every detail matched
(:mod:`guard.offline.support`). Anything else is *undecided*; low lexical support alone never
fails a claim. Each result names its ``basis``, the rule that decided, which the calibration
table maps to a probability. The rules and their order are :data:`guard.offline.registry.
CLAIM_RULES`.
"""

from __future__ import annotations

from guard.offline.align import EvidenceIndex
from guard.offline.claims import Claim
from guard.offline.details import Answer
from guard.offline.registry import CLAIM_RULES
from guard.offline.rules import ClaimResult, ClaimView, Premise, Status

__all__ = ["ClaimResult", "Premise", "Status", "check_claim"]

_RUNNING = tuple(rule for rule in CLAIM_RULES if rule.status != "off")


def check_claim(
    claim: Claim,
    index: EvidenceIndex,
    premise: Premise,
    answer: Answer | None = None,
    *,
    readable: bool = True,
    skip: frozenset[str] = frozenset(),
) -> ClaimResult:
    """The status of one claim against the evidence, with the rule that decided it: the first
    of :data:`~guard.offline.registry.CLAIM_RULES` that finds something (the last always
    does). ``readable`` is false for Spanish, German or French answers, whose words the rules
    do not check (their numbers, dates and times they do). Rules named in ``skip`` (those the
    calibration switched off: :func:`guard.offline.status.off_rules`) do not run."""
    view = ClaimView(claim, index, premise, answer or Answer(), readable)
    for rule in _RUNNING:
        if rule.name in skip:
            continue
        found = rule.check(view)
        if found is None:
            continue
        if rule.stage == "text":  # read on its words alone: no evidence compared
            return ClaimResult(claim.text, found.status, found.basis, found.reason)
        return view.result(found)
    raise AssertionError("the last claim rule always decides")  # pragma: no cover

"""What an answer puts where its question asks: the words that answer, against the evidence.

An answer to a question restates part of the question and adds what answers it: asked
"Gelatine was piloted by a pioneer American aviator and what?", the claim "Gelatine was piloted
by a pioneer American aviator and magician" restates the question and adds "magician". The
restated words are the user's, so they prove nothing; the added words are the answer. When a
claim is mostly the question's words and most of what it adds is in no document, the answer
itself is unsupported, whatever the restated part matches: a failure the judge can show (the
words no document has, and the evidence sentence closest to the claim).

Left alone, so the other checks decide them:

- a claim without a question, or one saying mostly something of its own (a paraphrase, a
  summary, steps to follow: most of its words are not the question's);
- a negated claim ("X was not affiliated with any party"): it says what the evidence does
  not, so its words may well be absent from it;
- a claim with amounts, times or weekdays: their words may be units or restatements ("30
  seconds" for "30", "half past eight"), which the detail checks compare (dates, years and
  ordinals are only dropped, with the word after them);
- a language the rules do not read (the caller passes only readable answers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guard.offline import bindings, choices, negation, numbers, times
from guard.offline.align import EvidenceIndex, EvidenceSentence, related
from guard.offline.claims import Claim
from guard.offline.details import short
from guard.offline.rules import AnswerView, ClaimResult, Finding, Placed
from guard.offline.text import GENERIC_STEMS, content_stems, stem, words

DATED = frozenset({"date", "year", "ordinal"})  # amounts read past, not left to other checks
RESTATED_SHARE = 0.5  # of a claim's content words, the share the question brought, at least
ABSENT_SHARE = 0.5  # of the words the claim adds, the share no document has, at least
MAX_CLAIM_WORDS = 40  # a longer claim is a passage of its own, not an answer to a question
# words that add nothing to what an answer says ("is actually the largest", "I've booked")
FILLER = frozenset(stem(w) for w in ("actually", "really", "indeed", "simply", "basically"))


@dataclass(frozen=True)
class SlotFailure:
    """A claim whose answering words no document has: those words, and the closest
    sentence."""

    absent: tuple[str, ...]
    reason: str
    sentence: EvidenceSentence | None


def added_words(claim: str, asked: frozenset[str]) -> tuple[list[str], list[str]] | None:
    """The claim's content stems split into those the question brought and those it adds,
    or None when the claim does not mostly restate the question (or adds nothing)."""
    stems = [s for s in content_stems(claim) if _content(s)]
    if not stems or not asked:
        return None
    restated = [s for s in stems if _asked(s, asked)]
    added = [s for s in stems if not _asked(s, asked)]
    if not added or len(restated) < RESTATED_SHARE * len(stems):
        return None
    return restated, added


def slot_absent(
    claim: str,
    index: EvidenceIndex,
    asked: frozenset[str],
    closest: EvidenceSentence | None,
) -> SlotFailure | None:
    """Why the words ``claim`` adds to its question are unsupported, or None. ``asked`` holds
    the question's stems; ``closest`` is the evidence sentence nearest the claim (named in the
    reason)."""
    if len(words(claim)) > MAX_CLAIM_WORDS or negation.negated(claim) or _timed(claim):
        return None
    split = added_words(_without_amounts(claim), asked)
    if split is None:
        return None
    _, added = split
    absent = [s for s in added if not index.has(s)]
    if not absent or len(absent) < ABSENT_SHARE * len(added):
        return None
    written = ", ".join(f"'{_as_written(s, claim)}'" for s in absent)
    where = (
        f'; the closest evidence, {closest.passage}, says "{short(closest.text)}"'
        if closest is not None
        else ""
    )
    return SlotFailure(
        tuple(absent),
        f"the answer to the question is {written}, which no document says (the rest of the "
        f"claim restates the question){where}",
        closest,
    )


def _short_absent(
    claim: str, index: EvidenceIndex, asked: frozenset[str], closest: EvidenceSentence | None
) -> SlotFailure | None:
    """A short answer ("mums or chrysanths or daffodils") is all answer: a content word of it
    that neither the question nor any document has is an unsupported part of it."""
    if negation.negated(claim) or _timed(claim):
        return None
    stems = [s for s in content_stems(_without_amounts(claim)) if _content(s)]
    absent = [s for s in stems if not _asked(s, asked) and not index.has(s)]
    if not absent:
        return None
    written = ", ".join(f"'{_as_written(s, claim)}'" for s in absent)
    return SlotFailure(
        tuple(absent), f"the answer's {written}: no document says so{_closest(closest)}", closest
    )


def _closest(closest: EvidenceSentence | None) -> str:
    if closest is None:
        return ""
    return f'; the closest evidence, {closest.passage}, says "{short(closest.text)}"'


def _timed(claim: str) -> bool:
    """Whether the claim states an amount, a time or a weekday (the detail checks' business:
    "half a year", "half past eight" restate "6 months", "20:30" in words no document has).
    Dates, years and ordinals are read past (:func:`_without_amounts`)."""
    amounts = [q for q in numbers.extract(claim) if q.kind not in DATED]
    return bool(amounts or times.times(claim) or times.weekdays(claim))


_UNIT = re.compile(r"\W*[\w'’-]*")


def _without_amounts(claim: str) -> str:
    """The claim without its dates, years and ordinals and the word after each ("1905 by",
    "third album": the detail checks compare them)."""
    kept, at = [], 0
    for quantity in numbers.extract(claim):
        start = claim.find(quantity.text, at)
        if start < 0:
            continue
        kept.append(claim[at:start])
        end = start + len(quantity.text)
        unit = _UNIT.match(claim, end)
        at = unit.end() if unit is not None else end
    kept.append(claim[at:])
    return " ".join(kept)


def _content(stem_: str) -> bool:
    """A stem that can carry the answer: not a contraction's remains, filler or generic."""
    return (
        "'" not in stem_
        and "’" not in stem_
        and len(stem_) > 2
        and stem_ not in GENERIC_STEMS
        and stem_ not in FILLER
    )


def _asked(stem_: str, asked: frozenset[str]) -> bool:
    return stem_ in asked or any(related(stem_, a) for a in asked)


def _as_written(stemmed: str, text: str) -> str:
    for word in words(text):
        for part in word.split("-"):
            if stem(part) == stemmed:
                return part
    return stemmed


def recheck(claim: Claim, result: ClaimResult, view: AnswerView) -> Finding | None:
    """A failure when the claim's answer to the question is unsupported: its answering words
    in no document (``slot_absent``), or an entity of the evidence put where the evidence
    binds another (``slot_misbound``, :mod:`guard.offline.bindings`); else None."""
    index, premise = view.index, view.premise
    found = slot_absent(result.claim, index, premise.stems, result.sentence)
    if found is None and claim.short_answer:
        found = _short_absent(result.claim, index, premise.stems, result.sentence)
    if found is not None:
        return Finding("slot_absent", found.reason, found.sentence)
    bound = bindings.misbound(result.claim, claim.short_answer, premise.text, index, premise.stems)
    return None if bound is None else Finding("slot_misbound", bound[0], bound[1])


def answered(view: AnswerView) -> list[Placed]:
    """Each claim's answer to the question checked (:func:`recheck`). Only a claim the other
    checks left undecided or found supported is read: a contradiction already shown stands, a
    refusal or courtesy has no answer."""
    if not view.premise.text:
        return []
    out: list[Placed] = []
    for position in view.open():
        if position < len(view.claims):
            found = recheck(view.claims[position], view.results[position], view)
            if found is not None:
                out.append((position, found))
    return out


def wrong_option(view: AnswerView) -> list[Placed]:
    """For a question offering two options, the answer's pick against the option the
    evidence says it of (``wrong_option``, :mod:`guard.offline.choices`)."""
    if not view.premise.text:
        return []
    choice = choices.wrong_choice([r.claim for r in view.results], view.premise.text, view.index)
    if choice is None or choice[0] not in view.open():
        return []
    position, reason, sentence = choice
    return [(position, Finding("wrong_option", reason, sentence))]

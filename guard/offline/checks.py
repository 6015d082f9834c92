"""The checks run on one claim: hard evidence first, then proof of support, else undecided.

A claim is *contradicted* only by something the judge can show: a quoted string, number, date,
time of day, weekday or name that the evidence lacks or states differently, a negation or an
opposite word against the sentence it is aligned to, a quantifier the evidence limits, two names
the evidence never relates. It is *supported* only when it is close to verbatim: every content
word found, together in one sentence (or two), every detail matched. Anything else is
*undecided*; a claim with little lexical support is a weak failure at most, never a confident
one. Each result names its ``basis``, the rule that decided, which the calibration table maps
to a probability.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, Protocol

from guard.offline import arithmetic, comparison, entities, negation, numbers, times
from guard.offline.align import (
    EvidenceIndex,
    EvidenceSentence,
    best_sentence,
    in_order,
    in_sentence,
    local_support,
    support,
)
from guard.offline.claims import Claim, is_short_answer
from guard.offline.text import GENERIC, content_stems, normalize, stem, words

Status = Literal["supported", "contradicted", "undecided", "neutral"]

ALIGN_FOR_POLARITY = 0.6
ALIGN_FOR_QUANTIFIER = 0.5
NEAR_SUPPORT = 0.85
NEAR_LOCAL = 0.8
CONDITION_SUPPORT = 0.6
IN_ORDER = 0.85
MIN_COVERED = 3  # content words of an evidence clause a claim must restate to keep its polarity
LOW_SUPPORT = 0.5
MIN_MISSING_FOR_LOW = 3
MAX_AMOUNTS = 32  # amounts, times and names of one claim that are checked

_REFUSAL = re.compile(
    r"\b(?:(?:could|can)(?:n['’]?t| not)|(?:do|does|did)(?:n['’]t| not)|unable to|no information|"
    r"not (?:mentioned|specified|stated|covered|included|provided|available)|not say|"
    r"(?:don['’]t|do not) (?:have|know|see)|no (?:mention|details?|data|record))\b.{0,60}"
    r"\b(?:find|found|information|documents?|context|sources?|say|says|mention|specif|"
    r"provided|records?|details?|knowledge|sure)",
    re.IGNORECASE,
)
_HEDGE_ONLY = re.compile(r"^\s*(?:i (?:think|believe)|please|let me know|hope this helps|"
                         r"feel free|happy to help|is there anything)", re.IGNORECASE)
_UNIVERSAL = frozenset({"all", "every", "always", "never", "none", "only", "each",
                        "entire", "everyone", "everything", "anyone", "anything", "unlimited"})
_LIMITING = frozenset({"some", "most", "many", "several", "certain", "select", "selected",
                       "usually", "often", "sometimes", "typically", "eligible",
                       "limited", "specific", "one", "two", "three", "few"})
_CONDITION = re.compile(r"\b(?:if|unless|provided(?: that)?|as long as|only|for orders|except|"
                        r"for (?:members|subscribers|holders|customers) )\b",
                        re.IGNORECASE)
# Words by which an answer says it computed a figure ("in total", "which leaves", "6 months
# after"); without one, a number that arithmetic could reach is more likely a wrong number.
_COMPUTES = re.compile(
    r"\b(?:total|in all|altogether|combined|overall|sum|leaves?|left|remaining|remain|"
    r"difference|later|earlier|each|times|twice|half|double|which is|that's|that is|"
    r"works out|comes to|makes|would be|less|more|fewer|cheaper|saving|save|layover|"
    r"average)\b|[=×+]",
    re.IGNORECASE)
_DATE_COMPUTES = re.compile(r"\b(?:after|from|until|till|by|later|before|since|ends?|"
                            r"expires?|covered|available|due|leaves?|then)\b", re.IGNORECASE)
_CLOSED = re.compile(r"\b(?:closed|not open|shut|no service|unavailable)\b", re.IGNORECASE)


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
class Details:
    """The checkable details of one claim."""

    stems: list[str]
    quantities: list[numbers.Quantity]
    clock: list[times.TimeOfDay]
    days: list[times.Weekdays]
    names: list[entities.Name]
    text: str = ""
    overflow: bool = False  # more amounts than are checked: the claim cannot be proven

    @classmethod
    def of(cls, claim: Claim, readable: bool) -> Details:
        clock = times.times(claim.text)
        spans = [t.span for t in clock]
        quantities = [q for q in numbers.extract(claim.text)
                      if not any(a <= q.start < b for a, b in spans) and not _counted(q)]
        names = entities.names(claim.text, whole_answer=claim.short_answer) if readable else []
        return cls(content_stems(claim.text), quantities[:MAX_AMOUNTS], clock[:MAX_AMOUNTS],
                   times.weekdays(claim.text)[:MAX_AMOUNTS], names[:MAX_AMOUNTS], claim.text,
                   overflow=len(quantities) > MAX_AMOUNTS or len(clock) > MAX_AMOUNTS)


@dataclass(frozen=True)
class Answer:
    """What the whole answer holds: its stems (a condition may sit in another claim) and the
    amounts and times the evidence states (operands of what the answer computes)."""

    stems: frozenset[str] = frozenset()
    amounts: tuple[numbers.Quantity, ...] = ()
    clock: tuple[times.TimeOfDay, ...] = ()

    @classmethod
    def of(cls, output: str, index: EvidenceIndex) -> Answer:
        """The answer's amounts the evidence states, and those one step of arithmetic on
        them gives (an answer may compute in two steps: 70 x 40 % = 28, 28 + 33 = 61)."""
        clock = tuple(t for t in times.times(output) if any(t.agrees(e) for e in index.clock))
        amounts = numbers.extract(output)[:MAX_AMOUNTS]
        stated = [q for q in amounts if index.amounts.supports(q)]
        pool = [*stated, *index.quantities]
        computed = [q for q in amounts if q not in stated and arithmetic.derivable(
            q, pool, [*clock, *index.clock])]
        return cls(frozenset(content_stems(output)), tuple(stated + computed), clock)


def _counted(quantity: numbers.Quantity) -> bool:
    """"three times", "five events": a count in words, often of items the evidence lists
    rather than states, so it is an operand of arithmetic but never checked itself."""
    return quantity.kind == "count" and not quantity.text[:1].isdigit() and quantity.value < 100


def check_claim(claim: Claim, index: EvidenceIndex, premise: Premise,
                answer: Answer | None = None, *, readable: bool = True) -> ClaimResult:
    """The status of one claim against the evidence, with the rule that decided it.
    ``readable`` is false for Spanish, German or French answers, whose words the rules do not
    check (their numbers, dates and times they do)."""
    answer = answer or Answer()
    if _REFUSAL.search(claim.text) or _HEDGE_ONLY.match(claim.text):
        return ClaimResult(claim.text, "neutral", "refusal",
                           "a refusal or courtesy, not a factual claim")
    details = Details.of(claim, readable)
    query = details.stems + sorted(premise.stems) if claim.short_answer else details.stems
    sentence, overlap = best_sentence(query, details.quantities, index)
    name_stems = {part for name in details.names for part in name.parts}
    found = [q for q in details.quantities if index.amounts.supports(q)]
    share, missing = support(details.stems, index, name_stems, len(found))
    local = local_support([s for s in details.stems if index.has(s)], found, sentence,
                          name_stems, index)

    def result(status: Status, basis: str, reason: str,
               at: EvidenceSentence | None = None) -> ClaimResult:
        return ClaimResult(claim.text, status, basis, reason, round(share, 3), at or sentence,
                           round(local, 3))

    hard = (_direction_failure(claim.text, sentence)
            or _quote_failure(claim.text, index)
            or _time_failure(claim.text, details, index, sentence)
            or _weekday_failure(claim.text, details, index, sentence)
            or _number_failure(details, index, sentence, answer)
            or _misplaced(details, sentence, overlap)
            or _swapped(details, sentence, index)
            or (_name_failure(details.names, index, claim.text) if readable else None))
    if hard is not None:
        return result("contradicted", hard[0], hard[1], hard[2])
    if not readable:
        if details.quantities or details.clock or details.days:
            return result("undecided", "foreign_details_found",
                          "its numbers, dates and times are in the evidence; the words are not "
                          "checked in this language")
        return result("undecided", "unreadable", "the rules cannot read this language")
    relation = (_comparison(claim.text, index)
                or _attribution(details, sentence, overlap, index)
                or _names_apart(details.names, index, claim.text)
                or _unbounded(claim.text, sentence, overlap)
                or _polarity(claim, sentence, overlap)
                or _quantifier(claim.text, sentence, overlap, index)
                or _contrary(claim, details.stems, index, sentence))
    if relation is not None:
        return result("contradicted", relation[0], relation[1], relation[2])
    dropped = (None if _CONDITION.search(claim.text) else
               _dropped_condition(details.stems, answer.stems, sentence, share))
    if dropped is not None:
        return result("contradicted", "condition_dropped", dropped)
    return _support_status(claim, details, index, premise, sentence, share, local, missing,
                           result)


def _support_status(claim: Claim, details: Details, index: EvidenceIndex, premise: Premise,
                    sentence: EvidenceSentence | None, share: float, local: float,
                    missing: list[str], result: _Result) -> ClaimResult:
    named = _where(sentence)
    computed = [q for q in details.quantities
                if not index.amounts.supports(q) and not _an_hour_of(q, index)]
    if not details.stems and not details.quantities and not details.clock:
        return result("neutral", "no_content", "no checkable content")
    if details.overflow:
        return result("undecided", "too_many_amounts",
                      f"more than {MAX_AMOUNTS} amounts; only the first were checked")
    if claim.short_answer:
        if share >= 0.999 and _answers_question(details.stems, premise, index):
            return result("supported", "short_answer",
                          f"the answer is stated beside the question's subject{named}")
        return result("undecided", "short_answer_unproven",
                      "a short answer whose link to the question is not shown")
    verbatim = normalize(claim.text).strip(" .,;:!?") in index.normalized
    if verbatim:
        return result("supported", "verbatim", f"stated verbatim{named}")
    if share >= 0.999 and local >= 0.9:
        ordered = sentence is not None and in_order(
            [s for s in details.stems if in_sentence(s, sentence, index)], sentence,
            index) >= IN_ORDER
        basis = "computed" if computed else ("ordered" if ordered else "aligned")
        what = "computed from amounts" if computed else (
            "every word and detail found in the same order" if ordered
            else "every word and detail found")
        return result("supported", basis, f"{what} in one sentence{named}")
    if share >= NEAR_SUPPORT and local >= NEAR_LOCAL:
        return result("supported", "near", f"near-verbatim support ({share:.2f}){named}")
    if share >= 0.999:
        return result("undecided", "scattered",
                      f"its words occur in the evidence but not together (best sentence has "
                      f"{local:.2f} of them{named}): a relation the evidence does not state")
    if share < LOW_SUPPORT and len(missing) >= MIN_MISSING_FOR_LOW:
        absent = _as_written(missing, claim.text)
        return result("undecided", "low_support",
                      f"most of its words are not in the evidence (missing: {absent}"
                      f"{_closest(sentence)}); low overlap alone is not proof")
    return result("undecided", "partial",
                  f"partly supported ({share:.2f}; missing: {_as_written(missing, claim.text)}"
                  f"{_closest(sentence)})")


class _Result(Protocol):  # the signature of check_claim's local ``result``
    def __call__(self, status: Status, basis: str, reason: str,
                 at: EvidenceSentence | None = None) -> ClaimResult: ...


def _as_written(stems: list[str], text: str, limit: int = 5) -> str:
    """The claim's words behind ``stems``, as the answer writes them."""
    written: dict[str, str] = {}
    for word in words(text):
        for part in word.split("-") if "-" in word else [word]:
            written.setdefault(stem(part), part)
    return ", ".join(written.get(s, s) for s in stems[:limit])


def _closest(sentence: EvidenceSentence | None) -> str:
    return f"; closest: {sentence.passage}" if sentence is not None else ""


def _where(sentence: EvidenceSentence | None) -> str:
    return f" (in {sentence.passage})" if sentence is not None else ""


Failure = tuple[str, str, EvidenceSentence | None]


_CHANGE = re.compile(
    r"\b(?P<way>up|increas\w*|rais\w*|rise\w*|rose|grow\w*|grew|higher|down|decreas\w*|"
    r"reduc\w*|cut|lower\w*|dropp?\w*|fell|fall\w*)\b[^.;]{0,30}?\bfrom\s+(?P<a>\d[\d.,]*)"
    r"[^\d.;]{0,20}?\bto\s+(?P<b>\d[\d.,]*)", re.IGNORECASE)
_DOWN = ("down", "decreas", "reduc", "cut", "lower", "drop", "fell", "fall")


def _direction_failure(text: str, sentence: EvidenceSentence | None) -> Failure | None:
    """"has gone up from 100 to 75": the change's direction contradicts its own numbers."""
    for match in _CHANGE.finditer(text):
        a = numbers.number_value(match.group("a").rstrip(".,"))
        b = numbers.number_value(match.group("b").rstrip(".,"))
        if a is None or b is None or a == b:
            continue
        down = match.group("way").lower().startswith(_DOWN)
        if down != (b < a):
            said = "a fall" if b < a else "a rise"
            return ("direction", f"'{match.group(0)}' is {said}, not what "
                    f"'{match.group('way')}' says", sentence)
    return None


def _quote_failure(text: str, index: EvidenceIndex) -> Failure | None:
    for quote in entities.quoted(text):
        if not entities.quote_in(quote, index.normalized):
            return "quote_absent", f"quoted string '{quote}' not in evidence", None
    return None


def _time_failure(text: str, details: Details, index: EvidenceIndex,
                  sentence: EvidenceSentence | None) -> Failure | None:
    for clock in details.clock:
        if any(clock.agrees(e) for e in index.clock):
            continue
        near = sentence.clock if sentence is not None and sentence.clock else index.clock
        if near:
            holder = _holding(index, near[0]) or sentence
            said = ", ".join(t.text for t in near[:3])
            return ("time_contradicted",
                    f"time {clock.text} not in evidence ({_label(holder)} says {said})", holder)
        return "time_absent", f"time {clock.text} not in evidence", sentence
    return None


def _holding(index: EvidenceIndex, clock: times.TimeOfDay) -> EvidenceSentence | None:
    return next((s for s in index.sentences if clock in s.clock), None)


def _label(sentence: EvidenceSentence | None) -> str:
    return sentence.passage if sentence is not None else "the evidence"


def _weekday_failure(text: str, details: Details, index: EvidenceIndex,
                     sentence: EvidenceSentence | None) -> Failure | None:
    claimed = {d for w in details.days for d in w.days}
    extra = claimed - index.days
    if not extra or not index.days:
        return None
    if (_CLOSED.search(text) or negation.negated(text)) and not claimed & index.days:
        return None  # "closed on Sunday" against "open Monday to Saturday"
    holder = next((s for s in index.sentences if s.days), sentence)
    said = ", ".join(w.text for w in holder.days) if holder is not None else ""
    written = ", ".join(w.text for w in details.days)
    return ("weekday_contradicted",
            f"days {written} not in evidence ({_label(holder)} says {said})", holder)


def _number_failure(details: Details, index: EvidenceIndex, sentence: EvidenceSentence | None,
                    answer: Answer) -> Failure | None:
    for quantity in details.quantities:
        if index.amounts.supports(quantity) or _an_hour_of(quantity, index):
            continue
        cue = _DATE_COMPUTES if quantity.kind == "date" else _COMPUTES
        if cue.search(details.text) and arithmetic.derivable(
                quantity, [*answer.amounts, *index.quantities], [*answer.clock, *index.clock]):
            continue
        nearby = list(sentence.quantities) if sentence is not None else []
        instead = numbers.closest(quantity, nearby)
        if instead is not None:
            return ("number_contradicted", f"number {quantity.text} not in evidence "
                    f"({_label(sentence)} says {instead.text})", sentence)
        elsewhere = numbers.closest(quantity, index.quantities)
        if elsewhere is not None:
            holder = next((s for s in index.sentences if elsewhere in s.quantities), sentence)
            return ("number_contradicted", f"number {quantity.text} not in evidence "
                    f"({_label(holder)} says {elsewhere.text})", holder)
        return "number_absent", f"number {quantity.text} not in evidence", sentence
    return None


_COMMON_ABBREVIATIONS = frozenset({"HR", "UK", "US", "USA", "EU", "ID", "OK", "FAQ", "IT", "TV",
                                   "PC", "CEO", "PDF", "VAT", "GMT", "UTC", "CET", "PST", "EST"})


MISPLACED_OVERLAP = 0.75
MISPLACED_DAY_OVERLAP = 0.6


def _misplaced(details: Details, sentence: EvidenceSentence | None,
               overlap: float) -> Failure | None:
    """A time or weekday the evidence states elsewhere, while the sentence the claim restates
    says another ("until 10 PM" where the Thursday sentence says 21:00)."""
    if sentence is None:
        return None
    for clock in details.clock if overlap >= MISPLACED_OVERLAP else ():
        if sentence.clock and not any(clock.agrees(t) for t in sentence.clock):
            said = ", ".join(t.text for t in sentence.clock[:3])
            return ("time_misplaced", f"time {clock.text}: {sentence.passage} says {said} "
                    f"(\"{_short(sentence.text)}\")", sentence)
    days = {d for w in details.days for d in w.days}
    said_days = {d for w in sentence.days for d in w.days}
    if (overlap >= MISPLACED_DAY_OVERLAP and days and said_days and not days <= said_days
            and not _CLOSED.search(details.text)):
        said = ", ".join(w.text for w in sentence.days)
        return ("weekday_misplaced", f"days {', '.join(w.text for w in details.days)}: "
                f"{sentence.passage} says {said} (\"{_short(sentence.text)}\")", sentence)
    return None


SWAP_OVERLAP = 0.75


def _swapped(details: Details, sentence: EvidenceSentence | None,
             index: EvidenceIndex) -> Failure | None:
    """The claim's one amount of a kind belongs to another sentence, while the sentence its
    words restate gives another amount of that kind ("the express train takes 25 minutes"
    where the train's sentence says 55 and the metro's 25)."""
    measured = [q for q in details.quantities
                if q.kind not in ("count", "date", "year", "ordinal")]
    if sentence is None or not measured:
        return None
    by_words, overlap = best_sentence(details.stems, [], index)
    if by_words is None or overlap < SWAP_OVERLAP:
        return None
    for quantity in measured:
        if sum(q.kind == quantity.kind for q in measured) != 1:
            continue
        same = [q for q in by_words.quantities if q.kind == quantity.kind]
        if same and not by_words.states(quantity):
            return ("number_swapped", f"number {quantity.text}: {by_words.passage} says "
                    f"{same[0].text} here (\"{_short(by_words.text)}\"); {quantity.text} is "
                    "said of something else", by_words)
    return None


def _an_hour_of(quantity: numbers.Quantity, index: EvidenceIndex) -> bool:
    """"from 8 to 11 in the morning" against "08:00-11:00": a bare hour of an evidence time."""
    if quantity.kind != "count" or not 0 <= quantity.value <= 24:
        return False
    hour = int(quantity.value) * 60
    return any(hour in t.minutes or hour + 720 in t.minutes for t in index.clock)


def _name_failure(names: list[entities.Name], index: EvidenceIndex,
                  text: str = "") -> Failure | None:
    if negation.negated(text):
        return None  # "there's no Rust SDK": naming what is absent
    for name in names:
        if name.text in _COMMON_ABBREVIATIONS or name.guessed:
            continue
        if entities.quote_in(name.text, index.normalized):
            continue
        absent = [p for p in name.parts if len(p.strip(".")) > 1 and not index.has(p)]
        if absent and len(absent) * 2 >= len(name.parts) and not _abbreviation(name, index):
            return "name_absent", f"name '{name.text}' not in evidence", None
    return None


_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:ian|ese|ish|ean)$")


def _abbreviation(name: entities.Name, index: EvidenceIndex) -> bool:
    """Whether a one-word name abbreviates a name of the evidence ("Amex")."""
    if " " in name.text:
        return False
    return any(entities.abbreviates(name.text, other.text) for other in index.names())


ATTRIBUTION_OVERLAP = 0.7


def _attribution(details: Details, sentence: EvidenceSentence | None, overlap: float,
                 index: EvidenceIndex) -> Failure | None:
    """The claim's words come from a passage that never names the one it credits them to
    ("Reviewer 1 pointed out ..." where only Reviewer 2's comments say so)."""
    names = [n for n in details.names if any(len(p) > 1 for p in n.parts)]
    if sentence is None or overlap < ATTRIBUTION_OVERLAP or len(names) != 1:
        return None
    name = names[0]
    if not name.labelled:
        return None  # only labelled siblings ("Reviewer 1" / "Reviewer 2") are told apart

    def names_it(s: EvidenceSentence) -> bool:
        return name.named_in(s.text)

    passage = [s for s in index.sentences if s.passage == sentence.passage]
    if any(names_it(s) for s in passage) or not any(names_it(s) for s in index.sentences):
        return None  # named where it is said, or never: another rule's
    return ("attribution", f"{sentence.passage} says this, and never names '{name.text}' "
            f"(\"{_short(sentence.text)}\")", sentence)


def _comparison(text: str, index: EvidenceIndex) -> Failure | None:
    found = comparison.reversed_comparison(text, index.passages)
    if found is None:
        return None
    holder = next((s for s in index.sentences
                   if s.passage == found.passage and found.amount in s.text), None)
    return "comparison_reversed", found.reason, holder


def _names_apart(names: list[entities.Name], index: EvidenceIndex, text: str) -> Failure | None:
    """A claim relating two names that no sentence mentions together."""
    distinct = {n.text: n for n in names if any(len(p) > 1 for p in n.parts)
                and not _DEMONYM.search(n.text)}
    if len(distinct) != 2 or negation.negated(text):
        return None  # a list of names, or "there is no X among Y", relates nothing
    for first, second in pairwise(distinct.values()):
        if not any(_mentions(first, s.scope) and _mentions(second, s.scope)
                   for s in index.sentences) and _same_passage(first, second, index):
            return ("names_apart", f"names '{first.text}' and '{second.text}' never appear "
                    "together in the evidence", None)
    return None


def _same_passage(first: entities.Name, second: entities.Name, index: EvidenceIndex) -> bool:
    """Whether one passage names both: names from two documents may be combined by the
    answer ("a Canadian passport holder flying to Delhi")."""
    holders = [{s.passage for s in index.sentences if _mentions(name, s.scope)}
               for name in (first, second)]
    return not (holders[0] and holders[1]) or bool(holders[0] & holders[1])


def _mentions(name: entities.Name, stems: frozenset[str]) -> bool:
    parts = [p for p in name.parts if len(p) > 1]
    present = sum(p in stems for p in parts)
    return present == len(parts) or (len(parts) >= 3 and present * 3 >= len(parts) * 2)


def _polarity(claim: Claim, sentence: EvidenceSentence | None, overlap: float) -> Failure | None:
    if (sentence is None or overlap < ALIGN_FOR_POLARITY or claim.short_answer
            or _fragment(claim.text)):
        return None  # a verbless list item takes its polarity from its heading
    clause = _aligned_clause(claim.text, sentence.text)
    flip = negation.flipped(claim.text, clause) if clause is not None else None
    if flip is None:
        flip = negation.opposed(claim.text, sentence.text)
    if flip is None:
        return None
    basis = "negation" if flip.startswith("negation") else "opposite"
    return basis, f"{flip} ({sentence.passage}: \"{_short(sentence.text)}\")", sentence


_CLAUSE = re.compile(r"[;:()]|,\s|\s(?:but|while|whereas|although|and|or)\s|\s[-–—]\s")
CLAUSE_COVER = 0.75


def _aligned_clause(claim: str, sentence: str) -> str | None:
    """The clause of ``sentence`` the claim restates: it has most of the claim's words and the
    claim most of its words; None when no clause is that close."""
    claim_stems = set(content_stems(claim))
    if len(claim_stems) < 2:
        return None
    best: tuple[float, str] | None = None
    for clause in _CLAUSE.split(sentence):
        stems = set(content_stems(clause))
        if not stems:
            continue
        shared = len(stems & claim_stems)
        cover = min(shared / len(claim_stems), shared / len(stems))
        if cover >= CLAUSE_COVER and (best is None or cover > best[0]):
            best = (cover, clause)
    return best[1] if best else None


_UNBOUNDED = re.compile(r"\b(?:lifetime|lifelong|unlimited|forever|permanent(?:ly)?|"
                        r"indefinitely|never expires?|no (?:time )?limit)\b", re.IGNORECASE)


def _unbounded(text: str, sentence: EvidenceSentence | None, overlap: float) -> Failure | None:
    """"a lifetime warranty" against "a 2-year limited warranty": no limit where the sentence
    the claim restates sets one."""
    match = _UNBOUNDED.search(text)
    if match is None or sentence is None or overlap < ALIGN_FOR_QUANTIFIER:
        return None
    limit = next((q for q in sentence.quantities if q.kind in ("duration", "count")), None)
    if limit is None or negation.negated(text):
        return None
    return ("unbounded", f"the claim says '{match.group(0)}' where {sentence.passage} says "
            f"{limit.text}", sentence)


_SUBJECTS = frozenset({"i", "we", "you", "it", "they", "he", "she", "there", "this", "that"})


def _fragment(text: str) -> bool:
    """A list item without a verb or a subject ("Damage from power surges")."""
    return is_short_answer(text) and not _SUBJECTS & set(re.findall(r"[a-z]+", text.lower()))


def _quantifier(text: str, sentence: EvidenceSentence | None, overlap: float,
                index: EvidenceIndex) -> Failure | None:
    if sentence is None or overlap < ALIGN_FOR_QUANTIFIER:
        return None
    claim_words = set(re.findall(r"[a-z]+", text.lower()))
    evidence_words = set(re.findall(r"[a-z]+", sentence.text.lower()))
    universal = (claim_words & _UNIVERSAL) - evidence_words
    limiting = (evidence_words & _LIMITING) - claim_words
    if universal and limiting:
        return ("quantifier", f"the claim says '{sorted(universal)[0]}' where "
                f"{sentence.passage} says '{sorted(limiting)[0]}'", sentence)
    return None


def _contrary(claim: Claim, stems: list[str], index: EvidenceIndex,
              best: EvidenceSentence | None) -> Failure | None:
    """Another sentence about the same thing that says the opposite ("open on Sundays" against
    "It is closed on Sundays")."""
    about = set(stems) - GENERIC
    for number in index.candidates(stems)[:6]:
        sentence = index.sentences[number]
        clause = _covered_clause(about, sentence.text)
        if clause is not None and negation.negated(clause) and not negation.negated(claim.text):
            return ("negation", f"negation flipped: {sentence.passage} says \"{_short(clause)}\"",
                    sentence)
        if len(about & sentence.scope) < max(2, len(about) / 2):
            continue
        reason = negation.opposed(claim.text, sentence.text)
        if reason is not None and not about & negation.OPPOSITE.keys() & sentence.stems:
            return "contrary", f"{reason} ({sentence.passage})", sentence
    return None


def _covered_clause(about: set[str], sentence: str) -> str | None:
    """A clause of ``sentence`` all of whose words (three or more) the claim uses: the claim
    restates it, so it must keep its polarity ("gift cards can be returned" against "gift
    cards cannot be returned"; the other way round, a negated claim usually combines)."""
    for clause in _CLAUSE.split(sentence):
        stems = set(content_stems(clause)) - GENERIC
        if len(stems) >= MIN_COVERED and stems <= about:
            return clause.strip()
    return None


def _dropped_condition(stems: list[str], answer: frozenset[str],
                       sentence: EvidenceSentence | None, share: float) -> str | None:
    """The claim restates a conditional sentence without its condition ("returns are free"
    against "returns are free if you use the prepaid label", or "if ..., you can claim 50%")."""
    if sentence is None or share < CONDITION_SUPPORT:
        return None
    for clause in _CONDITIONAL_CLAUSE.split(sentence.text):
        split = _condition_and_main(clause)
        if split is None:
            continue
        condition_text, main_text = split
        stated = set(content_stems(condition_text))
        condition = stated - set(stems) - answer
        main = set(content_stems(main_text))
        if (len(condition) >= 2 and len(condition) * 2 >= len(stated) and main
                and len(main & set(stems)) * 2 >= len(main)):
            return (f"leaves out the condition \"{_short(condition_text.strip(), 60)}\" "
                    f"({sentence.passage})")
    return None


_CONDITIONAL_CLAUSE = re.compile(r";\s*")


def _condition_and_main(clause: str) -> tuple[str, str] | None:
    """The condition of a clause and what it conditions: "main if condition", or "If
    condition, main"."""
    match = _CONDITION.search(clause)
    if match is None:
        return None
    before = clause[:match.start()]
    if not content_stems(before.split(".")[-1]):  # the condition opens the sentence
        comma = clause.find(", ", match.end())
        if comma < 0:
            return None
        return clause[match.start():comma], clause[comma + 2:]
    return clause[match.start():], before


def _answers_question(stems: list[str], premise: Premise, index: EvidenceIndex) -> bool:
    """Whether some evidence sentence holding a short answer also mentions the question's
    subject: without one, the answer may be a true fact that answers another question."""
    asked = premise.stems - set(stems)
    if not premise.text or not asked or not stems:
        return True
    for number in index.candidates(stems):
        sentence = index.sentences[number]
        if asked & sentence.scope and all(in_sentence(s, sentence, index) for s in stems):
            return True
    return False


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""Failures on a claim's details: quoted strings, numbers, amounts, dates, times of day,
weekdays and names that the evidence lacks or states differently.

Each check returns a :data:`Failure` (the basis, a reason naming the evidence compared, and the
sentence to quote) or None; :data:`guard.offline.registry.CLAIM_RULES` runs them (stage
``detail``) in order of how decisive they are.

Why one module of this length: one failure test per kind of detail (quote, number, time,
weekday, name, direction), each a few short functions, all run by the registry in the same
order; they share the :class:`Details` and :class:`Answer` views of a case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

from guard.offline import arithmetic, entities, negation, numbers, times
from guard.offline.align import EvidenceIndex, EvidenceSentence, best_sentence
from guard.offline.claims import Claim
from guard.offline.lexicon import (
    ABBREVIATIONS,
    NAME_DECORATIONS,
    NICKNAMES,
    UNITS,
    alternation,
    foreign_words,
)
from guard.offline.text import STOPWORDS, content_stems, fold, normalize, stem

MAX_AMOUNTS = 32  # amounts, times and names of one claim that are checked


# Words by which an answer says it computed a figure ("in total", "which leaves", "6 months
# after"); without one, a number that arithmetic could reach is more likely a wrong number.
_COMPUTES = re.compile(
    r"\b"
    + alternation(
        [
            "total",
            "totals",
            "totall?ing",
            "adds? up",
            "in all",
            "altogether",
            "combined",
            "overall",
            "sum",
            "leaves?",
            "left",
            "remaining",
            "remain",
            "difference",
            "later",
            "earlier",
            "each",
            "times",
            "twice",
            "half",
            "double",
            "which is",
            "that's",
            "that is",
            "works out",
            "comes to",
            "makes",
            "would be",
            "less",
            "more",
            "fewer",
            "cheaper",
            "saving",
            "save",
            "layover",
            "average",
            "so",
            "per",
            "insgesamt",
            "also",
            "mal",
            "geteilt",
            "durch",
            "pro",
            "je",
            "por",
            "dividido",
            "multiplicado",
            "fois",
            "divisé",
            "soit",
            "donc",
            "plus",
            "minus",
            "weighted",
            "multiplied",
            "divided",
        ],
        literal=False,
    )
    + r"\b|[=×+*/÷]",
    re.IGNORECASE,
)


_DATE_COMPUTES = re.compile(
    r"\b"
    + alternation(
        [
            "after",
            "from",
            "until",
            "till",
            "by",
            "later",
            "before",
            "since",
            "ends?",
            "expires?",
            "covered",
            "available",
            "due",
            "leaves?",
            "then",
        ],
        literal=False,
    )
    + r"\b",
    re.IGNORECASE,
)


_CLOSED = re.compile(r"\b(?:closed|not open|shut|no service|unavailable)\b", re.IGNORECASE)


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
        in_times = {i for t in clock for i in range(*t.span)}  # a set: linear, not amounts x times
        # the first MAX_AMOUNTS (and one more, to know there are more): the rest are unread
        quantities = list(
            islice(
                (
                    q
                    for q in numbers.extract(claim.text)
                    if q.start not in in_times and not _counted(q) and not enumerator(claim.text, q)
                ),
                MAX_AMOUNTS + 1,
            )
        )
        names = entities.names(claim.text, whole_answer=claim.short_answer) if readable else []
        return cls(
            content_stems(claim.text),
            quantities[:MAX_AMOUNTS],
            clock[:MAX_AMOUNTS],
            times.weekdays(claim.text)[:MAX_AMOUNTS],
            names[:MAX_AMOUNTS],
            claim.text,
            overflow=len(quantities) > MAX_AMOUNTS or len(clock) > MAX_AMOUNTS,
        )


@dataclass(frozen=True)
class Answer:
    """What the whole answer holds: its stems (a condition may sit in another claim), its
    grounded amounts (stated by the evidence, or computed from evidence amounts and the
    answer's earlier grounded amounts: operands of what the answer computes) and the times the
    evidence states."""

    stems: frozenset[str] = frozenset()
    amounts: tuple[numbers.Quantity, ...] = ()
    clock: tuple[times.TimeOfDay, ...] = ()

    @classmethod
    def of(cls, output: str, index: EvidenceIndex) -> Answer:
        """The answer's amounts that the evidence states or that arithmetic on grounded
        amounts gives, chained: "€540, plus city tax of €28 (€3.50 for each of you for 4
        nights), so €568" grounds €540 (4 x 135), €28 (3.50 x 2 x 4) and then €568. Two
        steps (three operands) only where the answer shows it computes."""
        clock = tuple(t for t in times.times(output) if any(t.agrees(e) for e in index.clock))
        amounts = list(
            islice((q for q in numbers.extract(output) if not enumerator(output, q)), MAX_AMOUNTS)
        )
        grounded = [q for q in amounts if _counted(q)]  # "three modules": the answer's count
        steps = 2 if _COMPUTES.search(output) else 1
        evidence = list(index.quantities)
        clocks = [*clock, *index.clock]
        stated = [q for q in amounts if index.amounts.supports(q)]  # operands already
        for _ in range(2):  # an answer may give a total before its parts
            for q in amounts:
                if q in grounded or q in stated:
                    continue
                others = [g for g in grounded if g.value != q.value]
                if arithmetic.derivable(q, [*others, *evidence], clocks, steps=steps):
                    grounded.append(q)
        return cls(frozenset(content_stems(output)), tuple(grounded), clock)

    def grounds(self, quantity: numbers.Quantity) -> bool:
        """Whether the answer's chain of computations grounds ``quantity``."""
        return any(q.kind == quantity.kind and q.value == quantity.value for q in self.amounts)


_ENUMERATOR = re.compile(r"(?m)^[ \t>*-]*\(?(\d{1,2})[.)](?=\s)")


def enumerator(text: str, quantity: numbers.Quantity) -> bool:
    """ "1.", "2)" opening a list line: list formatting, not a claimed number."""
    return quantity.kind == "count" and quantity.start in _enumerators(text)


@lru_cache(maxsize=numbers.EXTRACT_CACHE_SIZE)
def _enumerators(text: str) -> frozenset[int]:
    return frozenset(m.start(1) for m in _ENUMERATOR.finditer(text))


SMALL_COUNT = 12


_FIELD_END = re.compile(r"[,;\"{}\[\]]")  # a record's next field is not what it counts


def _counts_same(text: str, quantity: numbers.Quantity, sentence: EvidenceSentence | None) -> bool:
    """Whether the sentence counts what the claim's bare number counts: the word after the
    number ("5 users") follows a count of the sentence too."""
    counted = content_stems(text[quantity.start + len(quantity.text) :][:40])[:1]
    verb = _word_before(text, quantity.start)
    if sentence is None or not (counted or verb):
        return False
    for q in sentence.quantities[:MAX_AMOUNTS]:
        if q.kind != "count":
            continue
        # the amount itself, not its digits inside another number ("2" in "88213")
        for match in re.finditer(rf"(?<![\w.,]){re.escape(q.text)}(?![\w])", sentence.text):
            after = _FIELD_END.split(sentence.text[match.end() : match.end() + 40], maxsplit=1)[0]
            if counted and counted[0] in content_stems(after)[:2]:  # "5 users", not '5, "users"'
                return True
            # "seats 26" against "seats 24": the same word right before the number
            if verb and verb == _word_before(sentence.text, match.start()):
                return True
    return False


_WORD_BEFORE = re.compile(r"([^\W\d_]+)\s+$")


def _word_before(text: str, at: int) -> list[str]:
    """The content stem of the word right before ``at`` with only a space between ("seats 24";
    not '"order": 77212' or "order (3")."""
    match = _WORD_BEFORE.search(text[max(0, at - 24) : at])
    return content_stems(match.group(1)) if match else []


def _small_count(quantity: numbers.Quantity) -> bool:
    return (
        quantity.kind == "count"
        and quantity.value <= SMALL_COUNT
        and quantity.value == int(quantity.value)
    )


def _counted(quantity: numbers.Quantity) -> bool:
    """ "three times", "five events": a count in words, often of items the evidence lists
    rather than states, so it is an operand of arithmetic but never checked itself."""
    return quantity.kind == "count" and not quantity.text[:1].isdigit() and quantity.value < 100


Failure = tuple[str, str, EvidenceSentence | None]


_CHANGE = re.compile(
    r"\b(?P<way>up|increas\w*|rais\w*|rise\w*|rose|grow\w*|grew|higher|down|decreas\w*|"
    r"reduc\w*|cut|lower\w*|dropp?\w*|fell|fall\w*)\b[^.;]{0,30}?\bfrom\s+(?P<a>\d[\d.,]*)"
    r"[^\d.;]{0,20}?\bto\s+(?P<b>\d[\d.,]*)",
    re.IGNORECASE,
)


_DOWN = ("down", "decreas", "reduc", "cut", "lower", "drop", "fell", "fall")


def _direction_failure(text: str, sentence: EvidenceSentence | None) -> Failure | None:
    """ "has gone up from 100 to 75": the change's direction contradicts its own numbers."""
    for match in _CHANGE.finditer(text):
        a = numbers.number_value(match.group("a").rstrip(".,"))
        b = numbers.number_value(match.group("b").rstrip(".,"))
        if a is None or b is None or a == b:
            continue
        down = match.group("way").lower().startswith(_DOWN)
        if down != (b < a):
            said = "a fall" if b < a else "a rise"
            return (
                "direction",
                f"'{match.group(0)}' is {said}, not what '{match.group('way')}' says",
                sentence,
            )
    return None


def _quote_failure(text: str, index: EvidenceIndex) -> Failure | None:
    """A quoted string the evidence lacks. One whose words one sentence has, though not as
    quoted ("'card reader offline'" for "the card reader is offline"), is a paraphrase in
    quotes: no proof of anything, so left to the other checks."""
    for quote in entities.quoted(text):
        if not entities.quote_in(quote, index.normalized):
            stems = content_stems(quote)
            sentence, share = best_sentence(stems, [], index)
            if stems and sentence is not None and share >= 0.999:
                continue
            return "quote_absent", f"quoted string '{quote}' not in evidence", None
    return None


def _time_failure(
    text: str, details: Details, index: EvidenceIndex, sentence: EvidenceSentence | None
) -> Failure | None:
    for clock in details.clock:
        if any(clock.agrees(e) for e in index.clock) or arithmetic.time_offset(
            clock, index.clock, index.quantities
        ):
            continue
        near = sentence.clock if sentence is not None and sentence.clock else index.clock
        if near:
            holder = _holding(index, near[0]) or sentence
            said = ", ".join(t.text for t in near[:3])
            return (
                "time_contradicted",
                f"time {clock.text} not in evidence ({_label(holder)} says {said})",
                holder,
            )
        return "time_absent", f"time {clock.text} not in evidence", sentence
    return None


_DAYS_DENIED = re.compile(
    r"(?:\bnot|\bno|n['’]t|\bnever|\bexcept|\bexcluding)"
    r"\W+(?:\w+\W+){0,2}$",
    re.IGNORECASE,
)


def _days_denied(text: str, days: times.Weekdays) -> bool:
    """ "not on Saturday or Sunday", "except Sundays": days the claim excludes ("closed on
    Sundays" claims Sunday as a closed day)."""
    before = text[max(0, days.start - 30) : days.start]
    if _DAYS_DENIED.search(before):
        return True
    # the second of "not on Saturday or Sunday"
    return bool(
        re.search(
            r"(?:\bnot|\bno|n['’]t|\bnever|\bexcept)\W+(?:\w+\W+){0,2}"
            r"\w+day\w*\s+(?:or|and|nor)\s+$",
            before,
            re.IGNORECASE,
        )
    )


def _holding(index: EvidenceIndex, clock: times.TimeOfDay) -> EvidenceSentence | None:
    return next((s for s in index.sentences if clock in s.clock), None)


def _label(sentence: EvidenceSentence | None) -> str:
    return sentence.passage if sentence is not None else "the evidence"


def _weekday_failure(
    text: str, details: Details, index: EvidenceIndex, sentence: EvidenceSentence | None
) -> Failure | None:
    claimed = {d for w in details.days if not _days_denied(text, w) for d in w.days}
    extra = claimed - index.days
    if not extra or not index.days:
        return None
    if (
        (_CLOSED.search(text) or negation.negated(text))
        and not claimed & index.days
        and not any(s.days and _CLOSED.search(s.text) for s in index.sentences)
    ):
        return None  # "closed on Sunday" against "open Monday to Saturday", not "closed Mondays"
    holder = next((s for s in index.sentences if s.days), sentence)
    said = ", ".join(w.text for w in holder.days) if holder is not None else ""
    written = ", ".join(w.text for w in details.days)
    return (
        "weekday_contradicted",
        f"days {written} not in evidence ({_label(holder)} says {said})",
        holder,
    )


ALIGNED_OVERLAP = 0.5  # a sentence restating this share of the claim's words is its slot
SAME_SLOT_OVERLAP = 0.34  # ... and one sharing a third of them, with an amount of the kind


def _number_failure(
    details: Details,
    index: EvidenceIndex,
    sentence: EvidenceSentence | None,
    overlap: float,
    answer: Answer,
) -> Failure | None:
    """A number neither the evidence states nor the answer computes. Against the sentence the
    claim restates (an amount of the same kind in the same slot) it is contradicted; against an
    amount elsewhere it is unaligned; with none of its kind, absent. A number arithmetic on
    the evidence and the answer's grounded amounts gives is not a failure, unless the claim
    restates a sentence holding another amount of its kind and shows no computation."""
    shows = {
        False: bool(_COMPUTES.search(details.text)),
        True: bool(_DATE_COMPUTES.search(details.text)),
    }  # computing cues in the claim
    for quantity in details.quantities:
        if _stated_otherwise(quantity, details.text, index):
            continue
        shown = shows[quantity.kind == "date"]
        nearby = list(sentence.quantities) if sentence is not None else []
        restated = _restates_another(quantity, details.text, sentence, overlap, shown)
        if _computed_here(quantity, details, index, answer, nearby, restated=restated, shown=shown):
            continue
        return _unstated(quantity, index, sentence, overlap, nearby)
    return None


def _stated_otherwise(quantity: numbers.Quantity, text: str, index: EvidenceIndex) -> bool:
    """Step 1: the evidence states the number, or states it in another form."""
    if index.amounts.supports(quantity) or an_hour_of(quantity, index):
        return True
    if _inexact(quantity, index):
        return True  # "3 months" against "90 days": the units do not convert exactly
    if quantity.kind == "ordinal" and index.writes(quantity.text):
        return True  # "Version 2.1" against "v2.1": a label the evidence glues to letters
    if _written_alike(quantity, index) or _spelled_apart(quantity, index):
        return True  # "a half-day tour" against "half-day guided tour": the same words
    if quantity.text.lower() in numbers.FREQUENCIES and _per_period(index):
        return True  # "a monthly fee" against "£25 per month": how often, said another way
    if _coded(quantity, text, index):
        return True  # "LH 902" against "LH902": a code written with a space
    # "off for four days" against "from the fourth day": the same count
    return quantity.kind == "duration" and _counted_as_ordinal(quantity, index)


def _restates_another(
    quantity: numbers.Quantity,
    text: str,
    sentence: EvidenceSentence | None,
    overlap: float,
    shown: bool,
) -> bool:
    """Step 2: the claim restates a sentence with another amount of the kind, and no computing
    words: it swapped the number even if arithmetic could reach it ("within 10 business days"
    against "within 5 business days")."""
    nearby = sentence.quantities if sentence is not None else ()
    return (
        not shown
        and overlap >= ALIGNED_OVERLAP
        and any(q.kind == quantity.kind for q in nearby)
        and (quantity.kind != "count" or _counts_same(text, quantity, sentence))
    )


def _computed_here(
    quantity: numbers.Quantity,
    details: Details,
    index: EvidenceIndex,
    answer: Answer,
    nearby: list[numbers.Quantity],
    *,
    restated: bool,
    shown: bool,
) -> bool:
    """Step 3: a number the answer may have counted or computed: a small count, arithmetic on
    the evidence and the answer's grounded amounts (one step, two where the claim shows it
    computes), a date the claim counts, or (restating a sentence) that sentence's own
    amounts."""
    if not restated and _small_count(quantity):
        return True  # "3 modules": maybe a count of items the evidence lists, not states
    if not restated and (
        answer.grounds(quantity)
        or arithmetic.derivable(
            quantity,
            [*answer.amounts, *index.quantities],
            [*answer.clock, *index.clock],
            steps=2 if shown else 1,
        )
    ):
        return True
    if shown and arithmetic.counted_on(
        quantity, _shown(quantity, details, index), index.quantities
    ):
        return True  # "30 days to return them, so until 3 May": a date the claim counts
    if restated and arithmetic.derivable(quantity, [*answer.amounts, *nearby]):
        return True  # computed from the restated sentence's own amounts: "1.5 times £12"
    # "68%: 60% of 70 plus 40% of 65": more steps than arithmetic tries
    return shown and _operands(quantity, details, index) >= MANY_OPERANDS


def _unstated(
    quantity: numbers.Quantity,
    index: EvidenceIndex,
    sentence: EvidenceSentence | None,
    overlap: float,
    nearby: list[numbers.Quantity],
) -> Failure:
    """Step 4, the finding: contradicted by the restated sentence's amount of the kind,
    unaligned with one elsewhere, or absent."""
    instead = numbers.closest(quantity, nearby)
    if instead is not None and overlap >= SAME_SLOT_OVERLAP:
        return (
            "number_contradicted",
            f"number {numbers.converted(quantity, instead)} not in evidence "
            f"({_label(sentence)} says {instead.text})",
            sentence,
        )
    elsewhere = instead or numbers.closest(quantity, index.quantities)
    if elsewhere is not None:
        holder = next((s for s in index.sentences if elsewhere in s.quantities), sentence)
        return (
            "number_unaligned",
            f"number {numbers.converted(quantity, elsewhere)} not in evidence "
            f"({_label(holder)} says {elsewhere.text})",
            holder,
        )
    return "number_absent", f"number {quantity.text} not in evidence", sentence


_CODE_BEFORE = re.compile(r"\b([A-Z]{1,4})[ -]$")


_PER_PERIOD = re.compile(
    r"\b(?:per|a|an|each|every|/)\s*(?:day|week|fortnight|month|quarter|year|annum)\b",
    re.IGNORECASE,
)


_ARTICLE = re.compile(r"^(?:a|an|one)\s+", re.IGNORECASE)


def _written_alike(quantity: numbers.Quantity, index: EvidenceIndex) -> bool:
    """Whether the evidence writes an amount in words as the claim does, but for its article,
    hyphens or plural ("a half-day" / "half-day", "two business days" / "two-business-day"):
    the same words, which the grammar reads on one side only."""
    words = _ARTICLE.sub("", quantity.text)
    if any(c.isdigit() for c in words):
        return False
    parts = [re.escape(w) for w in re.findall(r"[^\W\d_]+", normalize(words))]
    if len(parts) < 2:
        return False
    parts[-1] = parts[-1].removesuffix("s") + "s?"  # "two business days": "two-business-day"
    pattern = r"\b" + r"[\s-]?".join(parts) + r"\b"
    return re.search(pattern, index.normalized) is not None


_NUMBER_AND_UNIT = re.compile(r"^(?P<num>[\w.,]+)\s+(?P<unit>[^\W\d_]+)$")


def _spelled_apart(quantity: numbers.Quantity, index: EvidenceIndex) -> bool:
    """Whether the evidence writes the claim's number and unit with a word or two between
    them ("five days" against "five unused days", "3 nights" against "3 consecutive nights"),
    which the grammar does not read as one amount."""
    parts = _NUMBER_AND_UNIT.match(normalize(quantity.text))
    if parts is None or quantity.kind in ("count", "date", "year", "ordinal"):
        return False
    unit = re.escape(parts.group("unit").rstrip("s"))
    pattern = rf"\b{re.escape(parts.group('num'))}\s+(?:[a-z-]+\s+){{1,2}}{unit}s?\b"
    return re.search(pattern, index.normalized) is not None


def _per_period(index: EvidenceIndex) -> bool:
    """Whether the evidence says how often with "per month", "a year", "/month"."""
    return _PER_PERIOD.search(index.normalized) is not None


def _coded(quantity: numbers.Quantity, text: str, index: EvidenceIndex) -> bool:
    """Whether a count is the number of a code the evidence writes glued ("LH 902": "LH902")."""
    if quantity.kind not in ("count", "year"):  # "IC 2041" reads like a year
        return False
    code = _CODE_BEFORE.search(text, max(0, quantity.start - 6), quantity.start)
    return code is not None and index.writes(f"{code.group(1)}{quantity.text}")


def _counted_as_ordinal(quantity: numbers.Quantity, index: EvidenceIndex) -> bool:
    """Whether the evidence counts the claim's duration as an ordinal ("the fourth day")."""
    return quantity.number == int(quantity.number) > 0 and any(
        q.kind == "ordinal" and q.value == quantity.number for q in index.quantities
    )


MANY_OPERANDS = 4  # grounded amounts beside a computed one: more than two steps take


def _shown(
    quantity: numbers.Quantity, details: Details, index: EvidenceIndex
) -> list[numbers.Quantity]:
    """The claim's other amounts the evidence states, as the claim writes them ("30 days"
    where a record says 30): the operands it shows for the amount it computes."""
    return [q for q in details.quantities if q is not quantity and index.amounts.supports(q)]


def _operands(quantity: numbers.Quantity, details: Details, index: EvidenceIndex) -> int:
    """How many other amounts of the claim the evidence states: the operands it shows."""
    return sum(q is not quantity and index.amounts.supports(q) for q in details.quantities)


INEXACT_RANGE = 0.5  # evidence durations within this share of a claimed one are compared


def _inexact(quantity: numbers.Quantity, index: EvidenceIndex) -> bool:
    """Whether an evidence amount in a unit that does not convert exactly may be the
    claimed one (:func:`numbers.inexact`)."""
    if quantity.kind in ("count", "date", "year", "ordinal"):
        return False
    near = index.amounts.near(quantity.value, INEXACT_RANGE)
    if quantity.kind == "gbp":  # pounds of weight: 2.2 pounds is 1 kg
        near = near + index.amounts.near(quantity.number * numbers.POUND_KG, INEXACT_RANGE)
    return any(numbers.inexact(quantity, e) for e in near[:MAX_AMOUNTS])


COMMON_ABBREVIATIONS = frozenset(
    {
        "HR",
        "UK",
        "US",
        "USA",
        "EU",
        "ID",
        "OK",
        "FAQ",
        "IT",
        "TV",
        "PC",
        "CEO",
        "PDF",
        "VAT",
        "GMT",
        "UTC",
        "CET",
        "PST",
        "EST",
        "API",
        "GP",
        "URL",
        "SDK",
        "PIN",
        "SMS",
        "ATM",
        "IBAN",
        "CSV",
        "JSON",
        "HTTP",
        "HTTPS",
    }
)


MISPLACED_OVERLAP = 0.75
MISPLACED_DAY_OVERLAP = 0.6


def _misplaced(
    details: Details, sentence: EvidenceSentence | None, overlap: float
) -> Failure | None:
    """A time or weekday the evidence states elsewhere, while the sentence the claim restates
    says another ("until 10 PM" where the Thursday sentence says 21:00)."""
    if sentence is None:
        return None
    if sentence.scope != sentence.stems:  # "Thursday: nurse-led clinic." after "Tuesday: Dr X."
        own = sum(s in sentence.stems for s in details.stems)
        overlap = min(overlap, own / len(details.stems)) if details.stems else overlap
    clause = _slot(sentence.text, details.stems) if (details.clock or details.days) else ""
    sentence_clock = times.times(clause) if clause else list(sentence.clock)
    sentence_days = times.weekdays(clause) if clause else list(sentence.days)
    quoted = clause or sentence.text
    for clock in details.clock if overlap >= MISPLACED_OVERLAP else ():
        if (
            sentence_clock
            and not any(clock.agrees(t) for t in sentence_clock)
            and not (arithmetic.time_offset(clock, sentence_clock, sentence.quantities))
        ):
            said = ", ".join(t.text for t in sentence_clock[:3])
            return (
                "time_misplaced",
                f'time {clock.text}: {sentence.passage} says {said} ("{short(quoted)}")',
                sentence,
            )
    days = {d for w in details.days for d in w.days}
    said_days = {d for w in sentence_days for d in w.days}
    if (
        overlap >= MISPLACED_DAY_OVERLAP
        and days
        and said_days
        and not days <= said_days
        and not _CLOSED.search(details.text)
    ):
        said = ", ".join(w.text for w in sentence_days)
        return (
            "weekday_misplaced",
            f"days {', '.join(w.text for w in details.days)}: "
            f'{sentence.passage} says {said} ("{short(quoted)}")',
            sentence,
        )
    return None


_CLAUSES = re.compile(r";\s+|\.\s+|\s+[–—]\s+")
MAX_SLOT_CLAUSES = 12


def _slot(text: str, stems: list[str]) -> str:
    """The clause of an evidence sentence that restates the claim, when the sentence lists
    several ("asthma clinic Monday mornings; diabetes review clinic Wednesday afternoons"):
    the one sharing strictly the most of the claim's words, at least two; else ""."""
    clauses = _CLAUSES.split(text)[:MAX_SLOT_CLAUSES]
    if len(clauses) < 2:
        return ""
    wanted = set(stems)
    scored = sorted(
        ((len(wanted & set(content_stems(c))), c) for c in clauses), key=lambda pair: -pair[0]
    )
    best, runner_up = scored[0][0], scored[1][0]
    return scored[0][1] if best >= 2 and best > runner_up else ""


SWAP_OVERLAP = 0.75


def _swapped(
    details: Details, sentence: EvidenceSentence | None, index: EvidenceIndex
) -> Failure | None:
    """The claim's one amount of a kind belongs to another sentence, while the sentence its
    words restate gives another amount of that kind ("the express train takes 25 minutes"
    where the train's sentence says 55 and the metro's 25)."""
    measured = [q for q in details.quantities if q.kind not in ("count", "date", "year", "ordinal")]
    if sentence is None or not measured:
        return None
    by_words, overlap = best_sentence(details.stems, [], index)
    if by_words is None or overlap < SWAP_OVERLAP:
        return None
    for quantity in measured:
        if sum(q.kind == quantity.kind for q in measured) != 1:
            continue
        same = [q for q in by_words.quantities if q.kind == quantity.kind]
        if same and not by_words.states(quantity) and not _inexact(quantity, index):
            return (
                "number_swapped",
                f"number {quantity.text}: {by_words.passage} says "
                f'{same[0].text} here ("{short(by_words.text)}"); {quantity.text} is '
                "said of something else",
                by_words,
            )
    return None


def an_hour_of(quantity: numbers.Quantity, index: EvidenceIndex) -> bool:
    """ "from 8 to 11 in the morning" against "08:00-11:00": a bare hour of an evidence time."""
    if quantity.kind != "count" or not 0 <= quantity.value <= 24:
        return False
    hour = int(quantity.value) * 60
    return any(hour in t.minutes or hour + 720 in t.minutes for t in index.clock)


def _name_failure(
    names: list[entities.Name], index: EvidenceIndex, text: str = ""
) -> Failure | None:
    """A name the evidence lacks: most of its words (``name_absent``), or one capitalised
    word of it (``name_part_absent``: "Attorney General of California" where the evidence
    names Nevada). A name the claim says is absent or denies ("there's no Rust SDK", "not
    Dennis Marks") is no claim that it exists."""
    part_absent: Failure | None = None
    if index.foreign() or foreign_words(text):
        return None  # names translate across languages ("Munich", "München"): not proof
    for name in names:
        if (
            name.text in COMMON_ABBREVIATIONS
            or name.guessed
            or denied(name, text)
            or _foreign_word(name)
            or name.text.lower() in UNITS  # "2 GB", "5 KM": a unit, not a name
        ):
            continue
        if entities.quote_in(name.text, index.normalized) or index.writes(name.text):
            continue  # "AB-1234" against "AB1234": a code written with other separators
        absent = [
            p
            for p in name.parts
            if len(p.strip(".")) > 1
            and p not in DECORATIONS
            and p not in UNITS
            and not index.has(p)
            and not _abbreviated(p, name, index)
            and not any(index.has(n) for n in _NICKNAMES.get(p, ()))
        ]
        if not absent or _abbreviation(name, index):
            continue
        if len(absent) * 2 >= len(name.parts):
            return "name_absent", f"name '{name.text}' not in evidence", None
        word = next((p for p in absent if len(p) > 2 and p not in STOPWORDS), None)
        if word is not None and part_absent is None:
            part_absent = (
                "name_part_absent",
                f"'{_as_written(word, name)}' of the name '{name.text}' is not in evidence",
                None,
            )
    return part_absent


_DENIAL = re.compile(
    r"(?:\bno|\bnot|n['’]t|\bnever|\bwithout|\bneither|\bnor)\W+"
    r"(?:\w+\W+){0,3}$",
    re.IGNORECASE,
)


def denied(name: entities.Name, text: str) -> bool:
    """Whether ``text`` negates ``name`` ("no Rust SDK", "not Dennis Marks", "X isn't")."""
    at = text.find(name.text)
    if at < 0:
        return negation.negated(text)
    return bool(_DENIAL.search(text[max(0, at - 60) : at])) or bool(
        re.match(
            r"\W*(?:is|are|was|were|does|do|did|has|have)\W+(?:not|n['’]t)\b|"
            r"\W*(?:isn|aren|wasn|weren|doesn|don|didn)['’]t\b",
            text[at + len(name.text) :],
            re.IGNORECASE,
        )
    )


def _as_written(part: str, name: entities.Name) -> str:
    return next(
        (
            w
            for w in name.text.split()
            if stem(w.lower().strip(".,'’")) == part or w.lower().startswith(part)
        ),
        part,
    )


def _abbreviated(part: str, name: entities.Name, index: EvidenceIndex) -> bool:
    """Whether a word of a name abbreviates words of the evidence: a capitals-only word
    ("UK" of "UK and Ireland") that is a common abbreviation, abbreviates a name of the
    evidence ("United Kingdom") or spells the initials of evidence words ("CFO" / "chief
    financial officer"); or a known abbreviation ("HQ" / "headquarters")."""
    token = next((w for w in name.text.split() if stem(w.lower().strip(".,")) == part), "")
    expansions = ABBREVIATIONS.get(token.lower().strip(".,"), ())
    if any(fold(e) in index.normalized for e in expansions):
        return True
    if not token.isupper():
        return False
    return (
        token in COMMON_ABBREVIATIONS
        or any(entities.abbreviates(token, other.text) for other in index.names())
        or index.spells_out(token)
    )


_FOREIGN_LETTERS = re.compile(r"[äöüßÄÖÜñÑçÇ]|[A-Za-z][a-z]*[àâèéêëîïôùûœ]")


DECORATIONS = frozenset(stem(w) for w in NAME_DECORATIONS)
_NICKNAMES: dict[str, tuple[str, ...]] = {
    stem(name): tuple(stem(other) for other in group if other != name)
    for group in NICKNAMES
    for name in group
}


def _foreign_word(name: entities.Name) -> bool:
    """A one-word name with letters English never writes ("Kündigungsfrist", "Señal"): maybe
    a common noun of another language (German capitalises every noun), so its absence from
    the evidence proves nothing; a name the evidence has without its accents was found
    already (stems fold accents)."""
    return " " not in name.text and _FOREIGN_LETTERS.search(name.text) is not None


def _abbreviation(name: entities.Name, index: EvidenceIndex) -> bool:
    """Whether a one-word name abbreviates a name of the evidence ("Amex")."""
    if " " in name.text:
        return False
    return any(entities.abbreviates(name.text, other.text) for other in index.names())


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""Failures of what a claim relates: polarity, quantifiers, conditions, limits, comparisons,
and who is credited with what.

The words of such a claim are all in the evidence; what fails is how they are related: a
negation or an opposite against the sentence the claim restates, "all" where it says "some", a
condition it leaves out, a comparison its amounts reverse, two names it never relates.

Why one module of this length: one failure test per relation (attribution, comparison,
polarity, quantifier, condition, names apart, swapped names), each a few short functions run
in order by :data:`guard.offline.registry.CLAIM_RULES` (stage ``relation``); they share the
clause alignment helpers here.
"""

from __future__ import annotations

import re

from guard.offline import (
    comparison,
    entities,
    negation,
    numbers,
    polarity,
    predicates,
    quantifiers,
)
from guard.offline.align import EvidenceIndex, EvidenceSentence, best_sentence, in_sentence
from guard.offline.claims import Claim, is_short_answer
from guard.offline.details import (
    COMMON_ABBREVIATIONS,
    DECORATIONS,
    Answer,
    Details,
    Failure,
    short,
)
from guard.offline.text import GENERIC, GENERIC_STEMS, STOPWORDS, content_stems, stem, word_set

ALIGN_FOR_POLARITY = 0.6
ALIGN_FOR_QUANTIFIER = 0.5
CONDITION_SUPPORT = 0.6
MAX_LIMITS = 4  # amounts of one condition checked
MIN_FOR_ONE_OUTSIDE = 4  # words of a negated claim before one may sit in another sentence
MAX_RELATED_NAMES = 3  # names of a claim related to its first (more are a list)
MIN_COVERED = 3  # content words of an evidence clause a claim must restate to keep its polarity


_UNIVERSAL = frozenset(
    {
        "all",
        "every",
        "always",
        "never",
        "none",
        "only",
        "each",
        "entire",
        "everyone",
        "everything",
        "anyone",
        "anything",
        "unlimited",
    }
)


_LIMITING = quantifiers.LIMITING


_CONDITION = re.compile(
    r"\b(?:if|unless|provided(?: that)?|as long as|only|for orders|except|"
    r"for (?:members|subscribers|holders|customers) )\b",
    re.IGNORECASE,
)


_ACRONYM = re.compile(r"[A-Z]{2,5}s?")  # "CEO", "APR": maybe short for words of the evidence
_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:ian|ese|ish|ean)$")
ATTRIBUTION_OVERLAP = 0.6
_REPORTING = frozenset(
    stem(w)
    for w in word_set("""
    said says told stated wrote noted confirmed confirms explained mentioned reported argued
    asked recommended recommends suggested suggests according claimed added
    """)
)


# a claim that credits someone: a reporting verb, "according to", someone's document
_CREDITS = re.compile(
    r"\b(?:said|says|say|told|tells|stated|states|wrote|writes|noted|notes|confirm\w*|"
    r"explain\w*|mention\w*|report\w*|argu\w*|ask\w*|recommend\w*|suggest\w*|"
    r"according|claim\w*|add\w*|point\w* out|found|find\w*|propos\w*|object\w*|"
    r"announc\w*|warn\w*|advis\w*|promis\w*|agree\w*|decid\w*|approv\w*|issu\w*|"
    r"appl(?:y|ied|ies)\w*|expect\w*|estimat\w*|measur\w*|test\w*|rat(?:ed|es)|"
    r"review\w*|memo|letter|comment\w*|minutes|audit\w*|predict\w*|"
    r"scheduled|plann\w*|fix\w*|reproduc\w*)\b|\w['’]s\b",
    re.IGNORECASE,
)


def _attribution(
    details: Details, sentence: EvidenceSentence | None, overlap: float, index: EvidenceIndex
) -> Failure | None:
    """The claim's words come from a passage that never names the one it credits them to,
    though another passage does ("Reviewer 1 pointed out ..." where only Reviewer 2's
    comments say so; "Dr Hughes suggested ..." where the letter saying so is Dr Nair's;
    "Marco, your account manager, said ..." where the engineer's comment says it)."""
    names = [n for n in details.names if any(len(p) > 1 for p in n.parts)]
    if sentence is None or not names or _fragment(details.text):
        return None  # "Dr Lindqvist, the cardiologist": who, without what they said
    naming = {n: index.naming(n) for n in names}
    foreign = [n for n in names if naming[n] and sentence.passage not in naming[n]]
    if len(foreign) != 1 or not (len(names) == 1 or foreign[0].guessed or foreign[0].labelled):
        return None  # several names, or none credited from elsewhere: not judged here
    name = foreign[0]
    if not _CREDITS.search(details.text):
        return None  # "not from the Instant Saver": a thing named, not someone credited
    said = [s for s in details.stems if not any(s in n.parts for n in names)]
    # who says it ("Our engineer Priya confirmed ...") is not what is said
    at = details.text.find(name.text)
    credit = (
        _REPORTING | set(content_stems(details.text[max(0, at - 30) : at]))
        if at >= 0
        else _REPORTING
    )
    said = [s for s in said if s not in credit] or said
    if not said or sum(in_sentence(s, sentence, index) for s in said) < (
        ATTRIBUTION_OVERLAP * len(said)
    ):
        return None  # the sentence does not say what the claim credits
    return (
        "attribution",
        f"{sentence.passage} says this, and never names '{name.text}' (\"{short(sentence.text)}\")",
        sentence,
    )


_SAID_BY = re.compile(
    r"^\W*(?:according to (?P<by>[\w'’ &-]{2,40}?),|(?P<who>[\w' &-]{2,40}?)\s+(?:has |have )?"
    r"(?:said|says|told|confirmed|confirms|wrote|writes|stated|states|explained|recommended|"
    r"recommends|suggested|suggests|argued|noted|notes|reported|mentioned|promised|agreed|"
    r"accepted|admitted|announced|warned|advised|asked|requested|approved|found|finds|"
    r"concluded|concludes|estimated|estimates|expects|expected|measured|proposed|proposes|"
    r"objected|issued|rated|rates|predicted|predicts)\b"
    # "TechWeekly's review puts ...", "the auditor's report found ...": who owns the document
    r"|(?P<owner>[\w &-]{2,40}?)['’]s\s+(?:own\s+)?(?:report|review|memo|letter|minutes|"
    r"audit|study|survey|test|tests|analysis|notes?|comments?|email|announcement|statement|"
    r"findings|assessment|spec(?:ification)?s?(?:\s+sheet)?)\b)",
    re.IGNORECASE,
)
_PERSONAL = frozenset(
    {"i", "we", "you", "he", "she", "they", "it", "this", "that", "there", "who", "which"}
)
MAX_CREDITED_PASSAGES = 50  # passages read for who a statement is credited to


def _credited(text: str, index: EvidenceIndex) -> Failure | None:
    """ "The landlord said the boiler would be replaced" where the document saying so is the
    letting agent's and another document is the landlord's: who the claim credits (a role or
    a name, before a reporting verb or after "according to") is named by another passage
    than the one that says what the claim reports."""
    match = _SAID_BY.match(text)
    if match is None:
        return None
    who_text = match.group("by") or match.group("who") or match.group("owner") or ""
    if set(who_text.lower().split()) & _PERSONAL:
        return None
    who = set(content_stems(who_text))
    reported = [s for s in content_stems(text[match.end() :]) if s not in who]
    sentence, share = best_sentence(reported, [], index)
    if sentence is None or share < ATTRIBUTION_OVERLAP or len(reported) < 2 or not who:
        return None
    words = {
        label: set(content_stems(t))
        for label, t in list(index.texts.items())[:MAX_CREDITED_PASSAGES]
    }
    if who <= words.get(sentence.passage, set()):
        return None  # the passage saying it names its author
    others = [label for label, stems in words.items() if who <= stems]
    if not others:
        return None  # the claim's author is named nowhere: not judged here
    return (
        "attribution",
        f'{sentence.passage} says this ("{short(sentence.text)}") and never names '
        f"'{who_text.strip()}', whom {others[0]} names",
        sentence,
    )


def _comparison(text: str, index: EvidenceIndex) -> Failure | None:
    found = comparison.reversed_comparison(text, index.passages)
    if found is None:
        return None
    holder = next(
        (s for s in index.sentences if s.passage == found.passage and found.amount in s.text), None
    )
    basis = "comparison_reversed" if found.passage else "comparison_self"  # its own amounts
    return basis, found.reason, holder


def _names_apart(names: list[entities.Name], index: EvidenceIndex, text: str) -> Failure | None:
    """A claim relating two names that no sentence mentions together."""
    distinct = {
        n.text: n
        for n in names
        if any(len(p) > 1 for p in n.parts)
        and not _DEMONYM.search(n.text)
        and not _ACRONYM.fullmatch(n.text)
    }
    if len(distinct) < 2 or len(distinct) > MAX_RELATED_NAMES or negation.negated(text):
        return None  # a long list of names, or "there is no X among Y", relates nothing
    # a guessed name ("Size L" opening a sentence) is related only if the evidence has it
    named = [
        n
        for n in distinct.values()
        if not n.guessed or all(index.has(p) for p in n.parts if len(p) > 1)
    ]
    if len(named) > 2:  # of a longer list, only names surely read as names
        named = [n for n in named if not n.guessed]
    for first, second in ((named[0], other) for other in named[1:]):
        if not _one_clause(text, first.text, second.text):
            continue  # "v3 uses OAuth ..., and returns ISO 8601 dates": a list relates nothing
        if not any(
            _mentions(first, s.scope) and _mentions(second, s.scope) for s in index.sentences
        ) and _same_passage(first, second, index):
            bridge = _bridged(first, second, index)
            return (
                "names_bridged" if bridge else "names_apart",
                f"names '{first.text}' and '{second.text}' never appear together in the evidence"
                + (f" (though the passage links them: {bridge})" if bridge else ""),
                None,
            )
    return None


def _one_clause(text: str, first: str, second: str) -> bool:
    """Whether one clause of ``text`` names both (a claim listing several things joined by
    commas and "and" relates only the names of one item)."""
    return any(first in c and second in c for c in _LIST_ITEM.split(text))


# where a claim's list of statements breaks: "...), moves ... and returns ..."
_LIST_ITEM = re.compile(
    r";|\)\s*,\s|,\s+(?:and|but|while|whereas)\s|\s(?:and|but)\s+(?=[a-z]{3,}s\b)"
)


MAX_BRIDGED = 4  # sentences of each name tried for a bridge between them
TITLE_WORDS = 4  # a passage opening with a sentence this short opens with its title
_THIRD_PERSON = re.compile(r"\b(?:he|she|they|it|his|her|their|its|this|these)\b", re.I)


def _bridged(first: entities.Name, second: entities.Name, index: EvidenceIndex) -> str:
    """How the passage links the two names across sentences ("" when it does not): a
    sentence about one names a thing a sentence about the other names too ("The Berlin team
    is part of Sales Europe. Sales Europe is headed by Maria Keller."), the next sentence goes
    on about it with a pronoun ("Tom Baker joined in Leeds. In 2022 he transferred to
    London."), or one name is the passage's title ("Paris store. We accept Visa."). Such a
    claim may chain what the passage says: its failure is a rule of its own
    (``names_bridged``), trusted only as far as labelled answers bear it out."""
    sentences = index.sentences
    own = set(first.parts) | set(second.parts)
    holders = [
        [i for i, s in enumerate(sentences) if _mentions(name, s.scope)][:MAX_BRIDGED]
        for name in (first, second)
    ]
    for i in holders[0]:
        for j in holders[1]:
            a, b = sentences[i], sentences[j]
            if a.passage != b.passage:
                continue
            if _titled(i, index) or _titled(j, index):
                return "one is its title"
            if abs(i - j) == 1 and _THIRD_PERSON.search(sentences[max(i, j)].text):
                return "the next sentence goes on with a pronoun"
            shared = _named_parts(a.text) & _named_parts(b.text) - own
            if shared:
                return f"both sentences name '{sorted(shared)[0]}'"
    return ""


def _titled(number: int, index: EvidenceIndex) -> bool:
    """Whether sentence ``number`` is a short title opening its passage."""
    sentence = index.sentences[number]
    opens = number == 0 or index.sentences[number - 1].passage != sentence.passage
    return opens and len(sentence.text.split()) <= TITLE_WORDS


def _named_parts(text: str) -> set[str]:
    return {p for n in entities.names(text) for p in n.parts if len(p) > 1}


def _same_passage(first: entities.Name, second: entities.Name, index: EvidenceIndex) -> bool:
    """Whether one passage names both: names from two documents may be combined by the
    answer ("a Canadian passport holder flying to Delhi")."""
    holders = [
        {s.passage for s in index.sentences if _mentions(name, s.scope)} for name in (first, second)
    ]
    if not holders[0] and not holders[1]:
        return True
    if not (holders[0] and holders[1]):  # one name nowhere, unless a code the evidence
        return not any(_code(n) and index.writes(n.text) for n in (first, second))  # glues
    return bool(holders[0] & holders[1])


def _code(name: entities.Name) -> bool:
    """A name with figures ("ICE 578", "Gate B12"): a code, maybe written without its space."""
    return any(ch.isdigit() for ch in name.text)


def _mentions(name: entities.Name, stems: frozenset[str]) -> bool:
    parts = [p for p in name.parts if len(p) > 1 and p not in DECORATIONS] or [
        p for p in name.parts if len(p) > 1
    ]
    present = sum(p in stems for p in parts)
    return present == len(parts) or (len(parts) >= 3 and present * 3 >= len(parts) * 2)


def _polarity(
    claim: Claim, sentence: EvidenceSentence | None, overlap: float, index: EvidenceIndex
) -> Failure | None:
    if (
        sentence is None
        or overlap < ALIGN_FOR_POLARITY
        or claim.short_answer
        or _fragment(claim.text)
    ):
        return None  # a verbless list item takes its polarity from its heading
    clause = _aligned_clause(claim.text, sentence.text)
    flip = negation.flipped(claim.text, clause) if clause is not None else None
    if flip is None:
        flip = negation.opposed(claim.text, sentence.text)
    if flip is None and clause is None:
        flip = _negation_added(claim.text, sentence, index)
    if flip is None:
        return None
    basis = "negation" if flip.startswith("negation") else "opposite"
    return basis, f'{flip} ({sentence.passage}: "{short(sentence.text)}")', sentence


def _clause_opposite(claim: Claim, index: EvidenceIndex) -> Failure | None:
    """A clause of a longer claim that says the opposite of the sentence it restates ("Orion
    is running behind schedule, unlike Vega, ..." against "Project Orion is two weeks ahead of
    schedule"): the claim as a whole matches no one sentence closely enough."""
    if claim.short_answer:
        return None
    clauses = [c for c in _CLAUSE.split(claim.text) if len(content_stems(c)) >= MIN_CLAUSE_STEMS]
    if len(clauses) < 2:
        return None
    for clause in clauses[:MAX_CLAUSES]:
        # aligned on its other words: its opposite word is, by design, not in the sentence
        stems = [s for s in content_stems(clause) if s not in negation.OPPOSITE]
        sentence, overlap = best_sentence(stems, [], index)
        if sentence is None or overlap < ALIGN_FOR_POLARITY:
            continue
        flip = negation.opposed(clause, sentence.text)
        if flip is not None:
            return "opposite", f'{flip} ({sentence.passage}: "{short(sentence.text)}")', sentence
    return None


MIN_CLAUSE_STEMS = 2  # content words of a clause read on its own
MAX_CLAUSES = 6  # clauses of one claim read on their own


def _negation_added(claim: str, sentence: EvidenceSentence, index: EvidenceIndex) -> str | None:
    """A negated claim whose words one sentence states (all but one, which the evidence has
    elsewhere) without any negation, plain or implicit ("The Oberoi family is not involved in
    any hotel company" against "... is famous for its involvement in hotels"): the claim
    denies what the sentence says."""
    if not negation.negated(claim) or negation.negated(sentence.text):
        return None
    if negation.IMPLICIT_NEGATIVE.search(sentence.text):
        return None
    stems = [s for s in content_stems(claim) if s not in GENERIC_STEMS]
    if len(stems) < 2 or not all(index.has(s) for s in stems):
        return None
    outside = sum(not in_sentence(s, sentence, index) for s in stems)
    if outside > (1 if len(stems) >= MIN_FOR_ONE_OUTSIDE else 0):
        return None
    return "negation flipped: the claim is negated, the evidence states it"


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


_UNBOUNDED = re.compile(
    r"\b(?:lifetime|lifelong|unlimited|forever|permanent(?:ly)?|"
    r"indefinitely|never expires?|no (?:time )?limit)\b",
    re.IGNORECASE,
)


def _unbounded(text: str, sentence: EvidenceSentence | None, overlap: float) -> Failure | None:
    """ "a lifetime warranty" against "a 2-year limited warranty": no limit where the sentence
    the claim restates sets one."""
    match = _UNBOUNDED.search(text)
    if match is None or sentence is None or overlap < ALIGN_FOR_QUANTIFIER:
        return None
    limit = next((q for q in sentence.quantities if q.kind in ("duration", "count")), None)
    if limit is None or negation.negated(text):
        return None
    return (
        "unbounded",
        f"the claim says '{match.group(0)}' where {sentence.passage} says {limit.text}",
        sentence,
    )


_SUBJECTS = frozenset({"i", "we", "you", "it", "they", "he", "she", "there", "this", "that"})


def _fragment(text: str) -> bool:
    """A list item without a verb or a subject ("Damage from power surges")."""
    return is_short_answer(text) and not _SUBJECTS & set(re.findall(r"[a-z]+", text.lower()))


# "not everyone", "not all": a limit, not a universal; "only until the day before", "only
# if approved": a time or a condition the claim keeps, not "only" of a noun
_NOT_UNIVERSAL = re.compile(
    r"\b(?:not|n't)\s+(?:quite\s+)?(?:all|every\w*|always|each|any\w*)\b"
    r"|\bonly\s+(?:until|till|before|after|if|when|while|within|during|between|from|once|on|"
    r"in|at|by|with|for)\b"
)
# "every 8 hours", "every other day": a frequency, not a universal
_EVERY_SO_OFTEN = re.compile(
    r"\bevery\s+(?:\d|other\b|few\b|second\b|third\b|two\b|three\b|four\b|six\b|twelve\b)"
)


def _quantifier(
    text: str, sentence: EvidenceSentence | None, overlap: float, index: EvidenceIndex
) -> Failure | None:
    if sentence is None or overlap < ALIGN_FOR_QUANTIFIER:
        return None
    plain = _EVERY_SO_OFTEN.sub(" ", _NOT_UNIVERSAL.sub(" ", text.lower()))
    claim_words = set(re.findall(r"[a-z]+", plain))
    evidence_words = set(re.findall(r"[a-z]+", sentence.text.lower()))
    universal = (claim_words & _UNIVERSAL) - evidence_words
    limiting = (evidence_words & _LIMITING) - claim_words
    if universal and limiting and not evidence_words & _UNIVERSAL:  # "all orders ..., most"
        return (
            "quantifier",
            f"the claim says '{sorted(universal)[0]}' where "
            f"{sentence.passage} says '{sorted(limiting)[0]}'",
            sentence,
        )
    return None


def _contrary(
    claim: Claim, stems: list[str], index: EvidenceIndex, best: EvidenceSentence | None
) -> Failure | None:
    """Another sentence about the same thing that says the opposite ("open on Sundays" against
    "It is closed on Sundays")."""
    about = set(stems) - GENERIC
    for number in index.candidates(stems)[:6]:
        sentence = index.sentences[number]
        clause = _covered_clause(about, sentence.text)
        if (
            clause is not None
            and negation.negated(clause)
            and not negation.negated(claim.text)
            and not negation.prefixed_denial(claim.text, clause)
        ):
            return (
                "negation",
                f'negation flipped: {sentence.passage} says "{short(clause)}"',
                sentence,
            )
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


def _dropped_condition(
    stems: list[str], answer: frozenset[str], sentence: EvidenceSentence | None, share: float
) -> str | None:
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
        if (
            len(condition) >= 2
            and len(condition) * 2 >= len(stated)
            and main
            and len(main & set(stems)) * 2 >= len(main)
        ):
            return (
                f'leaves out the condition "{short(condition_text.strip(), 60)}" '
                f"({sentence.passage})"
            )
    return None


_CONDITIONAL_CLAUSE = re.compile(r";\s*")


def _condition_and_main(clause: str) -> tuple[str, str] | None:
    """The condition of a clause and what it conditions: "main if condition", or "If
    condition, main"."""
    match = _CONDITION.search(clause)
    if match is None:
        return None
    before = clause[: match.start()]
    if not content_stems(before.split(".")[-1]):  # the condition opens the sentence
        comma = clause.find(", ", match.end())
        if comma < 0:
            return None
        return clause[match.start() : comma], clause[comma + 2 :]
    return clause[match.start() :], before


SWAP_ALIGNMENT = 0.6  # of the claim's other words, the share its sentence must restate
MAX_SWAP_NAMES = 8  # names of a claim tried as swapped


def _name_swapped(claim: str, details: Details, index: EvidenceIndex) -> Failure | None:
    """A name of the evidence in another name's slot: the sentence that restates the rest of
    the claim names, beside the same word, someone or something the claim never names
    ("the data controller is Stripe Payments" where it says "The data controller is Northwind
    Retail Ltd" and Stripe is the processor)."""
    claimed = {p for n in details.names for p in n.parts}
    for name in details.names[:MAX_SWAP_NAMES]:
        if (
            name.guessed
            or not all(index.has(p) for p in name.parts)
            or not _distinct(name.parts, set())
        ):
            continue
        rest = [s for s in details.stems if s not in name.parts]
        sentence, share = best_sentence(rest, [], index)
        if (
            sentence is None
            or share < SWAP_ALIGNMENT
            or len(rest) < 2
            or name.named_in(sentence.text)
            or 2 * sum(in_sentence(p, sentence, index) for p in name.parts) >= len(name.parts)
        ):
            continue
        slot = _beside(claim, name.text)
        for other in entities.names(sentence.text)[:MAX_SWAP_NAMES]:
            if other.guessed or 2 * len(_distinct(other.parts, claimed)) <= len(other.parts):
                continue
            if other.text in COMMON_ABBREVIATIONS:
                continue  # "CET", "UK": a zone or a region beside a name, not one in its slot
            if slot and slot & _beside(sentence.text, other.text):
                return (
                    "name_swapped",
                    f"'{name.text}' where {sentence.passage} says "
                    f"'{other.text}' (\"{short(sentence.text)}\"); '{name.text}' is "
                    "said of something else",
                    sentence,
                )
    return None


def _distinct(parts: tuple[str, ...], claimed: set[str]) -> list[str]:
    """The words of a name that tell it apart ("Stripe", "Payments", not "Ltd" or "US")."""
    return [p for p in parts if len(p) > 2 and p not in STOPWORDS and p not in claimed]


def _beside(text: str, name: str) -> set[tuple[int, str]]:
    """The content words just before and just after ``name`` in ``text``."""
    at = text.find(name)
    if at < 0:
        return set()
    before = content_stems(text[max(0, at - 60) : at])
    after = content_stems(text[at + len(name) : at + len(name) + 60])
    return ({(-1, before[-1])} if before else set()) | ({(1, after[0])} if after else set())


_BY = re.compile(
    r"\b(?P<verb>[a-z]+(?:ed|en|wn|ne|lt|nt))\s+(?:\w+\s+)?by\s+(?:(?:the|your|a|an|our|their|its)\s+)?"
    r"(?P<agent>[^,.;:()!?]{2,60})",
    re.IGNORECASE,
)
AGENT_ALIGNMENT = 0.6  # of the claim's words besides its agent, the share its sentence must have


def _agents(text: str) -> dict[str, set[str]]:
    """Verb stem -> the words of who does it, for each "<verb> by <agent>" of ``text``."""
    found: dict[str, set[str]] = {}
    for match in _BY.finditer(text):
        agent = set(content_stems(match.group("agent")))
        if agent:
            found.setdefault(stem(match.group("verb")), set()).update(agent)
    return found


def _agent_swapped(claim: str, details: Details, index: EvidenceIndex) -> Failure | None:
    """Someone else does it: the sentence that restates the rest of the claim says "<verb>
    by" another agent the claim never names, while the claim's agent is in the evidence
    elsewhere ("expense claims are approved by your shift supervisor" where "Expense claims
    are approved by your cost-centre manager" and the supervisor signs off overtime)."""
    claimed = _agents(claim)
    if not claimed:
        return None
    agent_words = set().union(*claimed.values())
    rest = [s for s in details.stems if s not in agent_words]
    sentence, share = best_sentence(rest, [], index)
    if sentence is None or share < AGENT_ALIGNMENT or len(rest) < 2:
        return None
    said = _agents(sentence.text)
    for verb, agent in claimed.items():
        other = said.get(verb)
        if not other or other & agent or not all(index.has(w) for w in agent):
            continue
        if any(in_sentence(w, sentence, index) for w in agent):
            continue  # "founded by A and B": the sentence names the claim's agent too
        return (
            "agent_swapped",
            f'{sentence.passage} says who does it: "{short(sentence.text)}"; the claim credits '
            "someone it names elsewhere",
            sentence,
        )
    return None


def _clause_polarity(claim: Claim, stems: list[str], index: EvidenceIndex) -> Failure | None:
    if claim.short_answer or _fragment(claim.text):
        return None  # a verbless list item takes its polarity from its heading
    flip = polarity.flipped_clause(claim.text, index, stems)
    return None if flip is None else ("negation_clause", flip[0], flip[1])


def _denied(claim: Claim, index: EvidenceIndex) -> Failure | None:
    if claim.short_answer or _fragment(claim.text):
        return None  # a verbless list item takes its polarity from its heading
    found = predicates.denied(claim.text, index)
    return None if found is None else ("negation_predicate", found[0], found[1])


def _noun_quantifier(text: str, stems: list[str], index: EvidenceIndex) -> Failure | None:
    found = quantifiers.shifted(text, index, stems)
    return None if found is None else ("quantifier_limited", found[0], found[1])


def dropped_condition(
    text: str,
    stems: list[str],
    answer: frozenset[str],
    sentence: EvidenceSentence | None,
    share: float,
) -> str | None:
    """Why the claim leaves out a condition of the sentence it restates, or None (a claim
    with a condition of its own keeps one)."""
    if _CONDITION.search(text):
        return None
    return _dropped_condition(stems, answer, sentence, share)


NARROWED_SUPPORT = 0.9  # share of the claim's words the conditional sentence must have


def narrowed_condition(
    text: str, answer: Answer, sentence: EvidenceSentence | None, share: float
) -> str | None:
    """Why the claim restates a condition without the limit the evidence sets on it, or None
    ("refunded in full if you close your account" against "refunded in full if you close the
    account within 30 days of the fee being charged"); a limit the answer states anywhere
    is kept."""
    if sentence is None or share < NARROWED_SUPPORT or not _CONDITION.search(text):
        return None
    claimed = numbers.extract(text)
    for clause in _CONDITIONAL_CLAUSE.split(sentence.text):
        split = _condition_and_main(clause)
        if split is None:
            continue
        condition = split[0]
        for limit in numbers.extract(condition)[:MAX_LIMITS]:
            if any(numbers.matches(c, limit) for c in claimed) or answer.grounds(limit):
                continue
            return (
                f'leaves out "{limit.text}" of the condition "{short(condition.strip(), 60)}" '
                f"({sentence.passage})"
            )
    return None

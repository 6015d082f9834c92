"""What the evidence binds to the phrase a question asks about, against what the answer puts
there.

A question often ends on the phrase whose object it asks for: "... a fantasy film directed by
whom?", "... and is owned by who?", "... best known for what cantata?", "... is officially
known as?". Where the evidence writes that phrase ("directed by Robert Zemeckis and written by
Neil Gaiman"), what follows it, up to the next comma or clause, is what the evidence binds to
it. An answer that restates the phrase (or is a short answer) and names nothing of any such
binding, while the names it gives are in the evidence, puts an entity from the evidence into a
slot the evidence fills with another: "Neil Gaiman directed Beowulf". The failure names the
sentence and the binding.

Left alone: a question without such a trailing phrase; evidence that never writes it, or whose
binding has no words (a bare year is the detail checks' business); a claim that does not
restate the phrase (it may answer something else, which this check cannot show); a negated
claim; an answer whose words are not in the evidence (that is an absence, shown by other
checks); an answer naming anything the evidence binds to the phrase anywhere (several
bindings of one phrase are alternatives, not contradictions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guard.offline import negation
from guard.offline.align import EvidenceIndex, EvidenceSentence, in_sentence, related
from guard.offline.details import short
from guard.offline.text import STOPWORDS, content_stems, stem

# "... directed by whom?", "... based in which city?", "... known for what cantata?"
_TRAILING = re.compile(
    r"\b(?P<head>[A-Za-z][\w-]*)\s+(?P<prep>by|for|as|of|in|from|on|at|to|with)\s+"
    r"(?:who|whom|what|which)\b(?:\s+[\w'’-]+){0,4}\s*\?\s*$",
    re.IGNORECASE,
)
# "... officially known as?", "... sometimes called?"
_BARE = re.compile(r"\b(?P<head>[A-Za-z][\w-]*)\s+(?P<prep>as|called|named)\s*\?\s*$", re.I)
# "Which state ...?", "In what city ...?": evidence writes "the state of Hawaii"
_KIND = re.compile(
    r"\W*(?:in |at |from |of )?(?:which|what)\s+(?P<head>city|state|country|county|province|"
    r"region|town|village|island|kingdom|borough|district)(?P<prep>)\b",
    re.IGNORECASE,
)
# where a binding ends: punctuation, a bracket, or the next "<verb> by" / "and <verb>ed"
_END = re.compile(
    r"[,;:()\[\]!?]|\.(?:\s|$)|\s(?:but|while|who|which|that|where|when)\s|"
    r"\s(?:and\s+)?[a-z]+(?:ed|en)\s+(?:by|in|for|as)\s",
)
MAX_BINDING_WORDS = 8  # words of a binding read, at most
MAX_SENTENCES = 200  # evidence sentences searched for the phrase
MIN_TYPO = 5  # letters of a word before one dropped letter is read as a typo


@dataclass(frozen=True)
class Cue:
    """The phrase a question asks about: its head word ("directed") and the word after it
    ("by"), or ("known", "as") for "known as?"."""

    head: str
    prep: str

    @property
    def text(self) -> str:
        return f"{self.head} {self.prep}"

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(rf"\b(?P<word>[A-Za-z][\w-]*)\s+{re.escape(self.prep)}\s+", re.I)


@dataclass(frozen=True)
class Binding:
    """What one evidence sentence writes after the cue."""

    text: str
    stems: frozenset[str]
    sentence: EvidenceSentence


def cue_of(question: str) -> Cue | None:
    """The phrase ``question`` ends on and asks the object of ("directed by"), or the kind
    it opens asking for ("Which state ...?": "state of"), or None."""
    match = _TRAILING.search(question) or _BARE.search(question) or _KIND.match(question)
    if match is None:
        return None
    head = match.group("head")
    if head.lower() in STOPWORDS or not head.islower():
        return None  # "... is of which nationality?", "... Ash Morgan in what series?"
    return Cue(head.lower(), match.group("prep").lower() or "of")


def bindings(cue: Cue, index: EvidenceIndex) -> list[Binding]:
    """Every binding of ``cue`` in the evidence: the words after "<head> <prep>" up to the
    clause's end, where the head is the cue's word or a close form of it. Read once per
    evidence and cue: every claim of an answer asks for the same ones."""
    key = (id(index), cue)
    cached = _READ.get(key)
    if cached is not None and cached[0] is index:
        return cached[1]
    found = _read(cue, index)
    if len(_READ) >= MAX_CACHED:
        _READ.clear()
    _READ[key] = (index, found)
    return found


# (id of the index, cue) -> (the index itself, so a reused id is never a hit; its bindings)
_READ: dict[tuple[int, Cue], tuple[EvidenceIndex, list[Binding]]] = {}
MAX_CACHED = 8


def _read(cue: Cue, index: EvidenceIndex) -> list[Binding]:
    head = stem(cue.head)
    found: list[Binding] = []
    for sentence in index.sentences[:MAX_SENTENCES]:
        if cue.prep not in sentence.text.lower():
            continue  # the cheap test first
        for match in cue.pattern.finditer(sentence.text):
            if not related(stem(match.group("word")), head):
                continue
            text = _clause(sentence.text[match.end() :])
            stems = frozenset(content_stems(text))
            if stems:
                found.append(Binding(text, stems, sentence))
    return found


def _clause(text: str) -> str:
    end = _END.search(text)
    clause = text[: end.start()] if end is not None else text
    return " ".join(clause.split()[:MAX_BINDING_WORDS])


def misbound(
    claim: str, short_answer: bool, question: str, index: EvidenceIndex, asked: frozenset[str]
) -> tuple[str, EvidenceSentence] | None:
    """Why the answer ``claim`` puts into the question's cue something the evidence does not
    bind to it, with the binding's sentence; or None. ``asked`` holds the question's stems."""
    cue = cue_of(question)
    if cue is None or negation.negated(claim):
        return None
    stems = content_stems(claim)
    kind = cue.prep == "of" and _KIND.match(question) is not None
    if not (short_answer or kind) and not any(related(s, stem(cue.head)) for s in stems):
        return None  # the claim does not restate the phrase asked about
    answer = [s for s in stems if s not in asked and not any(related(s, a) for a in asked)]
    if not answer or not all(index.has(s) for s in answer):
        return None
    # a binding that only restates the question ("based on a Russian folk tale", asked
    # "based on what Russian folk tale?") tells nothing
    bound = [b for b in bindings(cue, index) if _informative(b, asked)]
    if not bound or any(_overlaps(answer, b.stems) for b in bound):
        return None
    # the answer speaks of the binding's sentence (a name no sentence binding the phrase
    # mentions may be an alias of the bound one, said elsewhere)
    # (a place asked by its kind, "which state", has no alias to fear)
    beside = [b for b in bound if kind or any(in_sentence(s, b.sentence, index) for s in answer)]
    if not beside:
        return None
    first = beside[0]
    return (
        f"{first.sentence.passage} binds '{cue.text}' to '{first.text}' "
        f'("{short(first.sentence.text)}"); the answer puts '
        f"'{_written(answer, claim)}' there",
        first.sentence,
    )


def _informative(binding: Binding, asked: frozenset[str]) -> bool:
    return any(not any(_near(s, a) for a in asked) for s in binding.stems)


def _near(a: str, b: str) -> bool:
    """The same word, a close form, or a long word with one letter dropped ("Rusian" for
    "Russian": questions have typos)."""
    if a == b or related(a, b):
        return True
    short_, long_ = sorted((a, b), key=len)
    if len(short_) < MIN_TYPO or len(long_) - len(short_) != 1:
        return False
    return any(long_[:i] + long_[i + 1 :] == short_ for i in range(len(long_)))


def _overlaps(answer: list[str], bound: frozenset[str]) -> bool:
    return any(a in bound or any(related(a, b) for b in bound) for a in answer)


def _written(stems: list[str], text: str) -> str:
    """The stretch of ``text`` from the first to the last word behind ``stems``."""
    spans = [
        (m.start(), m.end())
        for m in re.finditer(r"[\w'’-]+", text)
        if any(stem(part) in stems for part in m.group().split("-"))
    ]
    if not spans:
        return " ".join(stems)
    return text[spans[0][0] : spans[-1][1]]

"""Questions that offer a choice ("..., David Lee Roth or Cia Berg?"): which option the
evidence says the asked thing of, against the option the answer picks.

The question names two options around "or"; the rest of its content words are what it asks
of them (the predicate: "inducted into the Rock and Roll Hall of Fame", "the largest private
hospital in Washington"). Each evidence sentence speaks of the option it names, or, naming
none, of the option the sentence before spoke of (encyclopaedic text names its subject once,
then says "he" or "the hospital"). When the predicate is stated in sentences about exactly one
option, and the answer's first claim naming a single option names the other one, the answer
picks the side the evidence does not support: a failure naming the sentence that says it of
the option the answer passed over.

Left alone: orderings in time ("who was born first, A or B?": :mod:`guard.offline.ordering`
compares the dates); a predicate the evidence states of both options or of neither (a
comparison it does not state in words: "which band has more members"); a sentence naming
both options; a negated claim ("A was never inducted" picks nobody); a claim naming both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guard.offline import entities, negation
from guard.offline.align import EvidenceIndex, EvidenceSentence, in_sentence
from guard.offline.details import short
from guard.offline.text import GENERIC_STEMS, STOPWORDS, content_stems, stem

PREDICATE_SHARE = 0.75  # of the predicate's words, the share one sentence must state
MAX_SENTENCES = 200  # evidence sentences read
_ORDERING = re.compile(
    r"\b(?:first|earlier|earliest|older|oldest|younger|youngest|later|latest|last|before|"
    r"after|born)\b",
    re.IGNORECASE,
)
_JOINERS = {
    "or": re.compile(r"\s+or\s+", re.IGNORECASE),
    "and": re.compile(r"\s+and\s+", re.IGNORECASE),
}


@dataclass(frozen=True)
class Option:
    """One option of the question: its name and the stems that tell it from the other."""

    name: str
    stems: frozenset[str]

    def named_by(self, stems: set[str] | frozenset[str]) -> bool:
        return self.stems <= stems


def options(question: str, joiner: str = "or") -> tuple[Option, Option] | None:
    """The two named options a question offers around "or" (or the two names a text joins
    with ``joiner`` "and"), or None."""
    if _ORDERING.search(question):
        return None
    for match in _JOINERS[joiner].finditer(question):
        before = _run(question[: match.start()], backwards=True)
        after = _run(question[match.end() :])
        a, b = _words(before), _words(after)
        a_only, b_only = a - b, b - a
        if a_only and b_only:
            return Option(" ".join(before), a_only), Option(" ".join(after), b_only)
    return None


_NAME_JOINERS = frozenset({"of", "the", "de", "la", "del", "von", "van", "for", "&"})


def _run(text: str, *, backwards: bool = False) -> list[str]:
    """The capitalised words (joined by "of", "the", ...) that open ``text``, or end it when
    ``backwards``, up to the first other word or punctuation; without the stop words that
    open a sentence ("Are", "Both", "Yes")."""
    tokens = text.split()
    run: list[str] = []
    for token in reversed(tokens) if backwards else tokens:
        word = token.strip(",.;:!?\"'“”()")
        closed = token[-1:] in ",.;:!?)" if token else False
        if backwards and closed and run:
            break  # "Fame, David Lee Roth": the comma ends the name before it
        if not word or not (word[:1].isupper() or (word.lower() in _NAME_JOINERS and run)):
            break
        run.append(word)
        if closed and not backwards:
            break
    if backwards:
        run.reverse()
    while run and run[-1].lower() in _NAME_JOINERS:
        run.pop()
    while run and run[0].lower() in STOPWORDS:
        run.pop(0)
    return run


def _words(run: list[str]) -> frozenset[str]:
    return frozenset(s for s in content_stems(" ".join(run)) if s not in STOPWORDS)


def _stems(name: entities.Name) -> frozenset[str]:
    return frozenset(s for s in content_stems(name.text) if s not in STOPWORDS)


def predicate(question: str, pair: tuple[Option, Option]) -> list[str]:
    """What the question asks of the options: its content words besides theirs."""
    named = pair[0].stems | pair[1].stems
    for option in pair:
        named |= {stem(w) for w in option.name.split()}
    return [s for s in content_stems(question) if s not in named and s not in GENERIC_STEMS]


def said_of(
    pair: tuple[Option, Option], asked: list[str], index: EvidenceIndex
) -> tuple[Option, EvidenceSentence] | None:
    """The one option the evidence states the predicate of, with the sentence; None when it
    states it of both, of neither, or in a sentence naming both."""
    if not asked:
        return None
    found: dict[str, tuple[Option, EvidenceSentence]] = {}
    current: Option | None = None
    for sentence in index.sentences[:MAX_SENTENCES]:
        named = [o for o in pair if o.named_by(sentence.stems)]
        if len(named) == 1:
            current = named[0]
        states = sum(in_sentence(s, sentence, index) for s in asked) >= PREDICATE_SHARE * len(asked)
        if not states:
            continue
        if len(named) > 1 or current is None:
            return None  # said of both at once, or of no option named yet
        found.setdefault(current.name, (current, sentence))
    return next(iter(found.values())) if len(found) == 1 else None


def wrong_choice(
    claims: list[str], question: str, index: EvidenceIndex
) -> tuple[int, str, EvidenceSentence] | None:
    """The claim (its position) of the answer that picks the option the evidence does not
    state the question's predicate of, the reason and the sentence; or None."""
    pair = options(question)
    if pair is None:
        return None
    picked = _first_pick(claims, pair)
    if picked is None:
        return None
    position, option = picked
    holder = said_of(pair, predicate(question, pair), index)
    if holder is None or holder[0] is option:
        return None
    other, sentence = holder
    return (
        position,
        f"the question asks which of {pair[0].name} or {pair[1].name}; {sentence.passage} says "
        f'it of {other.name} ("{short(sentence.text)}"), the answer picks {option.name}',
        sentence,
    )


def _first_pick(claims: list[str], pair: tuple[Option, Option]) -> tuple[int, Option] | None:
    """The first claim naming exactly one option, and that option (None when that claim is
    negated: it picks nobody)."""
    for position, claim in enumerate(claims):
        stems = set(content_stems(claim))
        named = [o for o in pair if o.named_by(stems)]
        if not named:
            continue
        if len(named) > 1 or negation.negated(claim):
            return None
        return position, named[0]
    return None

"""Who did it: the doer an active claim credits against the doer the evidence names.

"Sarah Manninen directed a film" against "The Prince and Me is a 2004 romantic comedy film
directed by Martha Coolidge"; "The Assyrians invented the type of script" against
"Cuneiform script ... was invented by the Sumerians". The claim names a doer, then the act
("directed", "invented"), then what was acted on. An evidence sentence that writes the same
act as "<act> by <someone>" near a word of what the claim says was acted on names its doer;
when that doer is not the claim's, and no sentence of the evidence puts the claim's doer
beside that act, the claim credits the act to someone the evidence does not
(``doer_misbound``, with the sentence that names the doer).

Left alone (the passive form, "was directed by X", is :mod:`guard.offline.relations`'
``agent_swapped``): a claim whose doer is no name ("It was", "The company"); a negated
claim; an act the evidence writes actively of the claim's doer anywhere ("Coolidge, who
directed ..."); an evidence doer that shares a word with the claim's ("founded by A and B"
for "B founded it").
"""

from __future__ import annotations

import re

from guard.offline import entities, negation
from guard.offline.align import EvidenceIndex, EvidenceSentence, related
from guard.offline.details import short
from guard.offline.rules import AnswerView, Finding, Placed
from guard.offline.text import GENERIC_STEMS, content_stems, stem

# "Sarah Manninen (also) directed a film", "The Assyrians invented the script"
_ACTIVE = re.compile(
    r"^\W*(?P<doer>[^,;:()]{2,60}?)\s+(?:(?:has|have|had|also|once|later|first|originally|"
    r"actually|himself|herself|themselves|really)\s+){0,2}(?P<act>[a-z]{3,}ed)\s+"
    r"(?P<object>[^,;:()]{2,120})",
)
# "directed by Martha Coolidge", "invented by the Sumerians", "Founded in 1379 by William"
_BY = re.compile(
    r"\b(?P<act>[a-z]{3,}ed)\s+(?:(?:in|on|at)\s+[\w-]+\s+)?by\s+(?:the\s+)?"
    r"(?P<doer>[^,.;:()!?]{2,60})",
    re.IGNORECASE,
)
_PASSIVE = re.compile(r"\b(?:was|were|is|are|be|been|being|get|got)$", re.IGNORECASE)
MAX_SENTENCES = 200  # evidence sentences read
NEAR_WORDS = 6  # words before an evidence act in which its doer is looked for


def misbound(claim: str, index: EvidenceIndex) -> tuple[str, EvidenceSentence] | None:
    """Why ``claim`` credits its act to a doer the evidence does not, with the sentence
    naming the evidence's doer; or None."""
    match = _ACTIVE.match(claim)
    if match is None or negation.negated(claim):
        return None
    doer_text = match.group("doer")
    if _PASSIVE.search(doer_text) or not entities.names(doer_text, whole_answer=True):
        return None
    doer = {s for s in content_stems(doer_text) if s not in GENERIC_STEMS}
    act = stem(match.group("act"))
    acted_on = [s for s in content_stems(match.group("object")) if s not in GENERIC_STEMS]
    if not doer or not acted_on or _credited(doer, act, index):
        return None
    for sentence in index.sentences[:MAX_SENTENCES]:
        for found in _BY.finditer(sentence.text):
            if stem(found.group("act").lower()) != act:
                continue
            named = set(content_stems(_doer(found.group("doer"))))
            near = content_stems(sentence.text[: found.start()] + sentence.text[found.end() :])
            if _shares(named, doer) or not any(_in(s, near) for s in acted_on):
                continue
            return (
                f"{sentence.passage} says it was {found.group('act')} by "
                f"{short(_doer(found.group('doer')), 50)} "
                f'("{short(sentence.text)}"), not by {doer_text.strip()}',
                sentence,
            )
    return None


def _credited(doer: set[str], act: str, index: EvidenceIndex) -> bool:
    """Whether some evidence sentence puts the claim's doer beside the act: just before it
    ("Coolidge directed", "Coolidge, who directed") or after its "by"."""
    for sentence in index.sentences[:MAX_SENTENCES]:
        if not doer <= sentence.stems:
            continue
        for found in _WORD.finditer(sentence.text):
            if not related(act, stem(found.group().lower())):
                continue
            by = _BY.match(sentence.text, found.start())
            if by is not None:
                if _shares(set(content_stems(_doer(by.group("doer")))), doer):
                    return True
                continue
            before = sentence.text[: found.start()].split()[-NEAR_WORDS:]
            if _shares(set(content_stems(" ".join(before))), doer):
                return True
    return False


_WORD = re.compile(r"[A-Za-z]{3,}")


_DOER_JOINERS = frozenset({"and", "of", "the", "de", "van", "von", "&"})


def _doer(written: str) -> str:
    """The doer after "by", up to its first lower-case word past the first that joins no
    name ("Pieter Maes and starring ...": "Pieter Maes"; "scribes of the Nile Delta")."""
    words = written.split()
    for at, word in enumerate(words[1:], 1):
        if word[:1].islower() and word.lower() not in _DOER_JOINERS:
            words = words[:at]
            break
    while len(words) > 1 and words[-1].lower() in _DOER_JOINERS:
        words.pop()
    return " ".join(words)


def _shares(named: set[str], doer: set[str]) -> bool:
    return any(_in(s, list(named)) for s in doer)


def _in(word: str, stems: list[str]) -> bool:
    return any(word == s or related(word, s) for s in stems)


def checked(view: AnswerView) -> list[Placed]:
    """Each undecided or supported claim that credits its act to a doer the evidence does
    not, failed as ``doer_misbound`` (read after the question's slots, whose
    ``slot_misbound`` says the same of an answer more precisely)."""
    out: list[Placed] = []
    for position in view.open():
        found = misbound(view.results[position].claim, view.index)
        if found is not None:
            out.append((position, Finding("doer_misbound", found[0], found[1])))
    return out

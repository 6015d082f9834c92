"""Ranks a claim gives ("the largest mall in South Texas", "the best kickboxer in the world",
"the first band founded") against the ranks the evidence gives.

A claim that ranks something at the top with a superlative (or "first", "last") says what
the evidence must say too, of the same thing. The evidence's own uses of the rank word are
read with the words after it ("largest mall in south Texas") and the subject of their
sentence (the name it opens with, or, for "He ..." / "The mall ...", the name the sentence
before opened with). The claim is ``rank_raised`` when

- the evidence writes the rank of the claim's subject (or, for a claim without a subject, of
  anything) only lowered: "2nd largest", "second-largest", "one of the largest";
- or the evidence writes it, unlowered, only in sentences about another named subject, and the
  claim's subject is named elsewhere in the evidence but never beside it.

Left alone: an evidence that never writes the rank word before those words (a rank computed
from amounts, "the largest share at 92 GB", is the arithmetic checks' business); a lowered
rank in the claim ("the second-largest"); a negated claim; a rank whose sentence subjects are
unclear (a sentence opening neither with a name nor with a pronoun or "The <noun>").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from guard.offline import entities, negation
from guard.offline.align import EvidenceIndex, EvidenceSentence, related
from guard.offline.details import short
from guard.offline.text import GENERIC_STEMS, content_stems, stem, word_set

# a superlative, "first"/"last", or "most <adjective>"; what follows it up to the clause's end
_RANK = re.compile(
    r"\b(?P<word>(?:most|least)\s+[a-z]{4,}|[a-z]{2,}est|best|worst|first|last)\b"
    r"(?P<after>[^.,;:!?()\[\]\"“”]{0,80})",
    re.IGNORECASE,
)
# words ending in -est that rank nothing
_NOT_RANKS = word_set(
    """interest request test forest guest west rest honest modest suggest manifest harvest
    contest protest invest digest chest nest pest quest arrest crest priest attest detest
    southwest northwest midwest earnest conquest inquest behest zest vest jest lest unrest
    everest budapest bucharest celest ingest congest infest divest bequest tempest"""
)
# how the evidence lowers a rank: "2nd largest", "second-largest", "one of the largest"
_LOWERED = re.compile(
    r"(?:\b(?:second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+\s*(?:st|nd|rd|th))"
    r"[\s-]*|\b(?:one|some|many|several|among)\s+(?:of\s+)?(?:the\s+|its\s+|their\s+)?)$",
    re.IGNORECASE,
)
# what a claim's own top rank follows: "the", a possessive, or nothing (a short answer)
_TOPPED = re.compile(r"(?:\bthe|\bits|\btheir|\bhis|\bher|['’]s)\s+$|^\W*$", re.IGNORECASE)
# where the words a rank applies to end
_CLAUSE_END = re.compile(r"\s(?:that|which|who|whom|when|where|because|but|while|and|to|as)\s")
# a sentence that speaks of the subject before it: "He ...", "The mall ..."
_REFERS = re.compile(r"\W*(?:he|she|it|they|his|her|its|their|this|these|the\s+[a-z]+)\b", re.I)
_DEFINITE = re.compile(r"^[Tt]he\s+(?=[A-Z])")
RANKED_WORDS = 4  # content words after a claim's rank word read as what it ranks
MATCH_SHARE = 2 / 3  # of those words, the share an evidence rank must be followed by
MAX_SENTENCES = 200  # evidence sentences read
MIN_JOINED = 4  # letters of a word looked for inside an evidence compound ("kick boxer")


@dataclass(frozen=True)
class Rank:
    """One use of a rank word: the word, the stems of what it ranks, whether it is lowered."""

    word: str
    ranked: tuple[str, ...]
    lowered: bool
    joined: str = ""  # the letters of what it ranks, for compounds ("kickboxer")


@dataclass(frozen=True)
class Ranked:
    """An evidence rank, its sentence and that sentence's subject (None when unclear)."""

    rank: Rank
    sentence: EvidenceSentence
    holder: entities.Name | None


def ranks(text: str) -> list[Rank]:
    """Every rank word of ``text`` with what it ranks."""
    found: list[Rank] = []
    for match in _RANK.finditer(text):
        word = _word(match.group("word"))
        if word is None:
            continue
        after = match.group("after")
        end = _CLAUSE_END.search(after)
        after = after[: end.start()] if end is not None else after
        stems = [s for s in content_stems(after) if s not in GENERIC_STEMS][:RANKED_WORDS]
        lowered = _LOWERED.search(text[max(0, match.start() - 30) : match.start()]) is not None
        joined = re.sub(r"[^a-z]", "", after.lower())
        found.append(Rank(word, tuple(stems), lowered, joined))
    return found


def _word(written: str) -> str | None:
    lower = " ".join(written.lower().split())
    if lower in _NOT_RANKS or (lower.endswith("est") and len(lower) < 5 and lower != "best"):
        return None
    return " ".join(stem(w) for w in lower.split())


def raised(claim: str, index: EvidenceIndex) -> tuple[str, EvidenceSentence] | None:
    """Why the top rank ``claim`` gives is one the evidence lowers or gives another subject,
    with the evidence sentence; or None."""
    if negation.negated(claim):
        return None
    for match in _RANK.finditer(claim):
        if not _TOPPED.search(claim[: match.start()]):
            continue
        own = ranks(claim[match.start() :])[:1]
        if not own or own[0].lowered or not own[0].ranked:
            continue
        subject = _subject(claim[: match.start()], index)
        found = _against(own[0], subject, index)
        if found is not None:
            return found
    return None


def _subject(before: str, index: EvidenceIndex) -> entities.Name | None:
    """The first name the claim writes before its rank, when the evidence names it too."""
    for name in entities.names(before, whole_answer=True):
        parts = [p for p in name.parts if len(p) > 1]
        if parts and all(index.has(p) for p in parts):
            return name
    return None


def _against(
    own: Rank, subject: entities.Name | None, index: EvidenceIndex
) -> tuple[str, EvidenceSentence] | None:
    said = [r for r in evidence_ranks(index) if _same(own, r.rank)]
    if not said:
        return None
    mine = [r for r in said if subject is None or _holds(r, subject)]
    if mine and all(r.rank.lowered for r in mine):
        first = mine[0]
        return (
            f"the claim ranks it '{own.word}'; {first.sentence.passage} ranks it lower "
            f'("{short(first.sentence.text)}")',
            first.sentence,
        )
    if subject is None or mine:
        return None
    top = [r for r in said if not r.rank.lowered]
    if not top or any(r.holder is None for r in top):
        return None
    first = top[0]
    holder = first.holder.text if first.holder is not None else ""
    return (
        f"{first.sentence.passage} gives '{own.word}' to {holder} "
        f'("{short(first.sentence.text)}"), not to {subject.text}',
        first.sentence,
    )


def _same(own: Rank, other: Rank) -> bool:
    if own.word != other.word:
        return False
    found = sum(
        any(related(s, o) for o in other.ranked) or (len(s) >= MIN_JOINED and s in other.joined)
        for s in own.ranked
    )
    return found >= math.ceil(MATCH_SHARE * len(own.ranked))


def _holds(ranked: Ranked, subject: entities.Name) -> bool:
    """Whether the rank's sentence speaks of ``subject``: names it, or its subject is it."""
    parts = {p for p in subject.parts if len(p) > 1}
    held = {p for p in ranked.holder.parts if len(p) > 1} if ranked.holder else set()
    if held and (held <= parts or parts <= held):
        return True
    return bool(parts) and parts <= ranked.sentence.stems


def evidence_ranks(index: EvidenceIndex) -> list[Ranked]:
    """The evidence's rank words, each with its sentence and the sentence's subject."""
    found: list[Ranked] = []
    holder: entities.Name | None = None
    for sentence in index.sentences[:MAX_SENTENCES]:
        holder = _holder(sentence.text, holder)
        if not _RANK.search(sentence.text):
            continue
        found.extend(Ranked(r, sentence, holder) for r in ranks(sentence.text) if r.ranked)
    return found


def _holder(text: str, before: entities.Name | None) -> entities.Name | None:
    """The subject of a sentence: the name it opens with, else the one before it when it
    opens with a pronoun or "The <noun>", else None (unclear)."""
    names = entities.names(text, whole_answer=True)
    opening = _DEFINITE.sub("", text.lstrip(" \"'“("), count=1)
    if names and opening.startswith(names[0].text):
        return names[0]
    return before if _REFERS.match(text) else None

"""What a conversation's user turns report others saying is no evidence for the answer.

A user turn is evidence of what the user states about themselves ("I bought it on 3 May", "my
order number is 5512"). What they pass on is not: "my friend said it's 90 days", "I read
online that returns are free", "apparently the store closes at 10" repeat a claim nobody
checked, so an answer that repeats it is not grounded by it, and a policy the tool results
state otherwise still contradicts it. :func:`evidence_of` gives the offline judge the
passages and the evidence text it reads: each sentence of a user turn cut at its first cue of
reported speech (what comes before it is the user's own words), and without the turns the rendered
transcript labels *not evidence* (the system prompt, the assistant's earlier replies), which
are never passages but were read for verbatim matches.
"""

from __future__ import annotations

import re

from guard.case import Passage
from guard.offline.text import split_sentences

USER = "user"  # the passage label of a user turn (guard.prepare.evidence.turn_label)
_CUE = re.compile(
    # someone else's words: "my friend said", "a coworker told me", "the agent claimed"
    r"\b(?:said|says|say|told|tells|tell\s+me|claimed|claims|mentioned|posted|wrote|swears|"
    r"swore|insisted|insists|reckons|suggested|"
    # the user's report of what they heard or read: "I heard", "I read online", "I was told"
    r"heard|hear|read|saw\s+(?:online|somewhere|on|in)|seen\s+(?:online|somewhere|on|in)|"
    r"apparently|supposedly|reportedly|allegedly|rumou?r(?:ed|s)?|according\s+to|word\s+is|"
    r"the\s+word\s+on)\b",
    re.IGNORECASE,
)
# the user's own papers state their own facts: "my receipt says 3 May" is no hearsay
_OWN_RECORD = re.compile(
    r"\bmy\s+(?:receipt|order|invoice|bill|statement|ticket|booking|confirmation|email|"
    r"contract|policy|account|card|label|tracking)(?:\s+\w+)?\s+(?:says|said|shows|reads)\s*$",
    re.IGNORECASE,
)
# a rendered turn that is not evidence, one line: "[turn 3] ASSISTANT (earlier reply, NOT
# evidence): ..." (turn bodies are written on one line by guard.prepare.evidence)
_NOT_EVIDENCE_TURN = re.compile(r"^\[turn \d+\] [^\n]*?NOT evidence\):[^\n]*\n?", re.MULTILINE)


def evidence_of(passages: tuple[Passage, ...], evidence: str) -> tuple[tuple[Passage, ...], str]:
    """The passages and evidence text the offline judge reads: user turns without what they
    report others saying, the rendered text without the turns that are not evidence."""
    if not any(p.label == USER for p in passages):
        return passages, evidence
    read: list[Passage] = []
    for passage in passages:
        own = own_words(passage.text) if passage.label == USER else passage.text
        if own != passage.text:
            evidence = evidence.replace(passage.text, own, 1)
        if own.strip():
            read.append(Passage(passage.label, own))
    return tuple(read), _NOT_EVIDENCE_TURN.sub("", evidence)


def own_words(turn: str) -> str:
    """``turn`` with each sentence cut at its first cue of reported speech ("My friend said
    it's 90 days." keeps "My friend"); a sentence that reports nothing is kept whole."""
    kept: list[str] = []
    at = 0
    for sentence in split_sentences(turn):
        cut = _reported_from(sentence.text)
        if cut is not None:
            kept.append(turn[at : sentence.start + cut].rstrip())
            at = sentence.end
    return turn if not kept else " ".join([*kept, turn[at:].strip()]).strip()


def _reported_from(sentence: str) -> int | None:
    """Where the reported speech of ``sentence`` starts, or None."""
    for match in _CUE.finditer(sentence):
        if not _OWN_RECORD.search(sentence, 0, match.end()):
            return match.start()
    return None

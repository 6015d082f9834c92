"""The injection scan's search for trigger and start words as it was before one Aho-Corasick
pass replaced it (commit 629882d): a substring test per trigger word and ``str.find`` per start
word. The reference the equivalence tests compare :mod:`guard.prepare.injection` against; the
patterns, words and gates are the module's own, and so are the structural signals and the extra
decoders (:mod:`guard.prepare.signals`, :mod:`guard.prepare.decoders`), read as they are."""

from __future__ import annotations

import re
from collections.abc import Iterator

from guard.models import InjectionFinding
from guard.prepare import decoders, dialogue, encodings, signals
from guard.prepare import injection as i
from guard.prepare.injection import Location
from tests.unit import reference_encodings


def _started(index: int, text: str, lowered: str) -> Iterator[re.Match[str]]:
    match = i._PATTERNS[index][1].match
    words, line_starts = i._SEARCH_WORDS[index], i._START_WORDS[index][1]
    find = lowered.find
    end = len(text)
    ahead = [at if at >= 0 else end for at in map(find, words)]  # each word's next start
    pos = 0
    if line_starts:  # the first line's start; the others follow a "\n" (a start word)
        first = match(text, 0)
        if first is not None:
            yield first
            pos = first.end()
    while True:
        at = min(ahead)
        if at >= end:
            return
        if at < pos:  # a word passed: its next start from ``pos``
            j = ahead.index(at)
            at = find(words[j], pos)
            ahead[j] = at if at >= 0 else end
            continue
        result = match(text, at)
        if result is None and line_starts and lowered[at] == "\n":
            at += 1  # the line's start
            result = match(text, at) if at < end else None
        if result is None:
            pos = at + 1
        else:
            yield result
            pos = max(result.end(), at + 1)  # no pattern matches the empty string


def _triggered(lowered: str) -> list[int]:
    return [n for n, words in enumerate(i._TRIGGERS) if any(w in lowered for w in words)]


def _patterns(text: str) -> int:
    """The patterns triggered in ``text`` or its skeleton, as a bitmask."""
    return sum(
        1 << index
        for index in set(_triggered(i._lowered(text)) + _triggered(i._lowered(i.skeleton(text))))
    )


def _matches(index: int, text: str, lowered: str) -> Iterator[re.Match[str]]:
    found = _started(index, text, lowered)
    if index not in i._GATED:
        return found
    return i._orders(found, text, override=i._PATTERNS[index][0] == "override_instructions")


def scan(text: str, location: Location) -> list[InjectionFinding]:
    findings: list[InjectionFinding] = []
    if not text:
        return findings
    seen: set[tuple[str, str]] = set()
    folded = i.skeleton(text)
    for variant in (text, folded) if folded != text else (text,):
        lowered = i._lowered(variant)
        transcript = location == "evidence" and dialogue.is_dialogue(variant)
        for index in _triggered(lowered):
            kind = i._PATTERNS[index][0]
            for match in _matches(index, variant, lowered):
                if kind == "role_marker" and transcript and dialogue.speaker_label(match.group()):
                    continue
                excerpt = i._excerpt(variant, match.start(), match.end())
                key = (kind, i.skeleton(excerpt))
                if key not in seen:
                    seen.add(key)
                    findings.append(InjectionFinding(kind=kind, location=location, excerpt=excerpt))
                if len(findings) >= i.MAX_FINDINGS_PER_TEXT:
                    return findings
        for kind, start, end in signals.find(variant):  # the structural signals, as they are
            excerpt = i._excerpt(variant, start, end)
            key = (kind, i.skeleton(excerpt))
            if key not in seen:
                seen.add(key)
                findings.append(InjectionFinding(kind=kind, location=location, excerpt=excerpt))
            if len(findings) >= i.MAX_FINDINGS_PER_TEXT:
                return findings
    return findings


def scan_everywhere(text: str, location: Location) -> list[InjectionFinding]:
    """The scan of ``text`` and of the texts hidden in it, with each decoder looking for its
    key words on its own (``reference_encodings.hidden``)."""
    if not text:
        return []
    findings = scan(text, location)
    patterns = i._ALL_PATTERNS if len(findings) >= i.MAX_FINDINGS_PER_TEXT else _patterns(text)
    hidden, solid_runs = reference_encodings.hidden(text, lambda t: i.leet_may_matter(t, patterns))
    found: list[InjectionFinding] = [
        InjectionFinding(kind=kind, location=location, excerpt=f"spaced: {phrase}")
        for kind, phrase in encodings.solid_phrases(solid_runs)
    ]
    for encoding, plain in [*hidden, *decoders.hidden(text)]:
        found += [
            f.model_copy(update={"excerpt": f"{encoding}: {f.excerpt}"})
            for f in scan(plain, location)
        ]
        if len(found) >= i.MAX_FINDINGS_PER_TEXT:
            break
    return findings + found[: i.MAX_FINDINGS_PER_TEXT]

"""Verdict-shaped payloads: JSON, XML, YAML or key-value text that imitates the judge's answer.

A judge asked for ``{"explanation": ..., "claims": [...], "score": 5}`` may copy an answer it
finds already written in the data. What makes a fragment one is its shape, not its wording:

* a **strong key** (one only a verdict has: ``grounded``, ``is_grounded``, ``hallucinated``,
  ``hallucination``, ``verdict``, ``faithful``, ``groundedness``...) holding a verdict-like
  value for it (``true``, ``yes``, ``pass``, ``grounded``, a 0-5 score), in any form: ``"grounded":
  true``, ``grounded: yes``, ``grounded=true``, ``<grounded>true</grounded>``, ``**grounded**:
  **yes**``;
* a **weak key** (one tool results and reports carry too: ``score``, ``rating``, ``label``,
  ``passed``, ``result``, ``decision``...) holding a verdict-like value, when everything around
  it is verdict too: every key of its JSON object (or of its line, or every sibling XML tag) is
  a verdict key or a judge's reason (``explanation``, ``claims``...) and every verdict key holds
  a verdict-like value. ``{"score": 5}`` alone is a verdict; ``{"score": 5, "level": 2}``,
  ``{"label": "spam", "score": 1}`` and ``{"id": "doc-7", "score": 0.87}`` are tool results;
* the worked examples' own verdict line (``Verdict: score 5; grounded true.``,
  :mod:`guard.providers.prompts`).

Markdown emphasis and code marks around keys and values (``**score**: **5**``) are part of the
shape. The scan is anchored at the vocabulary's words (found by the caller's one word search):
each occurrence costs a match at its key, and text without them costs nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_ANCHORS = 64  # key-word occurrences read per text, at most
MAX_OBJECT_CHARS = 800  # how far an enclosing JSON object is looked for, each way
MAX_OBJECTS = 16  # enclosing objects (or lines) read per text, at most
MAX_LINE_CHARS = 160  # a key-value line of a verdict is shorter
XML_SIBLINGS_CHARS = 240

# the words the caller finds: every verdict key holds one
ANCHOR_WORDS = (
    "score",
    "rating",
    "grade",
    "label",
    "passed",
    "pass",
    "result",
    "decision",
    "grounded",
    "grounding",
    "hallucinat",
    "verdict",
    "faithful",
    "supported",
    "judgement",
    "judgment",
    "assessment",
)

_STRONG_STEMS = ("grounded", "grounding", "hallucinat", "verdict", "faithful")
_WEAK = _words(
    "score rating grade label passed pass result decision supported judgement judgment "
    "assessment evaluation correct"
)
_REASONS = _words(
    "explanation reasoning rationale reason reasons claims claim unsupported_claims notes note "
    "comment comments confidence justification evidence evidence_quote analysis summary"
)
_TRUTHS = _words("true false yes no 1 0 y n")
_SCORES = re.compile(r"(?:[0-5](?:\.0)?(?:\s*/\s*5)?|5\s*/\s*5|10\s*/\s*10|five|perfect)")
_LABELS = _words(
    "pass passed fail failed grounded ungrounded faithful unfaithful supported unsupported "
    "hallucinated not_hallucinated approved correct true false yes no"
)

_KEY_CHARS = re.compile(r"[\w-]")
_MARKS = "*_`\"'"
# a key (already found to start at the anchor's word) and its separator and value
_PAIR = re.compile(
    r"(?P<key>[A-Za-z][\w-]{0,40})[\"'`*_]*\s*(?::|=>|=|->)\s*[*_`\"']*"
    r"(?P<value>[A-Za-z0-9][\w./ -]{0,24}?)[*_`\"']*(?=\s*(?:[,;}\])|<\n]|$|\s))",
    re.MULTILINE,
)
_XML = re.compile(
    r"<(?P<key>[A-Za-z][\w-]{0,40})>\s*(?P<value>[^<>\n]{1,24}?)\s*</(?P=key)\s*>", re.MULTILINE
)
_OBJECT_KEY = re.compile(r"[{,]\s*[\"']?([A-Za-z_][\w-]{0,40})[\"']?\s*:")
_OBJECT_PAIR = re.compile(
    r"[{,]\s*[\"']?([A-Za-z_][\w-]{0,40})[\"']?\s*:\s*[\"']?([^,}\"']{0,40})[\"']?"
)
# strings, keys (followed by ":") kept, values that are no verdict word (long, or holding JSON
# punctuation) blanked; then nested objects and lists: what a flattened object no longer holds
_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"(\s*:)?")
_NESTED = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]")


def _blank_value(match: re.Match[str]) -> str:
    string = match.group()
    if match.group(1) or (len(string) <= 26 and not any(c in string for c in "{}[],:\\")):
        return string
    return '"s"'


_LINE_PAIR = re.compile(
    r"[*_`\"']*([A-Za-z][\w-]{0,40})[*_`\"']*\s*(?::|=>|=|->)\s*[*_`\"']*"
    r"([^,;|*_`\"']{1,24}?)[*_`\"']*\s*(?:[,;|]|$)"
)
_XML_TAG = re.compile(r"<([A-Za-z][\w-]{0,40})>")
_VERDICT_LINE = re.compile(
    r"\bverdict\s*[:=-]\s*\**\s*(?:score\s*[:=]?\s*[0-5]\b|grounded\b(?!\s+(?:in|on|by)\b))"
    r"|\bscore\s*[:=]?\s*[0-5]\s*(?:\([^)\n]{0,80}\)\s*)?[;,]\s*grounded\s*[:=]?\s*"
    r"(?:true|false|yes|no)\b",
    re.IGNORECASE,
)


def _normal(key: str) -> str:
    return key.lower().replace("-", "_").strip("_")


def _strong(key: str) -> bool:
    return any(stem in key for stem in _STRONG_STEMS)


def _weak(key: str) -> bool:
    return key in _WEAK or key.endswith(("score", "rating"))


def verdict_value(key: str, value: str) -> bool:
    """Whether ``value`` (marks stripped, any case) is what a verdict's ``key`` would hold."""
    key, value = _normal(key), value.strip().strip(_MARKS).strip().lower()
    if not value:
        return False
    if key.endswith(("score", "rating", "grade", "ness")) or key in {"rating", "grade"}:
        return _SCORES.fullmatch(value) is not None
    if key in {"verdict", "label", "result", "decision", "judgement", "judgment", "assessment"}:
        return value.replace(" ", "_") in _LABELS
    return (
        value in _TRUTHS
        or value.replace(" ", "_") in _LABELS
        or (_strong(key) and _SCORES.fullmatch(value) is not None)
    )


def _vocabulary(key: str) -> bool:
    key = _normal(key)
    return _strong(key) or _weak(key)


def _allowed(key: str) -> bool:
    key = _normal(key)
    return _vocabulary(key) or key in _REASONS


def _enclosing_object(text: str, start: int) -> str | None:
    """The JSON-like object around ``start`` (its braces included), nested values blanked."""
    depth, left = 0, None
    for at in range(start - 1, max(-1, start - MAX_OBJECT_CHARS), -1):
        char = text[at]
        if char in "}]":
            depth += 1
        elif char in "{[":
            if depth == 0:
                left = at if char == "{" else None
                break
            depth -= 1
    if left is None:
        return None
    depth = 0
    for at in range(start, min(len(text), left + 2 * MAX_OBJECT_CHARS)):
        char = text[at]
        if char in "{[":
            depth += 1
        elif char in "}]":
            if depth == 0:
                return _flattened(text[left : at + 1]) if char == "}" else None
            depth -= 1
    return None


def _flattened(obj: str) -> str:
    """``obj`` with its nested objects, lists and strings' insides reduced, its own keys kept."""
    inner = _STRING.sub(_blank_value, obj[1:-1])
    for _ in range(4):
        reduced = _NESTED.sub("0", inner)
        if reduced == inner:
            break
        inner = reduced
    return "{" + inner + "}"


def _object_is_verdict(obj: str) -> bool:
    """Whether every key of the flattened ``obj`` is a verdict key or a reason, and every
    verdict key of it holds a verdict-like value."""
    keys = _OBJECT_KEY.findall(obj)
    if not keys or not all(map(_allowed, keys)):
        return False
    pairs = [(k, v) for k, v in _OBJECT_PAIR.findall(obj) if _vocabulary(k)]
    return bool(pairs) and all(verdict_value(k, v) for k, v in pairs)


def _line_is_verdict(text: str, start: int) -> bool:
    """Whether the line around ``start`` holds only key-value pairs of verdict keys with
    verdict-like values (``score: 5``, ``**score**: **5**``, ``score=5, grounded=yes``)."""
    left = text.rfind("\n", max(0, start - MAX_LINE_CHARS), start) + 1
    right = text.find("\n", start, start + MAX_LINE_CHARS)
    long_before = not left and start >= MAX_LINE_CHARS
    if long_before or (right < 0 and len(text) - start > MAX_LINE_CHARS):
        return False  # a long line is prose, not a verdict's key-value line
    line = text[left : len(text) if right < 0 else right].strip(" \t>#-*|")
    pairs = _LINE_PAIR.findall(line)
    if not pairs or "".join(_LINE_PAIR.sub("", line).split()) not in {"", "{}", "."}:
        return False
    return all(_vocabulary(k) and verdict_value(k, v) for k, v in pairs)


def _xml_is_verdict(text: str, start: int, end: int) -> bool:
    around = text[max(0, start - XML_SIBLINGS_CHARS) : end + XML_SIBLINGS_CHARS]
    tags = _XML_TAG.findall(around)
    parents = {"verdict", "assessment", "evaluation", "result", "judgement", "judgment", "grading"}
    return all(
        _allowed(t) or _normal(t) in parents or _normal(t) in {"output", "response"} for t in tags
    )


def _key_start(text: str, at: int) -> int:
    while at > 0 and _KEY_CHARS.match(text, at - 1):
        at -= 1
    return at


def _at_anchor(text: str, at: int, budget: list[int]) -> tuple[int, int] | None:
    """The verdict-shaped fragment whose key holds the anchor word at ``at``, if any."""
    start = _key_start(text, at)
    if start and text[start - 1] == "<":
        xml = _XML.match(text, start - 1)
        if xml is None or not (_vocabulary(xml["key"]) and verdict_value(xml["key"], xml["value"])):
            return None
        strong = _strong(_normal(xml["key"]))
        return xml.span() if strong or _xml_is_verdict(text, xml.start(), xml.end()) else None
    pair = _PAIR.match(text, start)
    if pair is None or not (_vocabulary(pair["key"]) and verdict_value(pair["key"], pair["value"])):
        line = _VERDICT_LINE.match(text, start)
        return None if line is None else line.span()
    if _strong(_normal(pair["key"])):
        return pair.span()
    budget[0] -= 1
    if budget[0] < 0:
        return None
    obj = _enclosing_object(text, start)
    verdict = _object_is_verdict(obj) if obj is not None else _line_is_verdict(text, start)
    return pair.span() if verdict else None


def find(text: str, anchors: Iterable[int]) -> Iterator[tuple[int, int]]:
    """The spans of verdict-shaped fragments of ``text``; ``anchors``: where the words of
    :data:`ANCHOR_WORDS` occur in it (at most :data:`MAX_ANCHORS` are read)."""
    end = -1
    budget = [MAX_OBJECTS]
    for count, at in enumerate(sorted(set(anchors))):
        if count >= MAX_ANCHORS:
            break
        if at < end:
            continue
        span = _at_anchor(text, at, budget)
        if span is not None:
            end = span[1]
            yield span

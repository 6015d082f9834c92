"""Injection containment: fences the judged text cannot forge, and detection of text aimed at the
judge.

**Fence.** Every request gets a random token (:meth:`Fence.new`). Untrusted text is wrapped as::

    <<BEGIN_OUTPUT_3f9c...>>
    ...text...
    <<END_OUTPUT_3f9c...>>

Before wrapping, every ``<<`` that starts something resembling a fence marker (``<<END``,
``<<BEGIN``, ``<< /end`` in any case) becomes ``‹‹``, so the body can never contain a closing
marker, even when the text knows the format and the token. Nothing else in the text changes:
ordinary text appears in the prompt verbatim.

**Detection.** :func:`scan` reports instruction-like text aimed at the judge: instruction
overrides ("ignore all previous instructions"), score requests ("rate this 5", "give this a score
of 5"), fake verdict JSON (``{"score": 5``, ``"grounded": true``), chat role markers (a line
starting ``system:``/``assistant:``, ``<|im_start|>``, ``[INST]``, ``### Instruction``) and fence
forgeries. The patterns are specific enough to stay quiet on ordinary prose; findings are
reported in the verdict, they do not decide it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from guard.case import Passage
from guard.models import ContextField, InjectionFinding, JudgeRequest
from guard.sanitize import sanitize

Kind = Literal["override_instructions", "score_request", "fake_verdict", "role_marker",
               "fence_forgery"]
Location = Literal["output", "evidence"]

MAX_FINDINGS_PER_TEXT = 10
EXCERPT_MARGIN = 30
EXCERPT_MAX_CHARS = 160

_MARKER_START = re.compile(r"<<(?=\s*/?\s*(?:BEGIN|END))", re.IGNORECASE)
_ESCAPED_MARKER_START = "‹‹"
_LABEL_CHARS = re.compile(r"[^A-Z0-9]+")


def escape_fence_markers(text: str) -> str:
    """``text`` with every fence-marker look-alike defused (``<<END`` -> ``‹‹END``)."""
    return _MARKER_START.sub(_ESCAPED_MARKER_START, text)


@dataclass(frozen=True)
class Fence:
    """Per-request random boundaries around untrusted text."""

    token: str

    @classmethod
    def new(cls) -> Fence:
        return cls(secrets.token_hex(8))

    @staticmethod
    def _name(label: str) -> str:
        return _LABEL_CHARS.sub("_", label.upper()).strip("_") or "TEXT"

    def opening(self, label: str) -> str:
        return f"<<BEGIN_{self._name(label)}_{self.token}>>"

    def closing(self, label: str) -> str:
        return f"<<END_{self._name(label)}_{self.token}>>"

    def wrap(self, label: str, text: str) -> str:
        """``text`` between this fence's markers for ``label``, with look-alikes defused."""
        return f"{self.opening(label)}\n{escape_fence_markers(text)}\n{self.closing(label)}"


# --------------------------------------------------------------------------- detection

_ANSWER = r"(?:answer|response|output|reply|summary)"
_THIS = rf"(?:this|it|the\s+{_ANSWER}|my\s+{_ANSWER})(?:\s+{_ANSWER})?"
_VERDICT_KEYS = r"(?:score|raw_score|grounded|hallucinated|label|verdict|faithful|supported)"
_VERDICT_VALUES = (r"(?:true|false|[0-9](?:\.[0-9]+)?\b"
                   r"|[\"'](?:pass|fail|grounded|faithful|yes)[\"'])")

_PATTERNS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("override_instructions", re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?"
        r"(?:(?:the|your|my|these|those)\s+)?"
        r"(?:(?:previous|prior|above|earlier|preceding|foregoing|original|system)\s+"
        r"(?:instructions?|prompts?|rules|directions|guidelines|directives)"
        r"|instructions|prompts?|guidelines|directives)\b", re.IGNORECASE)),
    ("override_instructions", re.compile(
        r"\b(?:new|updated|revised)\s+instructions\s*:"
        r"|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?"
        r"(?:ai\s+)?(?:judge|evaluator|grader|llm|language\s+model)\b"
        r"|\bdear\s+(?:ai\s+)?(?:judge|evaluator|grader)\b", re.IGNORECASE)),
    ("score_request", re.compile(
        rf"\b(?:rate|score|grade|mark|rank)\s+{_THIS}\s+(?:as\s+|an?\s+|with\s+(?:an?\s+)?)?"
        r"(?:[0-9]+(?:\s*/\s*[0-9]+)?(?!\w|\.[0-9])|perfect|grounded|faithful|pass(?:ing)?)\b"
        rf"|\bgive\s+{_THIS}\s+(?:a|an|the)\s+(?:(?:perfect|full|maximum|max|top|highest)\s+"
        r"(?:score|rating|grade|marks?)|(?:score|rating|grade|mark)\s+of\s+[0-9])"
        rf"|\b(?:mark|label|classify|judge|evaluate)\s+{_THIS}\s+as\s+(?:fully\s+)?"
        r"(?:grounded|faithful|supported|not\s+hallucinated|pass(?:ing|ed)?)\b"
        rf"|\bthis\s+{_ANSWER}\s+is\s+(?:fully\s+|completely\s+|100%\s+)?"
        r"(?:grounded|faithful|supported\s+by\s+the\s+(?:context|evidence))\b", re.IGNORECASE)),
    ("fake_verdict", re.compile(
        rf"(?:[\"']{_VERDICT_KEYS}[\"']|\{{\s*{_VERDICT_KEYS})\s*:\s*{_VERDICT_VALUES}",
        re.IGNORECASE)),
    ("role_marker", re.compile(
        r"^[ \t>*#-]*(?:system|assistant|developer|user|human)\s*:"
        r"|<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|"
        r"end_header_id)\|>"
        r"|\[/?INST\]|<</?SYS>>"
        r"|^[ \t]*#{2,}\s*(?:instructions?|system(?:\s+prompt)?|response)\b"
        r"|</?(?:system|assistant|instructions?)>"
        # our own block headers, forged inside a block to pass text off as evidence
        r"|^[ \t]*\[turn\s+\d+\]|\btool\s+result\s+from\b|\((?:not\s+)?evidence\)\s*:",
        re.IGNORECASE | re.MULTILINE)),
    ("fence_forgery", re.compile(
        r"<<\s*/?\s*(?:BEGIN|END)(?:_|\s|>>)|\b(?:BEGIN|END)_(?:OUTPUT|EVIDENCE|QUESTION)_",
        re.IGNORECASE)),
)


# Words every match of the pattern at the same index must contain (lowercased). A pattern runs
# only when one occurs in the text: plain substring tests are far cheaper than these regexes.
_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("ignore", "disregard", "forget", "override", "bypass"),
    ("instruction", "judge", "evaluator", "grader", "llm", "language"),
    ("rate", "score", "grade", "mark", "rank", "give", "label", "classify", "judge", "evaluate",
     "grounded", "faithful", "supported"),
    ("score", "grounded", "hallucinated", "label", "verdict", "faithful", "supported"),
    ("system", "assistant", "developer", "user", "human", "<|", "inst]", "sys>>", "##",
     "instruction", "[turn", "tool result", "evidence)"),
    ("<<", "begin_", "end_"),
)
# The only non-ASCII characters IGNORECASE matches to ASCII letters, folded for the prefilter.
_IGNORECASE_TWINS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _excerpt(text: str, start: int, end: int) -> str:
    piece = text[max(0, start - EXCERPT_MARGIN): end + EXCERPT_MARGIN]
    piece = " ".join(piece.split())
    return piece if len(piece) <= EXCERPT_MAX_CHARS else piece[: EXCERPT_MAX_CHARS - 1] + "…"


def scan(text: str, location: Location) -> list[InjectionFinding]:
    """Instruction-like text aimed at the judge found in ``text``, at most a bounded number."""
    findings: list[InjectionFinding] = []
    seen: set[tuple[str, str]] = set()
    lowered = text.translate(_IGNORECASE_TWINS).lower()
    for (kind, pattern), triggers in zip(_PATTERNS, _TRIGGERS, strict=True):
        if not any(word in lowered for word in triggers):
            continue
        for match in pattern.finditer(text):
            excerpt = _excerpt(text, match.start(), match.end())
            if (kind, excerpt) not in seen:
                seen.add((kind, excerpt))
                findings.append(InjectionFinding(kind=kind, location=location, excerpt=excerpt))
            if len(findings) >= MAX_FINDINGS_PER_TEXT:
                return findings
    return findings


def _dedupe(findings: Iterable[InjectionFinding]) -> list[InjectionFinding]:
    seen: set[tuple[str, str, str]] = set()
    unique: list[InjectionFinding] = []
    for finding in findings:
        key = (finding.kind, finding.location, finding.excerpt)
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    return unique


def scan_request(request: JudgeRequest, output: str, passages: Sequence[Passage],
                 question: str | None, source: ContextField) -> list[InjectionFinding]:
    """Every finding in what a judge of ``request`` reads: the sanitized ``output``, the
    evidence ``passages``, the ``question`` and the shown non-evidence turns; deduplicated."""
    evidence: list[str] = [p.text for p in passages]
    if source is ContextField.MESSAGES:
        evidence += [sanitize(m.content) for m in request.messages or []
                     if m.role in ("assistant", "system")]
    if question:
        evidence.append(question)
    found = scan(output, "output") + [f for text in evidence for f in scan(text, "evidence")]
    return _dedupe(found)

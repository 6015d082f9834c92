"""Speaker labels of a transcript quoted as evidence.

A support ticket, a chat log or a tool that returns a conversation writes its turns as
``Customer: ...`` / ``Agent: ...`` lines, and often as ``User: ...`` / ``Assistant: ...``.
Those are the evidence's own speakers, not a chat template forged to address the judge, so the
injection scan (:mod:`guard.prepare.injection`) does not report a ``user:``, ``assistant:`` or
``human:`` line start in evidence that reads as a dialogue: at least two speaker-labelled lines
by at least two speakers. ``system:`` and ``developer:`` lines, template tokens
(``<|im_start|>``) and any instruction inside a turn are reported as before, and a lone
``Assistant: ...`` line, or any such line in the judged output, is still a role marker.
"""

from __future__ import annotations

import re

DIALOGUE_ROLES = frozenset({"user", "assistant", "human"})
MIN_TURNS = 2  # speaker-labelled lines in a dialogue, by at least two speakers
# a line that starts with a short speaker label: "Agent:", "Customer:", "Priya (billing):"
_SPEAKER_LINE = re.compile(
    r"^[ \t>*-]*([A-Za-z][\w.'’-]*(?:[ \t]+[\w.'’()-]+){0,3}?)[ \t]*:[ \t]*\S",
    re.MULTILINE,
)
# labels that head a document's parts, not a speaker's turn
_NOT_SPEAKERS = frozenset(
    {
        "note",
        "notes",
        "step",
        "section",
        "warning",
        "important",
        "instruction",
        "instructions",
        "update",
        "system",
        "developer",
        "subject",
        "date",
        "re",
        "to",
        "from",
        "cc",
        "tip",
    }
)


def speakers(text: str) -> list[str]:
    """The speaker labels of ``text``'s labelled lines, lowercased, in order."""
    labels = (m.group(1).lower() for m in _SPEAKER_LINE.finditer(text))
    return [label for label in labels if label.split()[0] not in _NOT_SPEAKERS]


def is_dialogue(text: str) -> bool:
    """Whether ``text`` reads as a transcript of turns by two or more speakers."""
    labels = speakers(text)
    return len(labels) >= MIN_TURNS and len(set(labels)) >= MIN_TURNS


def speaker_label(marker: str) -> bool:
    """Whether a role ``marker`` match (``"User:"``, ``"  assistant :"``) names a dialogue
    role rather than a system or developer one."""
    role = marker.strip(" \t>*#-:").strip().lower()
    return role in DIALOGUE_ROLES

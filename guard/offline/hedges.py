"""Hedging lead-ins: "I believe", "as far as I know", "I'm not completely sure, but".

A hedged claim is still a claim: "I think the fee is $59" states a fee of $59 as surely as
"the fee is $59" does, only more politely. The lead-in is no part of what is claimed, and its
words ("think", "sure", "recall") are in no evidence, so left in it would lower the claim's
support and, worse, make a wrong detail look like a courtesy. :func:`unhedged` drops the
lead-ins from the front of a sentence; what follows is checked as any claim is.
"""

from __future__ import annotations

import re

_SURE = r"(?:sure|certain|positive|confident)"
_DEGREE = r"(?:completely|entirely|totally|fully|quite|absolutely|a hundred percent|100\s?%)"
_LEAD = (
    # "I think", "I believe that", "I'd guess", "I would say", "I want to say"
    r"i\s+(?:(?:really\s+)?(?:think|believe|guess|suppose|reckon|assume|imagine|recall|"
    r"remember|suspect)|(?:understand|gather|feel)\s+that|want\s+to\s+say|have\s+a\s+feeling)"
    r"|i['’]d\s+(?:guess|say|think|imagine|assume|bet)|i\s+would\s+(?:guess|say|think|imagine|"
    r"assume|bet)"
    # "I'm fairly sure", "I'm not completely sure, but", "not 100% sure but"
    rf"|(?:i['’]m|i\s+am)\s+(?:(?:fairly|pretty|quite|reasonably|almost|relatively)\s+)?{_SURE}"
    rf"|(?:(?:i['’]m|i\s+am)\s+)?not\s+(?:{_DEGREE}\s+)?{_SURE}(?:\s+about\s+this)?[,;:]?\s+"
    r"(?:but|though)"
    r"|i\s+(?:could|might|may)\s+be\s+(?:wrong|mistaken)[,;:]?\s+but"
    r"|correct\s+me\s+if\s+i['’]m\s+wrong[,;:]?\s+(?:but)?"
    r"|(?:if|unless)\s+i['’]m\s+(?:not\s+)?mistaken"
    # "as far as I know", "from what I remember", "if I recall correctly"
    r"|(?:as\s+far\s+as|from\s+what)\s+i\s+(?:know|can\s+tell|remember|recall|understand|"
    r"gather|have\s+(?:read|seen|heard))"
    r"|if\s+i\s+(?:recall|remember)(?:\s+(?:correctly|rightly|right))?"
    r"|if\s+memory\s+serves(?:\s+me)?(?:\s+(?:right|correctly|well))?"
    r"|to\s+(?:the\s+best\s+of\s+)?my\s+(?:knowledge|recollection|understanding)"
    r"|my\s+(?:understanding|guess|impression|recollection|best\s+guess|sense)\s+is"
    r"|off\s+the\s+top\s+of\s+my\s+head"
    # "it seems", "it appears that", "it looks like"
    r"|it\s+(?:(?:seems|appears)(?:\s+(?:like|as\s+if|as\s+though))?|looks\s+(?:like|as\s+if))"
    r"|(?:probably|possibly|perhaps|maybe|presumably|likely|most\s+likely|very\s+likely|"
    r"apparently|seemingly|supposedly|conceivably|in\s+all\s+likelihood|chances\s+are|"
    r"if\s+anything)"
)
_HEDGE_LEAD = re.compile(rf"(?:{_LEAD})(?:\s+that(?!['’]))?\b[\s,;:—–-]*", re.IGNORECASE)
MAX_LEADS = 4  # "Honestly, I'm not sure, but I think ...": a few stacked lead-ins at most


def unhedged(sentence: str) -> str:
    """``sentence`` without the hedging lead-ins at its front (itself when it is nothing but
    a hedge: "I think so", "I'm not sure")."""
    rest = sentence
    for _ in range(MAX_LEADS):
        match = _HEDGE_LEAD.match(rest)
        if match is None or not match.group(0):
            break
        rest = rest[match.end() :]
    return rest if any(ch.isalnum() for ch in rest) else sentence

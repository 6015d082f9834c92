"""Polarity: whether a claim says the opposite of the evidence sentence it is built from.

A claim and its best-aligned evidence sentence disagree when exactly one of them is negated
("is not", "never", "no longer", "without") or when the claim uses a word whose opposite the
sentence uses instead ("allows" / "prohibits", "before" / "after").
"""

from __future__ import annotations

import re

from guard.offline.text import stem, words

CUES = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "nobody",
        "nothing",
        "neither",
        "nor",
        "without",
        "cannot",
        "unable",
        "lack",
        "lacks",
        "lacked",
        "nowhere",
        "n't",
        "refuse",
        "refused",
        "refuses",
        "deny",
        "denied",
        "denies",
    }
)
NOT_NEGATING = re.compile(
    r"\bnot only\b|\bno (?:doubt|matter|less|more than|fewer than)\b|\bnothing but\b"
    r"|\bnever(?:theless)\b|\bwhether or not\b|\bnot (?:just|merely|simply)\b",
    re.IGNORECASE,
)
_OPPOSITES = (
    ("allow", "prohibit"),
    ("allow", "forbid"),
    ("allow", "ban"),
    ("accept", "reject"),
    ("include", "exclude"),
    ("before", "after"),
    ("increase", "decrease"),
    ("rise", "fall"),
    ("gain", "loss"),
    ("win", "lose"),
    ("won", "lost"),
    ("old", "young"),
    ("older", "younger"),
    ("more", "less"),
    ("more", "fewer"),
    ("larger", "smaller"),
    ("longer", "shorter"),
    ("higher", "lower"),
    ("above", "below"),
    ("open", "closed"),
    ("enable", "disable"),
    ("free", "paid"),
    ("eligible", "ineligible"),
    ("refundable", "non-refundable"),
    ("available", "unavailable"),
    ("possible", "impossible"),
    ("legal", "illegal"),
    ("always", "never"),
    ("maximum", "minimum"),
    ("earliest", "latest"),
    ("first", "last"),
    ("north", "south"),
    ("east", "west"),
    ("male", "female"),
    ("husband", "wife"),
    ("mother", "father"),
    ("son", "daughter"),
    ("brother", "sister"),
    ("true", "false"),
    ("success", "failure"),
    ("positive", "negative"),
    ("cheaper", "dearer"),
    ("ahead", "behind"),
    ("under", "over"),
)
OPPOSITE: dict[str, frozenset[str]] = {}
for _a, _b in _OPPOSITES:
    for _x, _y in ((stem(_a), stem(_b)), (stem(_b), stem(_a))):
        OPPOSITE[_x] = OPPOSITE.get(_x, frozenset()) | {_y}


_NEGATING_PREFIXES = ("non-", "non", "in", "un", "im", "ir", "il", "dis")
MIN_ROOT = 5


def _prefix_opposite(word: str, evidence_stems: set[str]) -> str | None:
    """ "sensitive" against "insensitive", "refundable" against "non-refundable"."""
    for prefix in _NEGATING_PREFIXES:
        if prefix + word in evidence_stems and len(word) >= MIN_ROOT:
            return prefix + word
        root = word[len(prefix) :]
        if word.startswith(prefix) and len(root) >= MIN_ROOT and root in evidence_stems:
            return root
    return None


def negated(text: str) -> bool:
    """Whether ``text`` contains a negation (after removing idioms that only look negative)."""
    cleaned = NOT_NEGATING.sub(" ", text).replace("’", "'")
    if re.search(r"(?<=\w)n't\b", cleaned, re.IGNORECASE):
        return True
    # "notice-free", "fee-free": without notice, without a fee
    return any(w.lower() in CUES or w.lower().endswith("-free") for w in words(cleaned))


def flipped(claim: str, evidence_sentence: str) -> str | None:
    """Why the claim contradicts the sentence by polarity, or None when it does not."""
    claim_negated, evidence_negated = negated(claim), negated(evidence_sentence)
    if claim_negated and not evidence_negated:
        return "negation flipped: the claim is negated, the evidence is not"
    if (
        evidence_negated
        and not claim_negated
        and not IMPLICIT_NEGATIVE.search(claim)
        and not prefixed_denial(claim, evidence_sentence)
    ):
        return "negation flipped: the evidence is negated, the claim is not"
    return _opposite_words(claim, evidence_sentence)


def opposed(claim: str, evidence_sentence: str) -> str | None:
    """Why the claim uses the opposite of a word of the sentence, or None; a claim of several
    clauses is read a clause at a time too ("Orion is behind schedule, unlike Vega, which is
    ahead": each clause's word against the sentence)."""
    found = _opposite_words(claim, evidence_sentence)
    if found is not None:
        return found
    clauses = [c for c in _CLAUSES.split(claim) if len(words(c)) >= MIN_CLAUSE_WORDS]
    if len(clauses) < 2:
        return None
    return next(
        (r for c in clauses if (r := _opposite_words(c, evidence_sentence)) is not None), None
    )


MIN_CLAUSE_WORDS = 3  # words of a claim's clause read on its own


def _stems(text: str) -> dict[str, str]:
    """Stems of the words of ``text`` (and of the parts of hyphenated ones), each with the
    word it came from."""
    found: dict[str, str] = {}
    for word in words(text):
        found.setdefault(stem(word), word)
        if "-" in word:
            for part in word.split("-"):
                if part:
                    found.setdefault(stem(part), part)
    return found


_UNTIL = re.compile(r"\b(?:until|till|through|up to)\b", re.IGNORECASE)
_OPEN_UNTIL = frozenset({stem("open"), stem("closed"), stem("close"), stem("closes")})


def _opposite_words(claim: str, evidence_sentence: str) -> str | None:
    claim_words = _stems(claim)
    claim_stems = set(claim_words)
    if _UNTIL.search(claim):  # "open until the end of week 2" = "closes at the end of week 2"
        claim_stems -= _OPEN_UNTIL
    evidence_words = _stems(evidence_sentence)
    evidence_stems = set(evidence_words)
    # "no user limit" against "unlimited": a negation and a negating prefix say the same
    claim_negated = negated(claim)
    for word in sorted(claim_stems - evidence_stems):
        found = None if claim_negated else _prefix_opposite(word, evidence_stems)
        if found is None or found in claim_stems:
            found = next(
                (
                    o
                    for o in sorted(OPPOSITE.get(word, frozenset()))
                    if o in evidence_stems and o not in claim_stems
                ),
                None,
            )
        if (
            found is not None
            and not _apart(claim, claim_words[word], evidence_sentence, evidence_words[found])
            and not _denied_word(evidence_sentence, evidence_words[found])
            and not _denied_word(claim, claim_words[word])
        ):
            return (
                f"opposite meaning: the claim says '{claim_words[word]}', the evidence "
                f"says '{evidence_words[found]}'"
            )
    return None


def prefixed_denial(claim: str, evidence_sentence: str) -> bool:
    """Whether the claim says with a negating prefix what the evidence negates ("unaffected"
    for "not affected", "unpaid" for "not paid")."""
    return any(
        word.lower().startswith(prefix)
        and len(word) - len(prefix) >= MIN_ROOT - 1
        and _denied_word(evidence_sentence, word.lower()[len(prefix) :])
        for word in words(claim)
        for prefix in _NEGATING_PREFIXES
    )


def _denied_word(text: str, word: str) -> bool:
    """Whether ``text`` negates ``word`` right before it ("not affected", "isn't open"): it then
    says what the word's opposite says ("unaffected", "closed")."""
    pattern = rf"(?:\b(?:not|never|no)|n['’]t)\s+(?:\w+\s+)?{re.escape(word)}\b"
    return re.search(pattern, text, re.IGNORECASE) is not None


_CLAUSES = re.compile(r"[;:()]|,\s|\.\s|\s(?:but|while|whereas|although|and)\s|\s[-–—]\s")
_GENERIC_SCOPE = frozenset(stem(w) for w in ("it", "is", "are", "be", "the", "you", "we", "they"))


def _apart(claim: str, said: str, evidence: str, opposite: str) -> bool:
    """Whether the clause of the claim holding ``said`` and the clause of the evidence
    holding its ``opposite`` are about different things: each has words of its own, and they
    share none ("during the week it's open 8:00 to 18:30" against "it is closed at
    weekends")."""
    mine = _clause_stems(claim, said)
    theirs = _clause_stems(evidence, opposite)
    return bool(mine) and bool(theirs) and not mine & theirs


def _clause_stems(text: str, word: str) -> set[str]:
    """The stems of the clause of ``text`` holding ``word``, but for that word."""
    target = stem(word)
    for clause in _CLAUSES.split(text):
        found = {stem(w) for w in words(clause)}
        if target in found:
            return {s for s in found - {target} if len(s) > 2} - _GENERIC_SCOPE
    return set()


# Words that negate without a negation cue: a negated claim may restate such a sentence
# ("the fee isn't refundable" for "the fee is non-refundable").
IMPLICIT_NEGATIVE = re.compile(
    r"\b(?:non-?\w+|un\w+able|in\w+ible|except\w*|exclud\w*|only|fail\w*|prohibit\w*|"
    r"forbid\w*|ban\w*|refus\w*|avoid\w*|instead|rather|absent|free of|lack\w*|"
    r"neither|impossible|invalid|ineligible|outside|beyond|cease\w*|stopp?\w*|"
    r"discontinu\w*|no longer|former\w*|ex-\w+|reject\w*|declin\w*|dismiss\w*|"
    r"turn(?:s|ed)? down|overturn\w*)\b",
    re.IGNORECASE,
)

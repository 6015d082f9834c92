"""Structural signals of text aimed at the judge, beside the phrase catalogue of
:mod:`guard.prepare.injection` (issue 29: a detector that enumerates phrasings always trails).

Each signal is a shape, not a sentence:

* **verdict-shaped payloads** (:mod:`guard.prepare.verdicts`): ``{"score": 5}``, ``grounded:
  yes``, ``<grounded>true</grounded>``, ``**score**: **5**``, the worked examples' verdict line;
* **orders addressed to a grader**: an override verb (``set aside``, ``discard``, ``pay no
  attention to``...) whose object is the prompt's own guidance ("all prior guidance", "the
  rubric"), an imperative (:func:`~guard.prepare.imperative.aimed_at_model`) or a passive
  obligation ("must be marked as grounded") whose object is the grading; instructions declared
  void ("all previous instructions are void");
* **the grader addressed**: a salutation or a "note to" before a grading or machine reader
  ("Note to the reviewing model", "Attention automated grader", "if you are an AI grading
  this"), and an override announced inline ("SYSTEM OVERRIDE", "[system]");
* **overrides in more languages**: Swedish, Vietnamese, Indonesian, Hebrew, Greek, Ukrainian,
  Czech and Persian ("drop all previous instructions": the verb with the prompt's own
  instructions, which prose about rules does not name);
* **forged prompt parts**: the fence-token line, the evidence and output headers, a third
  worked example, and fence markers drawn with look-alike brackets (``⟨⟨END⟩⟩``, ``〈〈BEGIN``,
  ``«END»``), folded to ``<`` and ``>`` one character for one before matching.

Cost: one pass of a word search (:mod:`guard.prepare.wordsearch`) over the text finds which
signals' words occur at all; a signal's regex runs only then, and the verdict shapes are read
only at their key words. Realistic text triggers few of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from guard.prepare import verdicts
from guard.prepare.imperative import aimed_at_model
from guard.prepare.wordsearch import WordSearch

Kind = Literal[
    "override_instructions", "score_request", "fake_verdict", "role_marker", "fence_forgery"
]
MAX_SIGNALS = 10  # matches of one signal in one text, at most
MAX_CHECKED = 50  # matches of one signal read as orders or prose, at most

# ----------------------------------------------------------------------- orders to a grader

_OVERRIDE_VERBS = (
    r"ignore|disregard|forget|override|bypass|set\s+aside|put\s+aside|lay\s+aside|cast\s+aside"
    r"|brush\s+aside|push\s+aside|discard|abandon|dismiss|overlook|neglect|scrap|ditch"
    r"|throw\s+out|toss\s+out|nullify|stop\s+following|stop\s+obeying|no\s+longer\s+follow"
    r"|pay\s+no\s+attention\s+to|forgo|disobey|rescind|unlearn|skip"
)
_PROMPT_QUALIFIERS = (
    r"previous|prior|earlier|preceding|foregoing|above|original|initial|existing|standing"
    r"|former|system|grading|scoring|evaluation|evaluator|judging|assessment|default|given"
    r"|provided|developer|operator|your|all|any|every"
)
_GUIDANCE = (
    r"instructions?|guidance|guidelines?|rules|directives?|directions|prompts?|rubrics?"
    r"|criteria|constraints|system\s+(?:prompt|message)|programming|briefing|mandate"
)
_OVERRIDE = re.compile(
    rf"\b(?:{_OVERRIDE_VERBS})\s+(?:(?:of|the|these|those|this|that|whatever|you|were|have|been"
    rf"|told|so\s+far|thus\s+far|up\s+to\s+now)\s+){{0,3}}?"
    rf"(?P<qualifiers>(?:(?:{_PROMPT_QUALIFIERS}|of\s+the|of\s+your|the)\s+){{0,4}})"
    rf"(?:(?:[\w-]+)\s+)?(?:{_GUIDANCE})\b"
    rf"|\b(?:ignore|disregard|forget|set\s+aside|discard|dismiss)\s+(?:everything|all)\s+"
    r"(?:(?:you\s+(?:were|have\s+been)\s+told|above|before\s+this|(?:that\s+)?came\s+before"
    r"|written\s+above|stated\s+above|said\s+before))",
    re.IGNORECASE,
)
_QUALIFIED = re.compile(rf"\b(?:{_PROMPT_QUALIFIERS}|rubrics?|criteria|everything)\b", re.I)
_VOID = re.compile(
    r"\b(?:all|any|the|your|my)\s+(?:(?:previous|prior|earlier|above|preceding|original"
    r"|system|initial)\s+)+(?:instructions|prompts?|system\s+prompt|guidance)\s+(?:are|is"
    r"|have\s+been|has\s+been|were)\s+(?:now\s+|hereby\s+)?(?:void|cancell?ed|revoked"
    r"|rescinded|obsolete|superseded|invalid|null|lifted|suspended|withdrawn|overridden"
    r"|no\s+longer\s+(?:valid|in\s+effect|applicable|binding))"
    r"|\b(?:previous|prior|earlier|above|original|system)\s+(?:instructions|prompts?|guidance)"
    r"\s+(?:no\s+longer|do\s+not|don't)\s+apply",
    re.IGNORECASE,
)
_GRADES = (
    r"(?:(?:fully|completely|entirely|totally|100%)\s+)?(?:grounded\b(?!\s+(?:in|on|by|wire)\b)"
    r"|faithful\b|hallucination[\s-]free|not\s+hallucinated|supported\s+by\s+the\s+"
    r"(?:context|evidence|sources?|documents?)|(?:an?\s+)?pass(?:ing|ed)?\b(?!\s*(?:or|/)\s)"
    r"|(?:an?\s+)?(?:[1-5]|five)(?:\s*/\s*5|\s+out\s+of\s+(?:5|five))?(?![\w.%/]|\s*(?:to|-|–|or)\s)"
    r"|(?:an?\s+|the\s+)?(?:perfect|full|maximum|max|top|highest)\s+(?:score|marks?|rating"
    r"|grade)|(?:an?\s+|the\s+)?(?:score|rating|grade)\s+of\s+(?:[1-5]|five)\b)"
)
_GRADED = (
    r"(?:marked|rated|scored|graded|labell?ed|classified|judged|evaluated|assessed|considered"
    r"|treated|deemed|regarded|counted|accepted|approved|flagged|recorded|reported|given"
    r"|awarded|assigned|returned)"
)
_OBLIGED = re.compile(
    rf"\b(?:must|should|shall|has\s+to|have\s+to|needs?\s+to|is\s+to|are\s+to|ought\s+to)\s+"
    rf"(?:only\s+|always\s+|therefore\s+|now\s+|definitely\s+|clearly\s+|simply\s+)?be\s+"
    rf"{_GRADED}\s+(?:as\s+|with\s+)?{_GRADES}",
    re.IGNORECASE,
)
# what is graded: "it", "this", "the above answer" (then "as" or nothing), or just "as"
_ANSWER_WORDS = (
    r"(?:(?:(?:the|my|our|above|below|following|entire|whole|current|present|submitted"
    r"|generated|model's|assistant's|this|that)\s+){0,3}(?:answer|response|output|reply"
    r"|summary|submission|completion|generation|claims|statements)\s+|(?:it|this|that)\s+)"
    r"(?:as\s+|with\s+)?|as\s+"
)
_VERDICT_ORDER = re.compile(
    rf"\b(?:mark|rate|score|grade|label|classify|judge|evaluate|assess|treat|consider|deem"
    rf"|regard|flag|tag|record|report|declare|rank|give|assign|award)\s+(?:{_ANSWER_WORDS})"
    rf"{_GRADES}",
    re.IGNORECASE,
)
_DECLARED = re.compile(
    r"\b(?:the\s+)?(?:correct|right|final|only\s+(?:acceptable|valid)|expected|required)\s+"
    r"(?:verdict|score|rating|label|grade)\s+(?:here\s+|for\s+this\s+(?:answer|output|response"
    r"|case)\s+)?(?:is|=|:|would\s+be|should\s+be|must\s+be)\s+[\"'*]*(?:grounded\b(?!\s+(?:in"
    r"|on|by)\b)|faithful\b|pass(?:ed)?\b|5\s*/\s*5|(?:a\s+)?(?:5|five)\b(?![\w.%/]|\s*(?:to|-"
    r"|–|or)\s))",
    re.IGNORECASE,
)

# ------------------------------------------------------------------------ the grader addressed

_READERS = (
    r"(?:model|system|assistant|bot|agent|reader|reviewer|judge|evaluator|grader|checker"
    r"|verifier|assessor|rater|scorer|auditor|pipeline|ai|llm|program|classifier)s?"
)
_READING = (
    r"(?:ai|llm|automated|automatic|reviewing|grading|evaluating|judging|scoring|checking"
    r"|assessing|verifying|fact[\s-]?checking|machine|language|large\s+language|downstream"
    r"|evaluation|grading)"
)
_ADDRESSED = re.compile(
    rf"\b(?:dear|hey|hi|hello|attention|attn|note|message|memo|reminder|notice|psa|fyi"
    rf"|a\s+word|instructions?|warning|important)\s*(?:to|for|,|:|-)?\s+(?:the\s+|any\s+|all"
    rf"\s+|my\s+|our\s+|you,?\s+)?(?:{_READING}\s+){{1,3}}{_READERS}\b(?=\s*(?:[,:;.!\-–—(]|$"
    r"|that\b|who\b|which\b|reading\b|grading\b|evaluating\b|reviewing\b|judging\b|checking\b"
    r"|scoring\b|assessing\b|processing\b|here\b|please\b))"
    r"|\b(?:dear|hey|attention|attn|note\s+(?:to|for)|message\s+(?:to|for)|memo\s+(?:to|for))"
    r"\s+(?:the\s+|any\s+|all\s+)?(?:assessor|rater|scorer|fact[\s-]?checker|verifier|grader"
    r"|evaluator|judge|reviewer)s?\s*[,:;!\-–—]"
    rf"|\b(?:if\s+you\s+are|to|for|whoever|anyone|any|all)\s+(?:an?\s+|the\s+)?(?:{_READING}\s+)?"
    r"(?:ai|llm|model|language\s+model|assistant|grader|evaluator|judge|system)s?\s+(?:that\s+"
    r"is\s+|who\s+is\s+|currently\s+)?(?:reading|grading|evaluating|judging|reviewing|checking"
    r"|scoring|assessing|processing|verifying)\s+(?:this|these|the\s+(?:answer|output|response"
    r"|text|following))",
    re.IGNORECASE | re.MULTILINE,
)
_INLINE_OVERRIDE = re.compile(
    r"\b(?i:system|admin(?:istrator)?|developer|root|operator|priority|master|sudo|judge|grader"
    r"|evaluator|prompt)\s*[-_ ]?\s*(?i:override)\b"
    r"|\b(?i:god|jailbreak|dan|unrestricted)\s+(?i:mode)\b"
    r"|\b(?:SYSTEM|ADMIN|DEVELOPER|OPERATOR|ROOT)\s+(?:MESSAGE|INSTRUCTIONS?|PROMPT|DIRECTIVE"
    r"|COMMAND|OVERRIDE|NOTE)\b"
    r"|[\[(【{]\s*(?i:system|sys|admin|developer|assistant|instructions?)\s*(?i:message|note"
    r"|prompt)?\s*[\])】}]"
    r"|\b(?i:(?:new|updated|revised)\s+(?:system\s+prompt|directive|system\s+message))\b"
    r"|\b(?i:(?:begin|start|end)\s+(?:of\s+)?(?:system|admin|developer)\s+(?:prompt|message"
    r"|instructions?))\b"
)

# ----------------------------------------------------------------------- more languages

_LANGUAGES = re.compile(
    # Swedish, Czech, Indonesian
    r"\b(?:ignorera|strunta\s+i|bortse\s+från|glöm)\s+(?:alla\s+|samtliga\s+)?(?:tidigare\s+"
    r"|föregående\s+|ovanstående\s+|dina\s+)?(?:instruktioner(?:na)?|anvisningar(?:na)?|regler"
    r"(?:na)?)\b"
    r"|\b(?:ignoruj(?:te)?|zapomeň(?:te)?|nevšímej\s+si|nedbej(?:te)?)\s+(?:všechny\s+|všech\s+)?"
    r"(?:předchozí(?:ch)?\s+|dřívější(?:ch)?\s+|výše\s+uvedené\s+|své\s+)?(?:pokyny|pokynů"
    r"|instrukce|instrukcí|příkazy|pravidla)"
    r"|\b(?:abaikan|lupakan|acuhkan)\s+(?:semua\s+|seluruh\s+)?(?:instruksi|petunjuk|perintah"
    r"|aturan|arahan)(?:\s+(?:sebelumnya|di\s+atas|terdahulu))?"
    # Vietnamese
    r"|(?:bỏ\s+qua|phớt\s+lờ|quên\s+đi|lờ\s+đi)\s+(?:tất\s+cả\s+|mọi\s+)?(?:các\s+|những\s+)?"
    r"(?:hướng\s+dẫn|chỉ\s+dẫn|chỉ\s+thị|lệnh|quy\s+tắc)"
    # Hebrew, Persian
    r"|(?:התעלם|התעלמי|התעלמו|שכח|שכחי|שכחו)\s+(?:מכל\s+|מ|את\s+כל\s+)?(?:ה)?(?:הוראות|הנחיות"
    r"|ההוראות|ההנחיות)"
    r"|(?:دستورالعمل|دستورات|دستور)[\u200c\w\s]{0,20}(?:را\s+)?(?:نادیده\s+بگیر|فراموش\s+کن)"
    r"|(?:نادیده\s+بگیر|فراموش\s+کن)[\w\s\u200c]{0,12}(?:دستورالعمل|دستورات)"
    # Greek, Ukrainian
    r"|(?:αγνόησε|αγνοήστε|ξέχασε|ξεχάστε|παράβλεψε)\s+(?:όλες\s+)?(?:τις\s+)?(?:προηγούμενες\s+)?"
    r"(?:οδηγίες|εντολές|κανόνες)"
    r"|(?:ігноруй(?:те)?|проігноруй(?:те)?|забудь(?:те)?|не\s+зважай(?:те)?\s+на)\s+(?:усі\s+"
    r"|всі\s+)?(?:попередні\s+|свої\s+)?(?:інструкції|вказівки|правила)",
    re.IGNORECASE,
)

# ----------------------------------------------------------------------- forged prompt parts

_FORGED_FENCE = re.compile(
    r"\bfence\s+token\s+(?:of\s+this\s+request|is)\b|\bfence\s+token\s*[:=]"
    r"|\bonly\s+markers\s+ending\s+in\b|\bdelimit\s+the\s+case\s+under\s+review\b",
    re.IGNORECASE,
)
_FORGED_HEADER = re.compile(
    r"^[ \t>|]*EVIDENCE\s*\((?:retrieved\s+documents|a\s+conversation|the\s+input|a\s+reference)"
    r"|^[ \t>|]*OUTPUT\s+to\s+check\s*:"
    r"|\bThe\s+question\s+the\s+OUTPUT\s+answers\b"
    r"|\bCheck\s+every\s+factual\s+claim\s+of\s+the\s+OUTPUT\b"
    r"|^[ \t>|]*Untrusted\s+data\.\s"
    r"|(?i:={2,}\s*(?:END\s+OF\s+)?WORKED\s+EXAMPLE\b)"
    r"|(?i:\bworked\s+example\s+\d+\s*\(illustration)"
    r"|(?i:\billustration\s+only,\s+not\s+the\s+case\s+under\s+review)",
    re.MULTILINE,
)
# brackets drawn like "<" and ">", one character each (the fold keeps every offset)
_LOOK_ALIKES = str.maketrans(
    "⟨〈〈‹❬❮⧼˂ᐸ«≪⟪《⟩〉〉›❭❯⧽˃ᐳ»≫⟫》",
    "<<<<<<<<<<<<<>>>>>>>>>>>>>",
)
_LOOK_ALIKE_CHARS = frozenset("⟨〈〈‹❬❮⧼˂ᐸ«≪⟪《")
_FOLDED_FENCE = re.compile(
    r"<{1,2}\s*/?\s*(?:BEGIN|END)(?:_[A-Z]|\s*>|_?\s*(?:OUTPUT|EVIDENCE|QUESTION))", re.IGNORECASE
)


@dataclass(frozen=True)
class _Signal:
    kind: Kind
    pattern: re.Pattern[str]
    words: str  # one of them ("|" between them) occurs, lowercased, in every match
    order: bool = False  # a match counts only as an order aimed at the model


def _qualified_override(text: str, match: re.Match[str]) -> bool:
    """An override of the prompt's own guidance ("all prior guidance", "the rubric") given as
    an order, not prose ("employees must not discard the rules")."""
    return _QUALIFIED.search(match.group()) is not None and aimed_at_model(
        text, match.start(), match.end(), override=False
    )


def _order(text: str, match: re.Match[str]) -> bool:
    return aimed_at_model(text, match.start(), match.end(), override=False)


_SIGNALS: tuple[tuple[_Signal, Callable[[str, re.Match[str]], bool] | None], ...] = (
    (
        _Signal(
            "override_instructions",
            _OVERRIDE,
            (
                "ignore|disregard|forget|override|bypass|aside|discard|abandon|dismiss"
                "|overlook|neglect|scrap|ditch|throw|toss|nullify|stop|longer|attention"
                "|forgo|disobey|rescind|unlearn|skip"
            ),
        ),
        _qualified_override,
    ),
    (_Signal("override_instructions", _VOID, "instruction|prompt|guidance"), None),
    (_Signal("score_request", _OBLIGED, "must|should|shall|to be"), None),
    (
        _Signal(
            "score_request",
            _VERDICT_ORDER,
            (
                "mark|rate|score|grade|label|classify|judge|evaluate|assess|treat"
                "|consider|deem|regard|flag|tag|record|report|declare|rank|give|assign"
                "|award"
            ),
        ),
        _order,
    ),
    (_Signal("score_request", _DECLARED, "verdict|score|rating|label|grade"), None),
    (
        _Signal(
            "override_instructions",
            _ADDRESSED,
            (
                "dear|hey|hello|attention|attn|note|message|memo|reminder|notice|psa"
                "|fyi|instruction|warning|important|reading|grading|evaluating"
                "|judging|reviewing|checking|scoring|assessing|processing|verifying"
            ),
        ),
        None,
    ),
    (
        _Signal(
            "role_marker",
            _INLINE_OVERRIDE,
            "override|mode|system|admin|developer|operator|root|instruction",
        ),
        None,
    ),
    (
        _Signal(
            "override_instructions",
            _LANGUAGES,
            (
                "ignorera|strunta|bortse|glöm|ignoruj|zapome|nevšímej|nedbej|abaikan"
                "|lupakan|acuhkan|bỏ|phớt|lờ|quên|התעלם|שכח|نادیده|فراموش|αγνόη"
                "|αγνοή|ξέχα|ξεχά|παράβλεψε|ігнор|проігнор|забуд|зважа"
            ),
        ),
        None,
    ),
    (_Signal("fence_forgery", _FORGED_FENCE, "fence|markers|delimit"), None),
    (_Signal("role_marker", _FORGED_HEADER, "evidence|output|untrusted|example"), None),
)
_VERDICT_BIT = 1 << len(_SIGNALS)
_LOOK_ALIKE_BIT = _VERDICT_BIT << 1


def _word_table() -> tuple[WordSearch, list[int]]:
    bits: dict[str, int] = {}
    for index, (signal, _) in enumerate(_SIGNALS):
        for word in signal.words.split("|"):
            bits[word] = bits.get(word, 0) | 1 << index
    for word in verdicts.ANCHOR_WORDS:
        bits[word] = bits.get(word, 0) | _VERDICT_BIT
    for char in _LOOK_ALIKE_CHARS:
        bits[char] = bits.get(char, 0) | _LOOK_ALIKE_BIT
    return WordSearch(list(bits)), list(bits.values())


_WORDS, _WORD_BITS = _word_table()
_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def _lowered(text: str) -> str:
    """``text`` lowercased, offsets kept (ASCII letters only where lowering changes a length)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return (
        text.encode("utf-8", "surrogatepass")
        .translate(_ASCII_LOWER)
        .decode("utf-8", "surrogatepass")
    )


def _matches(
    signal: _Signal, keep: Callable[[str, re.Match[str]], bool] | None, text: str
) -> Iterator[tuple[Kind, int, int]]:
    """At most :data:`MAX_SIGNALS` matches of ``signal`` that ``keep`` keeps; past
    :data:`MAX_CHECKED` matches every one counts (a text that full of them is suspect, and
    the checks stay bounded)."""
    count = 0
    for seen, match in enumerate(signal.pattern.finditer(text)):
        if keep is None or seen >= MAX_CHECKED or keep(text, match):
            yield signal.kind, match.start(), match.end()
            count += 1
            if count >= MAX_SIGNALS:
                return


def find(text: str) -> Iterator[tuple[Kind, int, int]]:
    """``(kind, start, end)`` of every structural signal in ``text`` (see the module
    docstring), at most :data:`MAX_SIGNALS` per signal."""
    found = 0
    anchors: list[int] = []
    for word, start in _WORDS.find(_lowered(text)):
        bits = _WORD_BITS[word]
        found |= bits
        if bits & _VERDICT_BIT:
            anchors.append(start)
    for index, (signal, keep) in enumerate(_SIGNALS):
        if found >> index & 1:
            yield from _matches(signal, keep, text)
    if anchors:
        for start, end in verdicts.find(text, anchors):
            yield "fake_verdict", start, end
    if found & _LOOK_ALIKE_BIT:
        folded = text.translate(_LOOK_ALIKES)
        for match in _FOLDED_FENCE.finditer(folded):
            yield "fence_forgery", match.start(), match.end()

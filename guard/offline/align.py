"""The evidence, indexed once per case, and the alignment of a claim to its best sentence.

Support is the weighted share of a claim's content words that the evidence contains. Words
match by stem, by synonym group, or by a shared long prefix ("Indian" / "India"); names weigh
more than ordinary words, and very general words ("thing", "item") weigh less.

Every lookup is bounded: words are found through an inverted index and close forms through
buckets of their first letters, so a claim costs time in proportion to its own words and the
sentences that share them, never the product of two whole texts.

Why one module of this length: the evidence index and the alignment measures it serves
(support, local support, best sentence, order) change together; every offline rule reads them
through this one module.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from guard.case import Passage
from guard.offline import compact, entities, numbers, times
from guard.offline.compact import SEPARATORS, Compact
from guard.offline.lexicon import european
from guard.offline.numbers import Quantity, QuantityIndex
from guard.offline.text import (
    GENERIC,
    Span,
    content_stems,
    normalize,
    split_sentences,
    word_set,
)

T = TypeVar("T")

MIN_PREFIX = 5
BUCKET = 4  # close forms share at least this many first letters
MAX_CANDIDATES = 12  # sentences scored in full for one claim
MAX_SCANNED = 16  # amounts of one claim or sentence compared one by one
MAX_SEQUENCE = 80  # stems of a sentence compared in order
# sentences of the evidence read per case: far more than the default 4,000-character budget
# can hold ("A. B. ..." gives 1,334); a larger budget past it leaves every claim undecided
MAX_SENTENCES = 5_000
PASSAGE_CACHE_SIZE = 256  # passages whose sentences are remembered (see _sentences); small:
# an entry holds a passage of up to max_context_chars, about ten times over as sentences
MAX_NAMED_SENTENCES = 200  # sentences whose names are read for abbreviations
FOREIGN_SAMPLE = 8  # sentences read to tell the evidence's language
MAX_ACRONYMS = 16  # acronyms of one case looked for as initials of evidence words
MIN_WRITTEN = 3  # characters of a code looked for in the compact evidence
MAX_PATTERN_CODE = 64  # longer codes are looked for without compiling a pattern of them
_LABEL_WORD = re.compile(r"^\s*(?:version|release|build)\s*", re.IGNORECASE)
_DEMONYM_SUFFIXES = ("ians", "ian", "ans", "an", "ish", "ese", "ic", "i")


_FIELD = re.compile(r"[A-Z][\w ]{0,24}:\s")  # "Status: shipped", "Estimated delivery: June 6"
# "The company employs ...": a definite class noun refers back to the passage's subject.
_DEFINITE = re.compile(r"(?:The|This|That|These|Those|Such) ([a-z]+)\b")
_CLASS_NOUNS = word_set("""
company companies firm group organization organisation business brand bank store shop chain
tower building bridge church museum station airport hospital clinic school university college
film movie album song single band series show episode book novel magazine newspaper game team
club city town village country state region area island river lake mountain park product
device model service plan policy program programme app application software system platform
project event festival tournament race ship vessel aircraft car vehicle player actor actress
singer artist writer author director president man woman person family couple order package
item account course drug treatment procedure
""")
_PRONOUN_OPENERS = frozenset(
    {
        "it",
        "he",
        "she",
        "they",
        "its",
        "his",
        "her",
        "their",
        "this",
        "these",
        "those",
        "that",
        "there",
        "such",
        "both",
    }
)


@dataclass(frozen=True)
class EvidenceSentence:
    """A sentence of the evidence; ``scope`` adds the sentence before it when this one opens
    with a pronoun ("It has a population of ..."), so a claim may draw on both."""

    text: str
    passage: str
    stems: frozenset[str]
    quantities: tuple[Quantity, ...]
    scope: frozenset[str] = frozenset()
    clock: tuple[times.TimeOfDay, ...] = ()
    days: tuple[times.Weekdays, ...] = ()
    values: frozenset[float] = frozenset()  # its amounts' values, for an exact lookup
    sequence: tuple[str, ...] = ()  # its stems in order (after those it refers back to)

    def states(self, quantity: Quantity) -> bool:
        """Whether this sentence states ``quantity`` (exactly, or as a date or hedged)."""
        if round(quantity.value, 6) in self.values or (
            quantity.number and round(quantity.number, 6) in self.values
        ):
            return True
        if quantity.kind in ("date", "year") or quantity.hedged:
            return numbers.supported(quantity, list(self.quantities[:MAX_SCANNED]))
        return False


@dataclass
class EvidenceIndex:
    """Sentences of every passage with their stems and quantities, plus corpus-wide sets."""

    sentences: list[EvidenceSentence]
    stems: set[str] = field(default_factory=set)
    quantities: list[Quantity] = field(default_factory=list)
    normalized: str = ""
    amounts: QuantityIndex = field(default_factory=lambda: QuantityIndex([]))
    clock: list[times.TimeOfDay] = field(default_factory=list)
    days: set[int] = field(default_factory=set)
    _postings: dict[str, list[int]] = field(default_factory=dict)
    _buckets: dict[str, list[str]] = field(default_factory=dict)
    _related: dict[str, frozenset[str]] = field(default_factory=dict)
    _names: list[entities.Name] | None = None
    passages: tuple[Passage, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)  # label -> "id: .., source: .."
    texts: dict[str, str] = field(default_factory=dict)  # label -> its header and text
    capped: bool = False  # the evidence had more than MAX_SENTENCES: the rest was not read
    _lines: dict[str, str] | None = None  # label -> entities.word_line of its text
    _labels_of: dict[str, list[str]] | None = None  # a word in lower case -> labels having it
    _foreign: bool | None = None  # read on first use (see foreign())
    _spelled: dict[str, bool] = field(default_factory=dict)  # acronym -> spells_out()
    _written: dict[str, bool] = field(default_factory=dict)  # code -> writes()
    _compact: Compact | None = None  # the normalized evidence without separators (writes())

    @classmethod
    def build(
        cls, passages: tuple[Passage, ...] | list[Passage], evidence: str, labels: str = ""
    ) -> EvidenceIndex:
        """The index of ``passages`` (``evidence``: their rendered text; ``labels``: the
        documents' producer-given ids and sources, one ``[n] id: ..., source: ...`` line each,
        which say who wrote what)."""
        units = list(passages) or [Passage("evidence", evidence)]
        sentences: list[EvidenceSentence] = []
        for passage in units:
            if len(sentences) > MAX_SENTENCES:
                break  # the rest is never read: ``capped`` says so
            sentences.extend(_sentences(passage))
        index = cls(
            sentences[:MAX_SENTENCES],
            normalized=normalize(evidence),
            passages=tuple(units),
            headers=_headers(labels),
            capped=len(sentences) > MAX_SENTENCES,
        )
        sentences = index.sentences
        index.texts = {p.label: f"{index.headers.get(p.label, '')}\n{p.text}" for p in units}
        for number, sentence in enumerate(sentences):
            index.stems.update(sentence.stems)
            index.quantities.extend(sentence.quantities)
            index.clock.extend(sentence.clock)
            index.days.update(d for w in sentence.days for d in w.days)
            for stem in sentence.scope:
                index._postings.setdefault(stem, []).append(number)
        for header in index.headers.values():  # "source: cardiology letter, Dr Hughes, 2 May"
            index.stems.update(content_stems(header))
            index.quantities.extend(numbers.extract(header))
        for stem in index.stems:
            index._buckets.setdefault(stem[:BUCKET], []).append(stem)
        index.amounts = QuantityIndex(index.quantities)
        return index

    def close_forms(self, word: str) -> frozenset[str]:
        """The evidence stems that are ``word`` or a close form of it."""
        if word not in self._related:
            bucket = self._buckets.get(word[:BUCKET], []) if len(word) >= BUCKET else []
            forms = {o for o in bucket if related(word, o)}
            if word in self.stems:
                forms.add(word)
            if not forms and len(word) >= BUCKET:  # demonyms differ after four letters
                forms = {o for o in self._buckets.get(word[:BUCKET], []) if related(word, o)}
            self._related[word] = frozenset(forms)
        return self._related[word]

    def names(self) -> list[entities.Name]:
        """The names of the evidence (read on first use: only an absent name needs them)."""
        if self._names is None:
            self._names = [
                n for s in self.sentences[:MAX_NAMED_SENTENCES] for n in entities.names(s.text)
            ]
        return self._names

    def naming(self, name: entities.Name) -> frozenset[str]:
        """The labels of the passages whose text (with its header) names ``name`` (see
        :meth:`entities.Name.named_in`), through a word index of the passages read on first
        use: a name costs the passages holding its first word, not every passage."""
        lines, labels_of = self._lines, self._labels_of
        if lines is None or labels_of is None:  # built whole, then published (threads share it)
            lines, labels_of = {}, {}
            for label, text in self.texts.items():
                lines[label] = line = entities.word_line(text)
                for word in dict.fromkeys(line.split()):
                    labels_of.setdefault(word, []).append(label)
            self._lines, self._labels_of = lines, labels_of
        first = entities.first_word(name.text)
        candidates = labels_of.get(first, []) if first is not None else list(self.texts)
        return frozenset(
            label for label in candidates if name.named_in(self.texts[label], lines[label])
        )

    def foreign(self) -> bool:
        """Whether the evidence reads as Spanish, German or French (an English answer then
        translates its names: "Munich" for "München"), judged on its first sentences."""
        if self._foreign is None:
            self._foreign = european(" ".join(s.text for s in self.sentences[:FOREIGN_SAMPLE]))
        return self._foreign

    def spells_out(self, acronym: str) -> bool:
        """Whether the evidence spells ``acronym`` out as the initials of its words
        (:func:`entities.initials_in`), remembered per acronym: one scan of the evidence
        each, at most ``MAX_ACRONYMS`` scans per case."""
        key = acronym.lower()
        if key not in self._spelled:
            if len(self._spelled) >= MAX_ACRONYMS:
                return True  # not looked for: maybe spelled out, so no proof of absence
            self._spelled[key] = entities.initials_in(acronym, self.normalized)
        return self._spelled[key]

    def writes(self, text: str) -> bool:
        """Whether the evidence writes the letters and digits of ``text`` in a row, whatever
        separates them ("AB-1234" / "AB1234", "Version 2.1" / "v2.1"): remembered per text,
        at most ``MAX_ACRONYMS`` searches per case (past that, not found)."""
        wanted = SEPARATORS.sub("", normalize(_LABEL_WORD.sub("", text)))
        if len(wanted) < MIN_WRITTEN:
            return False
        if wanted not in self._written:
            if len(self._written) >= MAX_ACRONYMS:
                return False
            longest = max(re.findall(r"[^\W_]+", wanted) or [""], key=len)
            found = False
            if longest in self.normalized:  # the cheap test first: most codes are not there
                found = self._written_in(wanted)
            self._written[wanted] = found
        return self._written[wanted]

    def _written_in(self, wanted: str) -> bool:
        """A short code by its pattern (cheap to compile, no pass over the evidence to
        build); a long one through :class:`Compact` (a pattern costs time in its length to
        compile: 85 ms for 3,900 characters). Both find the same spans."""
        if len(wanted) <= MAX_PATTERN_CODE:
            return compact.written_by_pattern(wanted, self.normalized)
        if self._compact is None:
            self._compact = Compact(self.normalized)
        return self._compact.writes(wanted)

    def has(self, word: str) -> bool:
        """Whether the evidence contains ``word`` (a stem) or a close form of it."""
        return bool(self.close_forms(word))

    def spread(self, word: str) -> int:
        """In how many sentences the evidence has ``word`` or a close form of it."""
        return len({n for form in self.close_forms(word) for n in self._postings.get(form, ())})

    def candidates(self, stems: list[str]) -> list[int]:
        """The sentences sharing most of ``stems`` (close forms included), best first."""
        hits: Counter[int] = Counter()
        for stem in stems:
            seen: set[int] = set()
            for form in self.close_forms(stem):
                seen.update(self._postings.get(form, ()))
            hits.update(seen)
        return [number for number, _ in hits.most_common(MAX_CANDIDATES)]


_HEADER = re.compile(r"^(\[\d+\]) (.{1,600})$", re.MULTILINE)


def _headers(labels: str) -> dict[str, str]:
    """What the producer says of each numbered document ("id: c1, source: cardiology letter,
    Dr Hughes"): who wrote it and when, though not part of its text."""
    return {m.group(1): m.group(2) for m in _HEADER.finditer(labels)}


@lru_cache(maxsize=PASSAGE_CACHE_SIZE)
def _sentences(passage: Passage) -> tuple[EvidenceSentence, ...]:
    """The sentences of one passage, read once: the windows of one message often see the same
    documents (sentences are immutable, so they are shared)."""
    return tuple(_read_sentences(passage))


def _read_sentences(passage: Passage) -> list[EvidenceSentence]:
    found: list[EvidenceSentence] = []
    previous: frozenset[str] = frozenset()
    previous_scope: frozenset[str] = frozenset()
    topic: frozenset[str] = frozenset()  # the passage's opening sentence names its subject
    previous_order: tuple[str, ...] = ()
    spans = split_sentences(passage.text)
    # details are read once per passage (one pass of each parser), then dealt to sentences
    amounts = _deal(spans, numbers.extract(passage.text), lambda q: q.start)
    clock = _deal(spans, times.times(passage.text), lambda t: t.span[0])
    days = _deal(spans, times.weekdays(passage.text), lambda w: w.start)
    for number, span in enumerate(spans):
        order = tuple(content_stems(span.text))
        stems = frozenset(order)
        opening = span.text.split(None, 1)  # [] exactly when the sentence has no word
        first = opening[0].lower() if opening else ""
        scope = stems
        sequence = order
        if _FIELD.match(span.text):  # a field of a record continues the record
            scope = stems | previous_scope
            sequence = previous_order + order
        elif first in _PRONOUN_OPENERS or _refers_back(span.text):
            scope = stems | previous | topic
            sequence = previous_order + order
        quantities = tuple(amounts[number])
        values = frozenset(round(v, 6) for q in quantities for v in (q.value, q.number) if v)
        found.append(
            EvidenceSentence(
                span.text,
                passage.label,
                stems,
                quantities,
                scope,
                tuple(clock[number]),
                tuple(days[number]),
                values,
                sequence[-MAX_SEQUENCE:],
            )
        )
        previous, previous_scope, previous_order = stems, scope, order
        topic = topic or stems
    return found


def _deal(spans: list[Span], items: Iterable[T], start: Callable[[T], int]) -> list[list[T]]:
    """Each item in the list of the sentence span it starts in."""
    dealt: list[list[T]] = [[] for _ in spans]
    ends = [span.end for span in spans]
    for item in items:
        at = bisect_left(ends, start(item) + 1)
        if at < len(spans) and spans[at].start <= start(item):
            dealt[at].append(item)
    return dealt


def _refers_back(sentence: str) -> bool:
    match = _DEFINITE.match(sentence)
    return match is not None and match.group(1) in _CLASS_NOUNS


def in_sentence(word: str, sentence: EvidenceSentence, index: EvidenceIndex) -> bool:
    """Whether ``sentence`` (with what its pronoun refers to) has ``word`` or a close form."""
    return word in sentence.scope or not sentence.scope.isdisjoint(index.close_forms(word))


def local_support(
    stems: list[str],
    quantities: list[Quantity],
    sentence: EvidenceSentence | None,
    name_stems: set[str],
    index: EvidenceIndex,
) -> float:
    """Of the claim's words and amounts the evidence has, the weighted share found together in
    one sentence (with the sentence its opening pronoun refers back to)."""
    total = sum(weight(s, name_stems) for s in stems) + len(quantities)
    if not total:
        return 1.0
    if sentence is None:
        return 0.0
    found: float = sum(weight(s, name_stems) for s in stems if in_sentence(s, sentence, index))
    found += sum(1 for q in quantities[:MAX_SCANNED] if sentence.states(q))
    return found / total


def related(a: str, b: str) -> bool:
    """Close forms of one word: a shared prefix of at least five letters covering most of the
    shorter word, or a demonym and its place ("Scottish" / "Scotland")."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= MIN_PREFIX and long_.startswith(short) and len(long_) - len(short) <= 3:
        return True
    if _root(a) == _root(b) and len(_root(a)) >= 4:
        return True
    return _demonym_of(a, b) or _demonym_of(b, a)


def _root(word: str) -> str:
    return word[:6] if len(word) >= 7 else word


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def _demonym_of(demonym: str, place: str) -> bool:
    """ "scottish" / "scotland", "indian" / "india", "english" / "england"."""
    if not demonym.endswith(_DEMONYM_SUFFIXES):
        return False  # the cheap test first (one call): most words are no demonym
    for suffix in _DEMONYM_SUFFIXES:
        if demonym.endswith(suffix) and len(demonym) - len(suffix) >= 4:
            root = demonym[: len(demonym) - len(suffix)]
            shared = _common_prefix(root, place)
            return shared >= 4 and shared >= len(root) - 1
    return False


def weight(word: str, name_stems: set[str]) -> float:
    if word in name_stems:
        return 1.5
    return 0.5 if word in GENERIC else 1.0


def support(
    stems: list[str], index: EvidenceIndex, name_stems: set[str], quantities_found: int = 0
) -> tuple[float, list[str]]:
    """The weighted share of ``stems`` (and amounts) the evidence contains, and the stems it
    lacks."""
    total = sum(weight(s, name_stems) for s in stems) + quantities_found
    if not total:
        return 1.0, []
    missing = [s for s in stems if not index.has(s)]
    found = total - sum(weight(s, name_stems) for s in missing)
    return found / total, missing


def best_sentence(
    stems: list[str], quantities: list[Quantity], index: EvidenceIndex
) -> tuple[EvidenceSentence | None, float]:
    """The evidence sentence sharing most of the claim's words and amounts, and that share."""
    if not index.sentences:
        return None, 0.0
    numbers_of = [q for q in quantities if q.kind != "count" or q.value >= 10][:MAX_SCANNED]
    candidates = index.candidates(stems) or list(range(min(len(index.sentences), MAX_CANDIDATES)))
    wanted = list(dict.fromkeys(stems))
    best: EvidenceSentence | None = None
    best_score = -1.0
    for number in candidates:
        sentence = index.sentences[number]
        shared: float = sum(1 for s in wanted if in_sentence(s, sentence, index))
        shared += 0.5 * sum(1 for q in numbers_of if sentence.states(q))
        score = shared / max(len(wanted) + 0.5 * len(numbers_of), 1)
        if score > best_score:
            best, best_score = sentence, score
    return best, max(best_score, 0.0)


def in_order(stems: list[str], sentence: EvidenceSentence, index: EvidenceIndex) -> float:
    """The share of the claim's stems that the sentence has in the same order (the longest
    common subsequence): "X stars in Y" against "Y stars X" keeps the words, not the order."""
    claim = stems[:MAX_SEQUENCE]
    if not claim:
        return 1.0
    forms = [index.close_forms(s) | {s} for s in claim]
    row = [0] * (len(claim) + 1)
    for word in sentence.sequence:
        diagonal = 0
        for i, accepted in enumerate(forms, start=1):
            above = row[i]
            row[i] = diagonal + 1 if word in accepted else max(row[i], row[i - 1])
            diagonal = above
    return row[-1] / len(claim)

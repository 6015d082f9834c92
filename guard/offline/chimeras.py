"""Names put together from parts of other names: "Lake Erie State Park" where the evidence has
"Presque Isle State Park" on "Lake Erie"; "Rainbow Terrace Estate" from "Rainbow Terrace" and
"Lullwater Estate".

Every word of such a name is in the evidence, so the absent-name checks pass it; but no
evidence sentence writes the name, nor its words in order with at most ``MAX_INSERTED`` words
between them, and those only capitalised words or name joiners ('Matthew "The Granimal"
Granahan' still writes "Matthew Granahan"; "Rainbow Terrace, now known as Lullwater Estate"
does not write "Rainbow Terrace Estate": :func:`guard.offline.unwritten.written`). A claim naming
it names something the evidence never mentions: a failure that shows the sentence holding most
of its words and says they are not written together there.

Only a name whose words come from two or more names of the evidence is read: a name restated
with common words ("Augusta Canal" for "the canal in Augusta", "La Plata Municipality" for
"the Municipality of La Plata" when that is written as one name) may be a paraphrase.

Left alone: a one-word name; a name with "and" in it (two names read as one); a name the claim
negates; evidence in another language (names translate); a name the evidence writes with other
separators ("Berlin-Mitte" for "Berlin Mitte").
"""

from __future__ import annotations

from guard.offline import entities, unwritten
from guard.offline.align import EvidenceIndex, EvidenceSentence
from guard.offline.details import COMMON_ABBREVIATIONS, denied, short
from guard.offline.rules import AnswerView, Finding, Placed
from guard.offline.text import STOPWORDS, content_stems

MAX_INSERTED = 3  # words of the evidence between a name's words that still write the name
MIN_PARTS = 2
MAX_NAMES = 6  # names of a claim checked
SHORT_CAPS = 3  # an all-capital word this short is an abbreviation, not part of a name


def _parts(name: entities.Name) -> list[str]:
    """The stems of the name's words, without short capitals ("UK", "PO": codes and
    abbreviations, often glued to a name)."""
    kept = " ".join(w for w in name.text.split() if not (w.isupper() and len(w) <= SHORT_CAPS))
    return [s for s in content_stems(kept) if s not in STOPWORDS]


def _from_other_names(parts: list[str], index: EvidenceIndex) -> bool:
    """Whether every part belongs to some name of the evidence, and no one name has them all:
    pieces of two names ("Presque Isle State Park" and "Lake Erie"), not a name restated with
    common words ("the canal in Augusta" as "Augusta Canal")."""
    owners: list[set[str]] = []
    for part in parts:
        forms = index.close_forms(part) | {part}
        owners.append({n.text for n in index.names() if forms & set(_parts(n))})
    if not all(owners):
        return False
    return not set.intersection(*owners)


def assembled(claim: str, index: EvidenceIndex) -> tuple[str, EvidenceSentence | None] | None:
    """Why a name of ``claim`` is assembled from parts the evidence never writes together,
    with the sentence holding most of them; or None."""
    if index.foreign():
        return None
    for name in entities.names(claim, whole_answer=True)[:MAX_NAMES]:
        text = name.text.removesuffix("'s").removesuffix("’s")
        parts = _parts(entities.Name(text, name.parts))
        if (
            name.guessed
            or len(text.split()) < MIN_PARTS
            or len(parts) < MIN_PARTS
            or " and " in f" {text.lower()} "
            or text in COMMON_ABBREVIATIONS
            or denied(name, claim)
            or not all(index.has(p) for p in parts)
            or entities.quote_in(text, index.normalized)
            or index.writes(text)
        ):
            continue
        if not _from_other_names(parts, index):
            continue
        if unwritten.written(text, index) and any(
            _written(parts, index.sentences[n], index) for n in index.candidates(parts)
        ):
            continue
        closest = next(iter(index.candidates(parts)), None)
        sentence = index.sentences[closest] if closest is not None else None
        where = f' ({sentence.passage}: "{short(sentence.text)}")' if sentence else ""
        return (
            f"no document names '{text}': its words are in the evidence, never together as "
            f"that name{where}",
            sentence,
        )
    return None


def _written(parts: list[str], sentence: EvidenceSentence, index: EvidenceIndex) -> bool:
    """Whether the sentence has ``parts`` in order, at most ``MAX_INSERTED`` words apart."""
    forms = [index.close_forms(p) | {p} for p in parts]
    sequence = sentence.sequence
    for start, word in enumerate(sequence):
        if word not in forms[0]:
            continue
        at, ok = start, True
        for wanted in forms[1:]:
            window = sequence[at + 1 : at + 2 + MAX_INSERTED]
            hit = next((i for i, w in enumerate(window) if w in wanted), None)
            if hit is None:
                ok = False
                break
            at += hit + 1
        if ok:
            return True
    return False


def checked(view: AnswerView) -> list[Placed]:
    """Each undecided or supported claim naming an assembled name, failed as
    ``name_assembled``."""
    out: list[Placed] = []
    for position in view.open():
        result = view.results[position]
        found = assembled(result.claim, view.index)
        if found is not None:
            sentence = found[1] or result.sentence
            out.append((position, Finding("name_assembled", found[0], sentence)))
    return out

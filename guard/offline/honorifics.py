"""Names with a title in answers whose other words the rules do not read (Spanish, German,
French): "Frau Kessler" where the evidence names only "Frau Keller", "Mme Dupont" where it
says "Mme Durand". A titled name the evidence never writes, while it writes another name with
a title, is a wrong name in any of those languages; a title alone, or a name the evidence has
anywhere, is left alone."""

from __future__ import annotations

import re

from guard.offline.align import EvidenceIndex
from guard.offline.text import normalize

_TITLED = re.compile(
    r"\b(?:Frau|Herrn?|Mme|Madame|Monsieur|Mlle|Mademoiselle|M\.|Sr\.|Sra\.|Srta\.|Señora?|"
    r"Don|Doña|Dr\.?|Dra\.|Prof\.?|Mr\.?|Mrs\.?|Ms\.?)\s+(?P<name>[A-ZÀ-Ý][\w'’-]+)"
)


def wrong_titled_name(claim: str, index: EvidenceIndex) -> str | None:
    """Why a titled name of ``claim`` is not the evidence's, or None."""
    named = [m.group("name") for t in index.texts.values() for m in _TITLED.finditer(t)]
    if not named:
        return None
    for match in _TITLED.finditer(claim):
        name = match.group("name")
        if re.search(rf"\b{re.escape(normalize(name))}\b", index.normalized):
            continue
        return f"name '{match.group(0)}' not in evidence (it names {', '.join(named[:3])})"
    return None

"""The offline judge's rules reference, ``docs/rules.md``, generated from the registry.

Every rule of :data:`guard.offline.registry.RULES` is one row, in the order the rules run: its
name, stage, status, the calibration keys it decides with, what it checks and its first
example (an answer it fires on, and the evidence). The file is generated, never edited by
hand: ``groundguard rules-doc --write`` regenerates it and ``groundguard rules-doc --check``
fails when it drifts from the registry or a rule has no example.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from consumers import generated
from guard.offline.calibration import bundled
from guard.offline.registry import BASES, RULES
from guard.offline.rules import STAGES, Example
from guard.offline.status import status_of

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
EXAMPLE_CHARS = 160  # an example's output and evidence are cut to this many characters

HEADER = """# Offline judge rules

Generated from `guard/offline/registry.py` by `groundguard rules-doc --write`; do not edit.
`groundguard rules-doc --check` (run by `scripts/lint`) fails when this file drifts from the
registry.

Every offline decision names the rule that decided it, its *basis*, with its label as the
calibration key (`fail:number_contradicted`, `pass:verbatim`, `undecided:partial`; a
`neutral:` claim decides nothing). Within a stage the first rule that finds something decides
a claim, so the order below is the order they run in. Each rule's examples (answers it must
fire on, and answers it must not) are in `guard/offline/corpus.py`; each is judged whole by
the real offline judge in `tests/unit/test_offline_corpus.py`. A *weak* rule's confidence is
capped below any cascade threshold.

A rule's *status* comes from its out-of-fold record in the bundled calibration table
(`guard/offline/status.py`): `active` rules decide; `annotate` rules (too few labelled answers
to bound their precision above a coin flip, or never seen: every new rule) are reported on the
claim and decide nothing; `off` rules (wrong more often than right) do not run. Special cases of
one finding are counted under the rule they are a case of (`guard/offline/families.py`).

Stages, in the order a claim meets them:
{stages}.
"""


MANY_KEYS = 4  # more keys than this that share a prefix are shown as the prefix


def _cell(text: str) -> str:
    """``text`` fit for a table cell: one line, pipes and tags escaped, and invisible
    characters (bidirectional controls among them) written as escapes, never raw."""
    shown = "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in ("Cc", "Cf") else ch
        for ch in " ".join(text.split())
    )
    return shown.replace("|", "\\|").replace("<", "&lt;")


def _keys(keys: tuple[str, ...]) -> str:
    """The keys, or for many sharing a prefix ("undecided:refuted_"), the prefix and a count."""
    prefix = keys[0] if keys else ""
    for key in keys[1:]:
        while not key.startswith(prefix):
            prefix = prefix[:-1]
    if len(keys) > MANY_KEYS and prefix.endswith("_"):
        return f"`{prefix}*` ({len(keys)} keys, one per basis)"
    return ", ".join(f"`{k}`" for k in keys)


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXAMPLE_CHARS else flat[: EXAMPLE_CHARS - 3] + "..."


def _example(example: Example | None) -> str:
    if example is None:
        return ""
    context = " / ".join(example.context) if isinstance(example.context, tuple) else example.context
    asked = f"asked “{_cut(example.question)}”, " if example.question else ""
    return f"{asked}“{_cut(example.output)}” against “{_cut(context)}”"


def render() -> str:
    """The whole reference, as ``docs/rules.md`` should hold it."""
    parts = [HEADER.format(stages=", ".join(f"`{s}`" for s in STAGES))]
    table = bundled()
    for stage in STAGES:
        rules = [r for r in RULES if r.stage == stage]
        if not rules:
            continue
        parts.append(
            f"\n## Stage `{stage}`\n\n"
            "| rule | status | keys | what it checks | example |\n|---|---|---|---|---|\n"
        )
        for rule in rules:
            keys = _keys(rule.keys)
            example = _example(rule.fires[0] if rule.fires else None)
            status: str = status_of(rule, table)
            if rule.weak:
                status += ", weak"
            cells = [f"`{rule.name}`", status, keys, rule.what, example]
            parts.append("| " + " | ".join(_cell(c) for c in cells) + " |\n")
    parts.append(f"\n## Every basis ({len(BASES)})\n\n" + ", ".join(f"`{b}`" for b in BASES) + "\n")
    return "".join(parts)


def unexampled() -> list[str]:
    """The names of the rules without an example they fire on."""
    return [rule.name for rule in RULES if not rule.fires]


def write(path: Path = DOC_PATH) -> Path:
    return generated.write(path, render())


def drift(path: Path = DOC_PATH) -> list[str]:
    """What is wrong with the checked-in reference (empty: nothing): rules without an
    example, and the difference between the file and the registry."""
    problems = [f"rule {name} has no example it fires on" for name in unexampled()]
    return problems + generated.drift(path, render(), "rules.md (from the registry)")

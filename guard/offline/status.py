"""Each rule's status, from its record in a calibration table: the rules that run, and the
status ``docs/rules.md`` shows.

A rule's findings are counted under its calibration keys (a merged special case under the rule
it is a case of: :mod:`guard.offline.families`). Its status is the best of its fail and pass
keys' (:meth:`guard.offline.calibration.Calibration.status`): ``active`` if any decides, ``off``
if every one is off, else ``annotate``. A rule declared ``off`` in the registry stays off; one
with no deciding key (a neutral or undecided rule), and an answer-level decision no table
counts (``display_reordered``: it fails before any rule is read), keep the status they are
declared with. ``off`` rules do not run
(:func:`off_rules`), so a rule switched off by its record no longer hides a claim from the rules
after it; the calibration runs every rule (its checks use an empty table, where nothing is off),
so an off rule keeps a record and can come back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from guard.offline.calibration import Calibration
from guard.offline.families import family
from guard.offline.rules import Rule, RuleStatus

_RANK: dict[RuleStatus, int] = {"off": 0, "annotate": 1, "active": 2}


def deciding_keys(rule: Rule[Any]) -> tuple[str, ...]:
    """The rule's fail and pass keys, each as the calibration counts it (its family's)."""
    out = []
    for key in rule.keys:
        label, _, basis = key.partition(":")
        if label in ("fail", "pass"):
            out.append(f"{label}:{family(basis)}")
    return tuple(dict.fromkeys(out))


def status_of(rule: Rule[Any], table: Calibration) -> RuleStatus:
    """The rule's status by ``table`` (its declared ``off`` stands)."""
    keys = deciding_keys(rule)
    if rule.status == "off" or not keys:
        return rule.status
    if rule.stage == "decide" and not any(k in table.tallies for k in keys):
        return rule.status  # a decision applied before any table (display_reordered)
    return max((table.status(k) for k in keys), key=_RANK.__getitem__)


def off_rules(rules: Iterable[Rule[Any]], table: Calibration) -> frozenset[str]:
    """The names of the rules ``table`` switches off: skipped when a claim is checked."""
    return frozenset(rule.name for rule in rules if status_of(rule, table) == "off")

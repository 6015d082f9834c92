"""Rules that find the same kind of fault, merged under one name: one record, one status.

Several checks grew as special cases of one finding (a weekday is a time; a name written with
a title the evidence lacks is a name the evidence lacks). Alone, each fired too seldom on the
labelled data for its precision to be bounded, so none could decide
(:meth:`guard.offline.calibration.Calibration.status`); as what they are, cases of one rule,
they share its record. :func:`family` names the rule a finding's basis counts under: the
decision's basis, its calibration key and its status. The finding's reason still says what
the special case saw.
"""

from __future__ import annotations

FAMILIES: dict[str, tuple[str, ...]] = {
    # a time, date or weekday the evidence does not give this event
    "time_contradicted": ("weekday_contradicted", "weekday_misplaced", "time_absent"),
    # a name the evidence does not have, in any form it is written in
    "name_absent": (
        "name_part_absent",
        "name_unwritten",
        "short_name_unwritten",
        "name_assembled",
        "name_titled",
    ),
    # an order, rank or direction the amounts (the evidence's, or the answer's own) reverse
    "comparison_reversed": ("comparison_self", "direction", "rank_raised"),
    # a statement the evidence makes with the opposite polarity
    "negation": ("negation_clause", "negation_predicate", "opposite"),
    # an actor or a slot of a relation bound to another party than the evidence's
    "slot_misbound": ("doer_misbound", "agent_swapped"),
    # a condition of the evidence's statement dropped or narrowed
    "condition_changed": ("condition_dropped", "condition_narrowed"),
    # a quantity or a limit the evidence sets, widened ("all" for "some", "lifetime" for
    # "2-year")
    "quantifier": ("quantifier_limited", "unbounded"),
    # an answer of another kind than the question asks (an age, a year)
    "kind_mismatch": ("kind_unanswered",),
}

_OF: dict[str, str] = {case: rule for rule, cases in FAMILIES.items() for case in cases}


def family(basis: str) -> str:
    """The rule ``basis`` (a finding's basis, "weekday_contradicted") counts under."""
    return _OF.get(basis, basis)

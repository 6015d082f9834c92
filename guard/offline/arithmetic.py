"""Amounts an answer computes: sums, differences, products, shares and date offsets.

A number the evidence does not state is still grounded when one step of arithmetic on two
amounts gives it: amounts of the evidence, or amounts of the answer that the evidence states
("one three times a day for seven days" gives 21; "70 at 40 %" gives 28, and 28 + 33 gives 61;
"6 months after 1 May 2026" gives 1 November 2026; "leaves at 17:25 instead of 16:05" gives
80 minutes). Operands are bounded (``MAX_OPERANDS``) and each candidate is a set lookup, so a
check costs time linear in the operands.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from itertools import islice

from guard.offline.numbers import Quantity
from guard.offline.times import TimeOfDay

MAX_OPERANDS = 40
DATE_SLACK_DAYS = 2  # months differ in length: "6 months after" is within two days
SHARE_SLACK = 0.05  # percentage points a stated share may be rounded by
_PLAIN = frozenset({"count", "percent"})


def derivable(claim: Quantity, operands: Iterable[Quantity],
              clock: Iterable[TimeOfDay] = ()) -> bool:
    """Whether one step of arithmetic on two distinct ``operands`` gives ``claim``."""
    pool = list(dict.fromkeys(islice(operands, 2 * MAX_OPERANDS)))[:MAX_OPERANDS]
    if claim.kind == "date":
        return _date_offset(claim, pool)
    if claim.kind in ("year", "ordinal"):
        return False
    if any(abs(d - claim.value) <= 1e-6 for d in _clock_differences(claim, clock)):
        return True
    if claim.kind == "percent" and _share(claim.value, pool):
        return True
    values = [q.value for q in pool if q.kind == claim.kind or q.kind in _PLAIN]
    if claim.kind == "count":  # "three times a day for seven days": 21 doses
        values += [q.number for q in pool if q.kind not in _PLAIN and q.number]
    return _one_step(claim.value, values[:MAX_OPERANDS])


def _one_step(target: float, values: list[float]) -> bool:
    """target = a + b, |a - b|, a * b, a * b / 100, a / b or 100 * a / b for two distinct
    values: for each a, the b it needs is looked up in a table of the values."""
    first: dict[float, int] = {}
    for i, v in enumerate(values):
        first.setdefault(_key(v), i)
    counts: dict[float, int] = {}
    for v in values:
        counts[_key(v)] = counts.get(_key(v), 0) + 1

    def another(b: float, i: int) -> bool:
        key = _key(b)
        return key in first and (first[key] != i or counts[key] > 1)

    for i, a in enumerate(values):
        needed = [target - a, a - target, a + target]
        if a:
            needed += [target / a, 100 * target / a]
        if a and target:
            needed += [a / target, 100 * a / target]
        if any(another(b, i) for b in needed):
            return True
    return False


def _key(x: float) -> float:
    return round(x, 6)


def _share(percent: float, pool: list[Quantity]) -> bool:
    """"150 GB of 200 GB" is 75 %: a ratio of two amounts of one kind."""
    return any(b.value and a.kind == b.kind and abs(100 * a.value / b.value - percent)
               <= SHARE_SLACK for a in pool for b in pool if a is not b)


def _clock_differences(claim: Quantity, clock: Iterable[TimeOfDay]) -> list[float]:
    """Durations between two times of day, in days, for a duration claim."""
    if claim.kind != "duration":
        return []
    minutes = sorted({m for t in list(clock)[:MAX_OPERANDS] for m in t.minutes})
    return [(b - a) / 1440 for i, a in enumerate(minutes) for b in minutes[i + 1:]]


def _date_offset(claim: Quantity, pool: list[Quantity]) -> bool:
    target = _as_date(claim)
    if target is None:
        return False
    durations = [q.value for q in pool if q.kind == "duration"]
    for start in (d for d in map(_as_date, pool) if d is not None):
        for days in durations:
            if abs(abs((target - start).days) - days) <= DATE_SLACK_DAYS:
                return True
    return False


def _as_date(q: Quantity) -> date | None:
    if q.kind != "date":
        return None
    v = int(q.value)
    year, month, day = v // 10000, v // 100 % 100, v % 100
    if not (year and month and day):
        return None
    try:
        return date(year, month, day)
    except (ValueError, OverflowError):
        return None

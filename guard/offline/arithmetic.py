"""Amounts an answer computes: sums, differences, products, shares and date offsets.

A number the evidence does not state is still grounded when arithmetic on at most three
amounts gives it: amounts of the evidence, or amounts of the answer that are themselves
grounded ("one three times a day for seven days" gives 21; "70 at 40 %" gives 28, and 28 + 33
gives 61; "€3.50 per person per night, 2 adults, 4 nights" gives 28 in two steps; "$49 a month,
20 % off annually" gives $470.40 a year and "$25 and $15, 10 % tax" $44; "6 months
after 1 May 2026" gives 1 November 2026 and "3 years 4 months after 2 March 2023" July 2026;
"leaves at 17:25 instead of 16:05" gives 80 minutes). Operands are bounded
(``MAX_OPERANDS``, ``MAX_TWO_STEP``); one step costs a table lookup per operand, two steps a
table of the pairs' results (built once per operand list) and a lookup per operand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from functools import lru_cache
from itertools import islice

from guard.offline.numbers import HEDGE_TOLERANCE, Quantity
from guard.offline.times import TimeOfDay

MAX_OPERANDS = 40
MAX_TWO_STEP = 24  # operands whose pairs are combined with a third (24 x 24 x 6 results)
MONTH_SLACK_DAYS = 16  # "July 2026" is any day of July, give or take half a month
DATE_SLACK_DAYS = 2  # months differ in length: "6 months after" is within two days
SHARE_SLACK = 0.05  # percentage points a stated share may be rounded by
_PLAIN = frozenset({"count", "percent"})
UNIT_FACTORS = (60, 24, 7, 12, 52, 365)  # minutes/hour, hours/day, days/week, months, weeks/year
_TRIVIAL = frozenset({0.0, 1.0})  # "one month", "0 fees": adding or multiplying them shows nothing


def derivable(
    claim: Quantity,
    operands: Iterable[Quantity],
    clock: Iterable[TimeOfDay] = (),
    *,
    steps: int = 1,
) -> bool:
    """Whether one step (or, with ``steps=2``, up to two steps) of arithmetic on distinct
    ``operands`` gives ``claim``."""
    pool = list(dict.fromkeys(islice(operands, 2 * MAX_OPERANDS)))[:MAX_OPERANDS]
    if claim.kind == "date":
        return _date_offset(claim, pool)
    if claim.kind in ("year", "ordinal"):
        return False
    # "for about 45 minutes, from 14:05 to 14:48": a hedged duration is a rounded difference
    slack = HEDGE_TOLERANCE * claim.value if claim.hedged else 1e-6
    if any(abs(d - claim.value) <= slack for d in _clock_differences(claim, clock)):
        return True
    if claim.kind == "duration" and _between_dates(claim.value, pool):
        return True
    if claim.kind == "percent" and _share(claim.value, pool):
        return True
    # a percentage is its fraction: "4 % of £7,500" is 0.04 x 7,500, "150 of 200" 0.75
    values = [_plain(q) for q in pool if q.kind == claim.kind or q.kind in _PLAIN]
    # a percentage also changes an amount by itself: "25 % off £80" is 0.75 x 80 (one step)
    changes = [1 + sign * q.value / 100 for q in pool if q.kind == "percent" for sign in (-1, 1)]
    # the number of a measured amount is a factor too: "three times a day for seven days"
    # gives 21 doses, "€135 a night for 4 nights" €540
    values += [
        q.number
        for q in pool
        if q.kind not in _PLAIN
        and q.kind != claim.kind
        and q.kind not in ("date", "year", "ordinal")
        and q.number
    ]
    values = [v for v in values if v not in _TRIVIAL][:MAX_OPERANDS]
    target = _plain(claim)
    changes = changes[:MAX_OPERANDS]
    if _one_step(target, values + changes) or _per_unit(target, values):
        return True
    # a rate changed by a percentage, restated per another unit of time: "$49 a month, 20 %
    # off annually" is $470.40 a year (49 x 0.8 x 12)
    products = [v * c for v in values for c in changes]
    if _per_unit(target, products):
        return True
    # a percentage applied to a sum or product: "$25 and $15 shipping, 10 % tax" is $44
    if any(_one_step(target / c, values) for c in changes if c):
        return True
    return steps >= 2 and _two_steps(target, tuple(values[:MAX_TWO_STEP]))


def _per_unit(target: float, values: list[float]) -> bool:
    """A rate restated per another unit of time: "60 a minute" is 3,600 an hour, "€50 a week"
    €2,600 a year."""
    keys = {_key(v) for v in values}
    return any(_key(target / k) in keys or _key(target * k) in keys for k in UNIT_FACTORS)


def _plain(q: Quantity) -> float:
    return q.value / 100 if q.kind == "percent" else q.value


def _one_step(target: float, values: list[float]) -> bool:
    """target = a + b, |a - b|, a * b or a / b for two distinct values: for each a, the b it
    needs is looked up in a table of the values."""
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
            needed += [target / a]
        if a and target:
            needed += [a / target]
        if any(another(b, i) for b in needed):
            return True
    return False


def _results(a: float, b: float) -> list[float]:
    """a + b, a - b, b - a, a * b and both quotients."""
    out = [a + b, a - b, b - a, a * b]
    if b:
        out.append(a / b)
    if a:
        out.append(b / a)
    return out


@lru_cache(maxsize=64)
def _pair_results(values: tuple[float, ...]) -> dict[float, tuple[tuple[int, int], ...]]:
    """Every result of one step on two distinct operands (the first step of two), with the
    operand pairs that give it."""
    table: dict[float, list[tuple[int, int]]] = {}
    for i, a in enumerate(values):
        for j in range(i + 1, len(values)):
            for r in _results(a, values[j]):
                pairs = table.setdefault(_key(r), [])
                if len(pairs) < 3:
                    pairs.append((i, j))
    return {k: tuple(v) for k, v in table.items()}


def _two_steps(target: float, values: tuple[float, ...]) -> bool:
    """target = (a op b) op c for three distinct operands: for each c, the first step's result
    it needs is looked up in the table of pair results ("30 geteilt durch 5, mal 4": 24)."""
    pairs = _pair_results(values)
    for k, c in enumerate(values):
        needed = [target - c, c - target, target + c]
        if c:
            needed += [target / c]
        if target:
            needed += [c / target]
        if any(k not in pair for r in needed for pair in pairs.get(_key(r), ())):
            return True
    return False


def _key(x: float) -> float:
    return round(x, 6)


def _share(percent: float, pool: list[Quantity]) -> bool:
    """ "150 GB of 200 GB" is 75 %: a ratio of two amounts of one kind; "from €20 to €21" is
    a 5 % rise: their difference as a share of the first."""
    return any(
        b.value
        and a.kind == b.kind
        and (
            abs(100 * a.value / b.value - percent) <= SHARE_SLACK
            or abs(100 * abs(a.value - b.value) / b.value - percent) <= SHARE_SLACK
        )
        for a in pool
        for b in pool
        if a is not b
    )


def time_offset(
    claim: TimeOfDay, clock: Iterable[TimeOfDay], durations: Iterable[Quantity]
) -> bool:
    """A time of day a duration after or before another ("starts at 19:30 and runs 2 hours 15
    minutes": it ends at 21:45)."""
    minutes = {m for t in list(clock)[:MAX_OPERANDS] for m in t.minutes}
    spans = [
        round(q.value * 1440)
        for q in list(durations)[:MAX_OPERANDS]
        if q.kind == "duration"
        and q.value < 1
        # "de 9 h à 17 h": times of day written as hours, not durations to add
        and not (_HOURS_AS_TIME.fullmatch(q.text) and round(q.value * 1440) in minutes)
    ]
    return any(
        (start + sign * span) % 1440 in claim.minutes
        for start in minutes
        for span in spans
        for sign in (-1, 1)
    )


_HOURS_AS_TIME = re.compile(r"\d{1,2}\s?h", re.IGNORECASE)


def _clock_differences(claim: Quantity, clock: Iterable[TimeOfDay]) -> list[float]:
    """Durations between two times of day, in days, for a duration claim."""
    if claim.kind != "duration":
        return []
    minutes = sorted({m for t in list(clock)[:MAX_OPERANDS] for m in t.minutes})
    return [(b - a) / 1440 for i, a in enumerate(minutes) for b in minutes[i + 1 :]]


def _between_dates(days: float, pool: list[Quantity]) -> bool:
    """ "Check-in 12 May, check-out 16 May": 4 nights (dates without a year in one year)."""
    dates = [q for q in pool if q.kind == "date"][:MAX_OPERANDS]
    for i, a in enumerate(dates):
        for b in dates[i + 1 :]:
            first, second = _as_date(a, year=_year(b)), _as_date(b, year=_year(a))
            if (
                first is not None
                and second is not None
                and abs(abs((second - first).days) - days) < 1e-6
            ):
                return True
    return False


def _year(q: Quantity) -> int:
    return int(q.value) // 10000 or 2001  # two dates without a year: any common year


def _date_offset(claim: Quantity, pool: list[Quantity]) -> bool:
    """A date a duration after or before a date ("born 2 March 2023", "at 3 years 4 months":
    July 2026); a month without a day is its middle day, within ``MONTH_SLACK_DAYS``."""
    slack = DATE_SLACK_DAYS if int(claim.value) % 100 else MONTH_SLACK_DAYS
    target = _as_date(claim, mid_month=True)
    if target is None:
        return False
    durations = [q.value for q in pool if q.kind == "duration"]
    starts = (d for d in (_as_date(q) for q in pool) if d is not None)
    return any(_offset_by(target, start, durations, slack) for start in starts)


def counted_on(claim: Quantity, shown: Iterable[Quantity], pool: Iterable[Quantity]) -> bool:
    """A date without a year the claim counts with a duration it states itself ("30 days to
    return them, so until 3 May" after a delivery on 2026-04-03): it is in the year of the
    date it is counted from, or the next."""
    if claim.kind != "date" or int(claim.value) >= 10000 or not int(claim.value) % 100:
        return False
    durations = [q.value for q in shown if q.kind == "duration"][:MAX_OPERANDS]
    starts = [d for d in (_as_date(q) for q in islice(pool, MAX_OPERANDS)) if d is not None]
    return any(
        target is not None and _offset_by(target, start, durations, DATE_SLACK_DAYS)
        for start in starts
        for target in (_as_date(claim, year=y) for y in (start.year, start.year + 1))
    )


def _offset_by(target: date, start: date, durations: list[float], slack: int) -> bool:
    """Whether ``target`` is one of the ``durations`` (days) after or before ``start``."""
    for days in durations:
        if abs(abs((target - start).days) - days) <= slack:
            return True
        months = round(days / (365 / 12))  # "18 years" after 4 June 2009: 4 June 2027
        if (
            months
            and abs(days - months * 365 / 12) < 1
            and any(
                abs((target - moved).days) <= slack
                for moved in (_add_months(start, months), _add_months(start, -months))
                if moved is not None
            )
        ):
            return True
    return False


def _add_months(start: date, months: int) -> date | None:
    total = start.year * 12 + start.month - 1 + months
    year, month = divmod(total, 12)
    try:
        return date(year, month + 1, min(start.day, 28))
    except ValueError:
        return None


def _as_date(q: Quantity, *, mid_month: bool = False, year: int = 0) -> date | None:
    """The date of ``q``; ``year`` stands in for a year it does not give."""
    if q.kind != "date":
        return None
    v = int(q.value)
    year, month, day = v // 10000 or year, v // 100 % 100, v % 100
    if not day and mid_month:
        day = 15
    if not (year and month and day):
        return None
    try:
        return date(year, month, day)
    except (ValueError, OverflowError):
        return None

"""Overload: a bound on the requests judged at once, with no queue behind it.

``serve.max_in_flight`` slots; a request takes one (a batch one per item) or is refused at once
with 429 and ``Retry-After``. Nothing waits: a queue would only turn overload into latency past
every caller's deadline. Budget refusals (rate or cost, see :mod:`consumers.serve.outcomes`)
answer the same way, so a client has one back-off rule.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from consumers.serve.errors import Unavailable


class Admission:
    """Counts requests in flight against ``limit``; :meth:`admit` refuses past it."""

    def __init__(self, limit: int, *, retry_after_s: int) -> None:
        self.limit = limit
        self.retry_after_s = retry_after_s
        self.in_flight = 0
        self.shed = 0

    @contextlib.contextmanager
    def admit(self, items: int = 1) -> Iterator[None]:
        """Hold ``items`` slots for the ``with`` block, or raise :class:`Unavailable`."""
        if self.in_flight + items > self.limit:
            self.shed += 1
            raise Unavailable(
                "overloaded",
                f"{self.in_flight} of {self.limit} requests in flight (serve.max_in_flight)",
                status=429,
                headers={"Retry-After": str(self.retry_after_s)},
            )
        self.in_flight += items
        try:
            yield
        finally:
            self.in_flight -= items

"""Overload: bounds on the requests judged at once and on the body bytes held, with no queue
behind them.

``serve.max_in_flight`` slots; a request takes one (a batch one per item) or is refused at once
with 429 and ``Retry-After``. Nothing waits: a queue would only turn overload into latency past
every caller's deadline. Budget refusals (rate or cost, see :mod:`consumers.serve.outcomes`)
answer the same way, so a client has one back-off rule.

``serve.max_buffered_body_bytes`` bounds the memory of bodies (:class:`BodyBytes`): a request
reserves its ``Content-Length`` before a byte of its body is read (without one, each chunk as it
arrives) and holds the reservation until it is answered, since parsing makes far more of a body
than its bytes. Past the bound it is refused the same way (429, ``Retry-After``), its body
unread: what arrives of it is discarded, and a client that does not finish sending it within
``serve.header_timeout_s`` is disconnected (:mod:`consumers.asgi`). The answer is not followed
by closing the connection at once: a close with unread bytes resets it, and the client loses
the 429.
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


class BodyBytes:
    """Body bytes held by requests being read, parsed or judged, against ``limit``."""

    def __init__(self, limit: int, *, retry_after_s: int) -> None:
        self.limit = limit
        self.retry_after_s = retry_after_s
        self.held = 0
        self.refused = 0

    @contextlib.contextmanager
    def holding(self) -> Iterator[Reservation]:
        """A :class:`Reservation` for one request; all it took is given back at the end."""
        reservation = Reservation(self)
        try:
            yield reservation
        finally:
            self.held -= reservation.size

    def take(self, reservation: Reservation, size: int) -> None:
        if self.held + size > self.limit:
            self.refused += 1
            raise Unavailable(
                "overloaded",
                f"{self.held} of {self.limit} body bytes held (serve.max_buffered_body_bytes)",
                field="body",
                status=429,
                headers={"Retry-After": str(self.retry_after_s)},
            )
        self.held += size
        reservation.size += size


class Reservation:
    """What one request holds of :class:`BodyBytes`; :meth:`take` more or be refused."""

    def __init__(self, pool: BodyBytes) -> None:
        self.pool = pool
        self.size = 0

    def take(self, size: int) -> None:
        self.pool.take(self, size)

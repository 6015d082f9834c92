"""Verdict cache: identical judgements are made once.

The key is a content hash of everything that decides a verdict: provider, model, prompt
version, scoring mode and threshold, the grounding source's kind, the question, the rendered
evidence, the output and whether its display order differs from it (``display_reordered``).
Entries live in an LRU bounded in entries and in bytes, with a TTL.
A hit returns the stored outcome marked ``cached=True`` with zero usage, so it costs nothing.
Concurrent identical requests share one call (single flight): the first makes it, the others
await its result.
Errors are never stored, and neither are fallback outcomes (a degraded answer should not
outlive the budget window that caused it). With ``shared`` (Redis) a miss here asks the fleet's
cache before judging, and every stored verdict is stored there too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guard.budgets.clock import Clock
from guard.budgets.layer import JudgeLayer
from guard.case import PreparedCase
from guard.defaults import CACHE_ENTRY_BYTES, DEFAULT_CACHE_MAX_BYTES, PROMPT_VERSION
from guard.models import Usage
from guard.providers.base import Judge, JudgeOutcome

if TYPE_CHECKING:
    from guard.budgets.shared import SharedBudget


def cache_key(
    case: PreparedCase, *, provider: str, model: str, prompt_version: str = PROMPT_VERSION
) -> str:
    """A content hash of what decides the verdict on ``case`` (length-prefixed parts)."""
    digest = hashlib.sha256()
    parts = (
        provider,
        model,
        prompt_version,
        case.mode.value,
        repr(case.threshold),
        case.source.value,
        case.question or "",
        case.evidence,
        case.output,
        "display reordered" if case.display_reordered else "",
    )
    for part in parts:
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def as_cached(outcome: JudgeOutcome) -> JudgeOutcome:
    return dataclasses.replace(outcome, cached=True, usage=Usage(), rate_limit={})


@dataclass(frozen=True)
class CacheSnapshot:
    size: int
    max_size: int
    hits: int
    misses: int
    shared: int  # requests that joined an identical call already in flight


class VerdictCache:
    """A bounded LRU of outcomes with a TTL: at most ``max_size`` entries and ``max_bytes`` of
    them (:func:`outcome_bytes`), so long verdicts (many claims, long quotes) cannot make the
    cache grow past a memory budget."""

    def __init__(
        self,
        *,
        max_size: int,
        ttl_s: float,
        clock: Clock,
        max_bytes: int = DEFAULT_CACHE_MAX_BYTES,
    ) -> None:
        self.max_size, self.ttl_s, self._clock = max_size, ttl_s, clock
        self.max_bytes, self.bytes = max_bytes, 0
        self._entries: OrderedDict[str, tuple[float, JudgeOutcome, int]] = OrderedDict()

    def get(self, key: str) -> JudgeOutcome | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock.now():
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: str, outcome: JudgeOutcome) -> None:
        size = outcome_bytes(outcome)
        if self.max_size <= 0 or size > self.max_bytes:
            return
        self._drop(key)
        self._entries[key] = (self._clock.now() + self.ttl_s, outcome, size)
        self.bytes += size
        while len(self._entries) > self.max_size or self.bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry[2]

    def __len__(self) -> int:
        return len(self._entries)


def outcome_bytes(outcome: JudgeOutcome) -> int:
    """The memory a cached outcome holds, about: its texts (``sys.getsizeof``: a string's
    characters take 1, 2 or 4 bytes) and ``CACHE_ENTRY_BYTES`` of Python objects for the
    entry and each of its claims."""
    assessment = getattr(outcome, "assessment", None)
    if assessment is None:
        return CACHE_ENTRY_BYTES
    claims = assessment.claims
    texts = sum(
        sys.getsizeof(c.claim) + sys.getsizeof(c.reason) + sys.getsizeof(c.evidence_quote or "")
        for c in claims
    )
    return CACHE_ENTRY_BYTES * (1 + len(claims)) + sys.getsizeof(assessment.explanation) + texts


class CachedJudge(JudgeLayer):
    """Serves repeats from a :class:`VerdictCache` and merges concurrent identical calls."""

    def __init__(
        self, inner: Judge, cache: VerdictCache, shared: SharedBudget | None = None
    ) -> None:
        super().__init__(inner)
        self.cache, self._shared = cache, shared
        self._flights: dict[str, asyncio.Future[JudgeOutcome]] = {}
        self.hits = self.misses = self.shared = 0

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        key = cache_key(case, provider=self.provider, model=self.model)
        while True:
            stored = self.cache.get(key)
            if stored is not None:
                self.hits += 1
                return as_cached(stored)
            flight = self._flights.get(key)
            if flight is None:
                return await self._lead(key, case)
            outcome = await self._follow(flight)
            if outcome is not None:
                return outcome
            # the leading call was cancelled: try again (perhaps as the new leader)

    async def _lead(self, key: str, case: PreparedCase) -> JudgeOutcome:
        self.misses += 1
        flight: asyncio.Future[JudgeOutcome] = asyncio.get_running_loop().create_future()
        self._flights[key] = flight
        try:
            outcome = await self._shared_or_judged(key, case)
        except asyncio.CancelledError:
            flight.cancel()
            raise
        except BaseException as exc:
            flight.set_exception(exc)
            flight.exception()  # followers may be none; mark it retrieved
            raise
        finally:
            del self._flights[key]
        if outcome.fallback_reason is None:
            self.cache.put(key, outcome)
        flight.set_result(outcome)
        return outcome

    async def _shared_or_judged(self, key: str, case: PreparedCase) -> JudgeOutcome:
        """The fleet's cached verdict (as a hit), else ``inner``'s, stored for the fleet."""
        if self._shared is None:
            return await self.inner.assess(case)
        stored = await self._shared.cached(key)
        if stored is not None:  # a hit after all: another replica judged it
            self.misses -= 1
            self.hits += 1
            return as_cached(stored)
        outcome = await self.inner.assess(case)
        if outcome.fallback_reason is None and not outcome.cached:
            await self._shared.store(key, outcome, self.cache.ttl_s)
        return outcome

    async def _follow(self, flight: asyncio.Future[JudgeOutcome]) -> JudgeOutcome | None:
        """The shared call's outcome (as a cache hit), or None if its leader was cancelled."""
        try:
            outcome = await asyncio.shield(flight)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if flight.cancelled() and task is not None and not task.cancelling():
                return None
            raise
        self.shared += 1
        return as_cached(outcome)

    def snapshot(self) -> CacheSnapshot:
        return CacheSnapshot(
            len(self.cache), self.cache.max_size, self.hits, self.misses, self.shared
        )

"""Requests-per-minute and tokens-per-minute limits for one provider/model.

Admission is a sliding 60 s window: in no 60 s span are more than ``rpm`` calls started or more
than ``tpm`` tokens spent (each call is admitted on its estimate, which is replaced by the usage
the response reports). Within it, no second takes more than 1/60 of either limit (providers
enforce per-minute limits over shorter periods, so a minute's allowance spent in one burst would
draw 429s). The limiter also obeys the provider:

* a 429 (:class:`~guard.errors.RateLimited`) stops **every** caller until its ``Retry-After``
  has passed; then one probe call goes first and the others follow once it succeeds, so a 429
  storm costs one call per Retry-After period instead of one per waiting caller;
* ``x-ratelimit-remaining-*: 0`` / ``anthropic-ratelimit-*-remaining: 0`` stops every caller
  until the matching reset time.

Callers wait (bounded by ``max_wait_s``, then :class:`~guard.errors.RateLimited`). Since the
runtime bounds in-flight work, waiting here is what slows intake.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from guard import tracing
from guard.budgets.clock import Clock
from guard.budgets.estimate import estimate_usage, total_tokens
from guard.budgets.layer import JudgeLayer
from guard.budgets.share import ShareHistory
from guard.case import PreparedCase
from guard.errors import RateLimited
from guard.providers.base import Judge, JudgeOutcome

if TYPE_CHECKING:
    from guard.budgets.shared import SharedBudget

WINDOW_S = 60.0
BURST_S = 1.0  # at most 1/60 of a per-minute limit starts within any second
PROBE_POLL_S = 0.05  # how often callers check whether the post-429 probe has succeeded
MIN_COOLDOWN_S = 0.001  # a 429 with Retry-After: 0 still stops callers for this long
_SLACK = 1e-9  # a share's float product must not refuse the call that exactly fills it

_RESET_HEADERS = (
    ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"),
    ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"),
    ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"),
    ("anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"),
)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_reset(value: str, now: float) -> float | None:
    """Seconds until a reset header's moment: OpenAI durations (``6m0s``, ``20ms``, ``1.5s``),
    plain seconds, or RFC 3339 timestamps (Anthropic). None when unreadable."""
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        return sum(float(n) * _UNIT_S[u] for n, u in parts)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, moment.timestamp() - now)


def exhausted_until(headers: Mapping[str, str], now: float, cap_s: float) -> float | None:
    """When a provider's own limit says it will accept calls again, if it says it will not now."""
    lowered = {k.lower(): v for k, v in headers.items()}
    until: float | None = None
    for remaining_name, reset_name in _RESET_HEADERS:
        remaining, reset = lowered.get(remaining_name), lowered.get(reset_name)
        if remaining is None or reset is None or not _is_zero(remaining):
            continue
        wait = parse_reset(reset, now)
        if wait is not None:
            moment = now + min(wait, cap_s)
            until = moment if until is None else max(until, moment)
    return until


def _is_zero(value: str) -> bool:
    try:
        return float(value) <= 0
    except ValueError:
        return False


@dataclass
class _Slot:
    at: float
    tokens: int


@dataclass
class RatePermit:
    """One admitted call; give it back through ``succeeded``, ``rate_limited`` or ``failed``."""

    slot: _Slot
    probe: bool


@dataclass(frozen=True)
class RateSnapshot:
    rpm: float | None  # this replica's limits: the configured ones times its fleet share
    tpm: float | None
    requests_in_window: int
    tokens_in_window: int
    blocked_for_s: float
    provider_429s: int
    waits: int


class RateLimiter:
    """Sliding-window RPM/TPM limiter that also obeys 429s and rate-limit headers.

    ``rpm`` and ``tpm`` are the fleet's limits; ``share`` (:class:`ShareHistory`) says which
    part of them this replica may take (calls already admitted stay counted in the window). A
    limit below the whole is strict: a call is admitted only when it fits whole."""

    def __init__(
        self,
        *,
        rpm: int | None,
        tpm: int | None,
        max_wait_s: float,
        cooldown_s: float,
        clock: Clock,
        share: ShareHistory | None = None,
    ) -> None:
        self.fleet_rpm, self.fleet_tpm = rpm, tpm
        self.share = share or ShareHistory(clock)
        self._max_wait_s = max_wait_s
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._slots: deque[_Slot] = deque()
        self._tokens = 0
        self._blocked_until = 0.0
        self._recovering = False  # after a 429: one probe at a time until one succeeds
        self._probe_out = False
        self.provider_429s = 0
        self.waits = 0

    async def acquire(self, tokens: int, deadline: float | None = None) -> RatePermit:
        """Wait until a call of ``tokens`` may start (at most until ``deadline``)."""
        now = self._clock.now()
        deadline = now + self._max_wait_s if deadline is None else deadline
        counted = False
        while (delay := self._delay(now, tokens)) > 0:
            if now >= deadline:
                raise RateLimited(
                    f"rate limiter: no capacity within {self._max_wait_s:.0f}s", retry_after_s=delay
                )
            if not counted:
                self.waits, counted = self.waits + 1, True
            await self._clock.sleep(min(delay, deadline - now))
            now = self._clock.now()
        return self._admit(now, tokens)

    def rescale(self, share: float) -> None:
        """Hold ``share`` (0..1) of the configured limits from now on (a loss applies at once, a
        gain one window later: :class:`ShareHistory`); the calls and tokens already in the
        sliding window still count against the new limits."""
        self.share.set(share)

    def limits(self) -> tuple[float | None, float | None]:
        """This replica's ``rpm`` and ``tpm`` now: the fleet's times the share that applies."""
        share = self.share.lowest()
        rpm, tpm = self.fleet_rpm, self.fleet_tpm
        return (None if rpm is None else rpm * share, None if tpm is None else tpm * share)

    def deadline(self) -> float:
        """The latest moment a call starting now may still be admitted."""
        return self._clock.now() + self._max_wait_s

    def succeeded(
        self, permit: RatePermit, tokens_used: int | None, headers: Mapping[str, str]
    ) -> None:
        """The call answered: correct its token count and obey the provider's headers."""
        if tokens_used is not None:
            self._tokens += tokens_used - permit.slot.tokens
            permit.slot.tokens = tokens_used
        if permit.probe:
            self._recovering = self._probe_out = False
        now = self._clock.now()
        until = exhausted_until(headers, now, self._max_wait_s)
        if until is not None:
            self._blocked_until = max(self._blocked_until, until)

    def rate_limited(self, permit: RatePermit, retry_after_s: float | None) -> None:
        """The provider said 429: every caller waits ``retry_after_s``, then one probes."""
        self.provider_429s += 1
        wait = self._cooldown_s if retry_after_s is None else retry_after_s
        wait = min(max(wait, MIN_COOLDOWN_S), self._max_wait_s)
        self._blocked_until = max(self._blocked_until, self._clock.now() + wait)
        self._recovering = True
        if permit.probe:
            self._probe_out = False

    def failed(self, permit: RatePermit) -> None:
        """The call failed for another reason (or was cancelled): free the probe role."""
        if permit.probe:
            self._probe_out = False

    def release(self, permit: RatePermit) -> None:
        """The call was not made after all (the fleet's limit held it): its slot is free."""
        self.failed(permit)
        if permit.slot in self._slots:
            self._slots.remove(permit.slot)
            self._tokens -= permit.slot.tokens

    def snapshot(self) -> RateSnapshot:
        now = self._clock.now()
        self._prune(now)
        rpm, tpm = self.limits()
        return RateSnapshot(
            rpm,
            tpm,
            len(self._slots),
            self._tokens,
            max(0.0, self._blocked_until - now),
            self.provider_429s,
            self.waits,
        )

    def _admit(self, now: float, tokens: int) -> RatePermit:
        slot = _Slot(now, tokens)
        self._slots.append(slot)
        self._tokens += tokens
        probe = self._recovering
        self._probe_out = self._probe_out or probe
        return RatePermit(slot, probe)

    def _delay(self, now: float, tokens: int) -> float:
        """Seconds until a call of ``tokens`` may start; 0 when it may start now."""
        self._prune(now)
        if now < self._blocked_until:
            return self._blocked_until - now
        if self._recovering and self._probe_out:
            return PROBE_POLL_S
        rpm, tpm = self.limits()
        whole = self.share.lowest() >= 1.0  # the whole limits let one call in, whatever its size
        if rpm is not None and len(self._slots) + 1 > rpm * (1 + _SLACK):
            return self._share_delay(
                self._slots[0].at + WINDOW_S - now if self._slots else WINDOW_S
            )
        if tpm is not None and (self._slots or not whole) and self._tokens + tokens > tpm:
            return self._share_delay(self._token_delay(now, tokens, tpm))
        return self._burst_delay(now, tokens, rpm, tpm)

    def _share_delay(self, delay: float) -> float:
        """``delay``, or less when a gained share applies before it ends."""
        rises_in = self.share.rises_in()
        return delay if rises_in is None else max(MIN_COOLDOWN_S, min(delay, rises_in))

    def _burst_delay(self, now: float, tokens: int, rpm: float | None, tpm: float | None) -> float:
        """Seconds until a call fits the last second's share of the limits (1/60 of rpm and
        tpm), so a minute's allowance is not spent in one burst that the provider (which
        enforces its per-minute limits over shorter periods) would answer with 429s."""
        if rpm is None and tpm is None:
            return 0.0
        recent_calls, recent_tokens, oldest = 0, 0, now
        for slot in reversed(self._slots):
            if slot.at <= now - BURST_S:
                break
            recent_calls, oldest = recent_calls + 1, slot.at
            recent_tokens += slot.tokens
        if not recent_calls:
            return 0.0
        calls_full = rpm is not None and recent_calls >= -(-rpm // 60)
        tokens_full = tpm is not None and recent_tokens + tokens > tpm / 60
        return oldest + BURST_S - now if calls_full or tokens_full else 0.0

    def _token_delay(self, now: float, tokens: int, tpm: float) -> float:
        """Seconds until enough tokens leave the window for ``tokens`` more to fit."""
        left = self._tokens
        for slot in self._slots:
            left -= slot.tokens
            if left + tokens <= tpm:
                return slot.at + WINDOW_S - now
        return self._slots[-1].at + WINDOW_S - now if self._slots else WINDOW_S

    def _prune(self, now: float) -> None:
        while self._slots and self._slots[0].at <= now - WINDOW_S:
            self._tokens -= self._slots.popleft().tokens


class RateLimitedJudge(JudgeLayer):
    """Admits calls through a :class:`RateLimiter` and reports back how each ended.

    A 429 from ``inner`` is not retried by the caller alone: it stops every caller for the
    Retry-After, and this call queues again (at most ``max_attempts`` calls, all within the
    limiter's ``max_wait_s``). With ``shared`` (Redis), each call is first admitted by the
    fleet's limits there (the configured ``rpm`` and ``tpm``), within the same deadline.
    """

    def __init__(
        self,
        inner: Judge,
        limiter: RateLimiter,
        *,
        max_attempts: int,
        shared: SharedBudget | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(inner)
        self.limiter, self._max_attempts = limiter, max_attempts
        self._shared, self._clock = shared, clock
        self._fleet_limits = (limiter.fleet_rpm, limiter.fleet_tpm)
        self.calls = 0

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        tokens = total_tokens(estimate_usage(case))
        deadline = self.limiter.deadline()
        for attempt in range(1, self._max_attempts + 1):
            with tracing.waiting("rate_limit"):
                permit = await self._admit(tokens, deadline)
            self.calls += 1
            try:
                outcome = await self.inner.assess(case)
            except RateLimited as exc:
                self.limiter.rate_limited(permit, exc.retry_after_s)
                if attempt == self._max_attempts:
                    raise
                continue
            except BaseException:
                self.limiter.failed(permit)
                raise
            used = None if outcome.cached else total_tokens(outcome.usage) or None
            self.limiter.succeeded(permit, used, outcome.rate_limit)
            return outcome
        raise AssertionError("unreachable: the loop returns or raises")

    async def _admit(self, tokens: int, deadline: float) -> RatePermit:
        """Wait until the local limiter and then the fleet's limits in Redis admit the call, in
        that order, so Redis logs the call when it starts, not before the local per-second
        smoothing held it (a call Redis holds gives its local slot back and queues again)."""
        while True:
            permit = await self.limiter.acquire(tokens, deadline)
            try:
                wait = await self._fleet_wait(tokens)
            except BaseException:  # cancelled while asking Redis: the call is not made
                self.limiter.release(permit)
                raise
            if not wait:
                return permit
            self.limiter.release(permit)
            assert self._clock is not None  # a fleet wait needs the shared budget and a clock
            if self._clock.now() + wait > deadline:
                raise RateLimited(
                    "fleet rate limit (redis): no capacity within the wait allowed",
                    retry_after_s=wait,
                )
            self.limiter.waits += 1
            await self._clock.sleep(wait)

    async def _fleet_wait(self, tokens: int) -> float | None:
        """Seconds the fleet's limits in Redis say to wait (0: admitted); None without Redis or
        while it is unavailable (the local limiter then holds the replica to its share)."""
        if self._shared is None or self._clock is None:
            return None
        rpm, tpm = self._fleet_limits
        return await self._shared.admit(
            provider=self.provider,
            model=self.model,
            rpm=None if rpm is None else int(rpm),
            tpm=None if tpm is None else int(tpm),
            tokens=tokens,
        )

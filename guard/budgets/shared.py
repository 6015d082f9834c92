"""Exact fleet-wide limits and a shared verdict cache in Redis (``judge.budget.fleet: redis``).

Every replica of a deployment checks the same Redis keys, each in one atomic Lua script:

* ``{prefix}:rate:{provider}:{model}``: a sliding 60 s log of call starts (a sorted set scored
  by Redis' own clock, so replicas' clocks need not agree) and the estimated tokens in it; a call
  is admitted when the fleet's ``rpm`` and ``tpm`` allow it, or told how long to wait;
* ``{prefix}:cost:{window}:{start}``: USD spent in each tumbling cost window, reserved before
  a call (the estimate) and corrected after it (the actual cost); a reservation of a replica that
  died stays counted, so the fleet errs on the side of spending less;
* ``{prefix}:verdict:{key}``: verdicts, with the cache's TTL, as JSON (never pickled).

An outage of Redis (connection refused, a timeout, any Redis error) never stops judging: the
first failure logs ``budget.shared_unavailable`` once and counts an outage, the budgets fall back
to the replica's partition share (:meth:`guard.budgets.judge.BudgetedJudge.rescale`), and Redis
is tried again every ``redis_retry_s``; ``budget.shared_recovered`` is logged when it answers.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import ValidationError
from redis.asyncio import Redis
from redis.exceptions import RedisError

from guard.budgets.clock import Clock
from guard.decide.assessment import Assessment, BinaryAssessment, Scale5Assessment
from guard.providers.base import JudgeOutcome

RATE_WINDOW_S = 60
_log = logging.getLogger("guard.budgets")
_OUTAGE = (RedisError, OSError, TimeoutError)  # what an unreachable or failing Redis raises

# KEYS: the call log (sorted set), its token sum. ARGV: rpm, tpm (-1: none), tokens, id, window.
# Returns "0" when the call is admitted, else the seconds to wait (as a string: Lua numbers
# would be cut to integers).
_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local window = tonumber(ARGV[5])
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - window)
if #old > 0 then
  local freed = 0
  for _, member in ipairs(old) do freed = freed + tonumber(string.match(member, '|(%d+)$')) end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  redis.call('DECRBY', KEYS[2], freed)
end
local rpm, tpm, tokens = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local count = redis.call('ZCARD', KEYS[1])
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if (rpm >= 0 and count >= rpm) or (tpm >= 0 and count > 0 and used + tokens > tpm) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tostring(math.max(0.001, tonumber(first[2]) + window - now))
end
redis.call('ZADD', KEYS[1], now, ARGV[4] .. '|' .. tokens)
redis.call('INCRBY', KEYS[2], tokens)
redis.call('EXPIRE', KEYS[1], 2 * window)
redis.call('EXPIRE', KEYS[2], 2 * window)
return '0'
"""

# KEYS: one spend key per window. ARGV: cost, then each window's limit, then each key's TTL.
# Returns 0 when reserved in every window, else the 1-based index of the window that refuses.
_RESERVE = """
local cost, n = tonumber(ARGV[1]), #KEYS
for i, key in ipairs(KEYS) do
  local spent = tonumber(redis.call('GET', key) or '0')
  local limit = tonumber(ARGV[1 + i])
  if limit <= 0 or (spent > 0 and spent + cost > limit * (1 + 1e-9)) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('INCRBYFLOAT', key, ARGV[1])
  redis.call('EXPIRE', key, ARGV[1 + n + i])
end
return 0
"""

# KEYS: the spend keys a reservation went to. ARGV: the correction (actual - estimate). A key that
# expired (its window is over) is left gone: INCRBYFLOAT would create it again without a TTL.
_SETTLE = """
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then redis.call('INCRBYFLOAT', key, ARGV[1]) end
end
return 0
"""


@dataclass(frozen=True)
class SharedSnapshot:
    """Whether Redis answers, and how often it did not."""

    up: bool
    outages: int
    cache_hits: int


@dataclass(frozen=True)
class SharedReservation:
    """A cost reserved in Redis: the keys it went to, so the settlement corrects the same ones."""

    keys: tuple[str, ...]
    cost_usd: float


class SharedBudget:
    """The fleet's rate limits, cost windows and verdict cache in Redis; degrades to None
    answers (local limits only) while Redis is unavailable. ``on_change`` is called when Redis
    goes down or comes back, so the caller can change its local limits."""

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str,
        retry_s: float,
        clock: Clock,
    ) -> None:
        self._redis, self._prefix, self._retry_s, self._clock = client, prefix, retry_s, clock
        self._admit = client.register_script(_ADMIT)
        self._reserve = client.register_script(_RESERVE)
        self._settle = client.register_script(_SETTLE)
        self._retry_at: float | None = None  # None: up
        self.outages = 0
        self.cache_hits = 0
        self.on_change: Callable[[], None] = lambda: None

    @classmethod
    def from_url(
        cls, url: str, *, prefix: str, timeout_s: float, retry_s: float, clock: Clock
    ) -> SharedBudget:
        client = Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        return cls(client, prefix=prefix, retry_s=retry_s, clock=clock)

    @property
    def up(self) -> bool:
        return self._retry_at is None

    def snapshot(self) -> SharedSnapshot:
        return SharedSnapshot(self.up, self.outages, self.cache_hits)

    async def aclose(self) -> None:
        await self._redis.aclose()

    # ------------------------------------------------------------------ limits

    async def admit(
        self, *, provider: str, model: str, rpm: int | None, tpm: int | None, tokens: int
    ) -> float | None:
        """Seconds to wait before a call of ``tokens`` may start (0: it was admitted now);
        None while Redis is unavailable."""
        key = f"{self._prefix}:rate:{provider}:{model}"
        args = (_limit(rpm), _limit(tpm), tokens, uuid.uuid4().hex, RATE_WINDOW_S)
        found = await self._call(lambda: self._admit(keys=[key, f"{key}:tokens"], args=args))
        return None if found is None else float(_text(found))

    async def reserve(
        self, cost_usd: float, windows: dict[str, tuple[float, float]]
    ) -> SharedReservation | str | None:
        """Reserve ``cost_usd`` in every window (``name -> (length_s, limit_usd)``): the
        reservation, the name of the window that refuses it, or None while Redis is down."""
        if not windows:
            return SharedReservation((), cost_usd)
        now = self._clock.now()
        keys: list[str] = []
        limits: list[str] = []
        ttls: list[int] = []
        for name, (length_s, limit_usd) in windows.items():
            start = int(now - now % length_s)
            keys.append(f"{self._prefix}:cost:{name}:{start}")
            limits.append(repr(limit_usd))
            ttls.append(int(length_s * 2))
        args: list[str | int] = [repr(cost_usd), *limits, *ttls]
        refused = await self._call(lambda: self._reserve(keys=keys, args=args))
        if refused is None:
            return None
        if int(refused):
            return list(windows)[int(refused) - 1]
        return SharedReservation(tuple(keys), cost_usd)

    async def settle(self, reservation: SharedReservation, actual_usd: float | None) -> None:
        """Replace the reserved estimate by what the call cost (None: it failed, cost nothing
        we know of); a window whose key expired meanwhile is not corrected."""
        delta = (actual_usd or 0.0) - reservation.cost_usd
        if not reservation.keys or delta == 0.0:
            return
        keys, args = list(reservation.keys), [repr(delta)]
        await self._call(lambda: self._settle(keys=keys, args=args))

    # ------------------------------------------------------------------ verdict cache

    async def cached(self, key: str) -> JudgeOutcome | None:
        raw = await self._call(lambda: self._redis.get(f"{self._prefix}:verdict:{key}"))
        outcome = None if raw is None else decode_outcome(_text(raw))
        if outcome is not None:
            self.cache_hits += 1
        return outcome

    async def store(self, key: str, outcome: JudgeOutcome, ttl_s: float) -> None:
        data = encode_outcome(outcome)
        ttl_ms = max(1, int(ttl_s * 1000))
        await self._call(lambda: self._redis.set(f"{self._prefix}:verdict:{key}", data, px=ttl_ms))

    # ------------------------------------------------------------------ health

    async def _call(self, command: Callable[[], Any]) -> Any:
        """``command``'s answer, or None when Redis is down (then it is not asked until
        ``retry_s`` passed) or fails now."""
        if self._retry_at is not None and self._clock.now() < self._retry_at:
            return None
        try:
            found = await command()
        except _OUTAGE as exc:
            self._went_down(exc)
            return None
        if self._retry_at is not None:
            self._retry_at = None
            _log.warning("budget.shared_recovered: fleet-wide limits and cache are back")
            self.on_change()
        return found

    def _went_down(self, exc: BaseException) -> None:
        was_up = self._retry_at is None
        self._retry_at = self._clock.now() + self._retry_s
        if was_up:
            self.outages += 1
            _log.error(
                "budget.shared_unavailable error=%r: judging goes on under the replica's "
                "partition share of the limits; Redis is tried again every %.0fs",
                exc,
                self._retry_s,
            )
            self.on_change()


def _limit(value: int | None) -> int:
    return -1 if value is None else value


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


_KINDS: dict[str, type[Scale5Assessment] | type[BinaryAssessment]] = {
    "scale5": Scale5Assessment,
    "binary": BinaryAssessment,
}


def encode_outcome(outcome: JudgeOutcome) -> bytes:
    """A cached outcome as JSON: the assessment and who made it (usage is not kept: a cache
    hit costs nothing)."""
    kind: Literal["scale5", "binary"] = (
        "scale5" if isinstance(outcome.assessment, Scale5Assessment) else "binary"
    )
    return orjson.dumps(
        {
            "kind": kind,
            "assessment": outcome.assessment.model_dump(mode="json"),
            "provider": outcome.provider,
            "model": outcome.model,
            "tier": outcome.tier,
            "confidence": outcome.confidence,
            "unsure": outcome.unsure,
        }
    )


def decode_outcome(text: str) -> JudgeOutcome | None:
    """The outcome :func:`encode_outcome` wrote; None (a miss) for anything else."""
    try:
        data = orjson.loads(text)
        model = _KINDS[data["kind"]]
        assessment: Assessment = model.model_validate(data["assessment"])
        confidence = data.get("confidence")
        if confidence is not None and not isinstance(confidence, int | float):
            raise TypeError("confidence is not a number")
        return JudgeOutcome(
            assessment=assessment,
            provider=str(data["provider"]),
            model=str(data["model"]),
            tier="offline" if data.get("tier") == "offline" else "llm",
            confidence=None if confidence is None else float(confidence),
            unsure=bool(data.get("unsure", False)),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValidationError):
        _log.warning("budget.shared_cache_unreadable: treated as a miss")
        return None

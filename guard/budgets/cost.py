"""Cost budgets: spend in USD per minute, hour and day (any combination), and what to do when a
window is spent.

Windows are tumbling, aligned to the clock (the minute, the hour, the UTC day). Before a call
its estimated cost is reserved in every window; a call that would overspend a window is refused
(unless nothing was spent there yet, so one call always fits); afterwards the reservation is
replaced by the actual cost from the price function, which bills prompt-cache reads and writes
and flex or batch calls at their own prices (:mod:`guard.providers.pricing`), so a window holds
what the provider will bill. A refused call follows the policy:

* ``pause``: wait until the window rolls over, nothing is lost (bounded by ``max_pause_s``,
  after which the call is skipped as under ``skip``; the default outlasts a day window);
* ``skip``: :class:`~guard.errors.JudgementSkipped` ``budget_exhausted:<window>``;
* ``fallback``: the fallback judge (cheaper model or offline) decides, and the outcome says so
  in ``fallback_reason``. The fallback's spend is reported apart and is not limited.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guard import tracing
from guard.budgets.clock import Clock
from guard.budgets.estimate import estimate_usage
from guard.budgets.layer import JudgeLayer
from guard.budgets.settings import BudgetPolicy
from guard.budgets.share import ShareHistory
from guard.case import PreparedCase
from guard.errors import ConfigError, JudgementSkipped, JudgeTimeout, MalformedJudgeOutput
from guard.models import Usage
from guard.providers.base import Judge, JudgeOutcome
from guard.skips import SkipReason

if TYPE_CHECKING:
    from guard.budgets.shared import SharedBudget, SharedReservation

PriceFn = Callable[[str, Usage], float]
_SLACK = 1e-9  # float sums of prices must not refuse the call that exactly fills a window
WINDOW_SECONDS = {"minute": 60.0, "hour": 3_600.0, "day": 86_400.0}
_log = logging.getLogger("guard.budgets")
RESERVATION_RECHECK_S = 1.0  # a caller refused by reservations in flight looks again this often


@dataclass
class _Window:
    name: str
    length_s: float
    fleet_limit_usd: float  # the configured limit; this replica may spend its share of it
    share: ShareHistory
    start: float = 0.0
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    refusing: bool = False  # logged once per window, not once per refused call

    def roll(self, now: float) -> None:
        start = now - now % self.length_s
        if start != self.start:
            if self.refusing:
                _log.info("budget.window_rolled window=%s: judging resumes", self.name)
            self.start, self.spent_usd = start, 0.0  # reservations in flight carry over
            self.refusing = False

    @property
    def limit_usd(self) -> float:
        """This replica's limit in the window now: its lowest share since the window began
        (a gain applies from the next window, or once a handover passed) of the fleet's."""
        return self.fleet_limit_usd * self.share.lowest(since=self.start)

    def admits(self, cost: float) -> bool:
        committed = self.spent_usd + self.reserved_usd
        limit = self.limit_usd
        if limit <= 0.0:
            return False  # a replica with no share of the fleet's budget spends nothing
        if committed == 0.0 and limit >= self.fleet_limit_usd:
            return True  # one call always fits the whole budget (a share: only what fits)
        return committed + cost <= limit * (1 + _SLACK)

    def resets_in(self, now: float) -> float:
        return self.start + self.length_s - now


@dataclass(frozen=True)
class WindowSnapshot:
    window: str
    limit_usd: float
    spent_usd: float
    reserved_usd: float
    left_usd: float
    resets_in_s: float
    # the fleet's window (Redis) refused: its reservations in flight are unknown here, and may
    # settle below their estimates before the window rolls over
    fleet: bool = False


@dataclass(frozen=True)
class CostSnapshot:
    """Spend so far and budget left, for metrics and logs."""

    windows: tuple[WindowSnapshot, ...]
    total_spent_usd: float
    fallback_spent_usd: float
    exhausted: int  # calls refused by a spent window
    # billed tokens by kind (input, cached, cache_write, output) and calls by service tier
    tokens: dict[str, int] = dataclasses.field(default_factory=dict)
    tiers: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Reservation:
    cost_usd: float


class CostBudget:
    """Spend per tumbling window; reserve before a call, settle after it."""

    def __init__(
        self, limits: dict[str, float], clock: Clock, share: ShareHistory | None = None
    ) -> None:
        unknown = set(limits) - set(WINDOW_SECONDS)
        if unknown:
            raise ConfigError(
                "budget", f"unknown cost windows {sorted(unknown)}", "use minute, hour or day"
            )
        self.share = share or ShareHistory(clock)
        # longest first, so a refusal names the window that keeps it refused longest
        self._windows = [
            _Window(n, WINDOW_SECONDS[n], limits[n], self.share)
            for n in ("day", "hour", "minute")
            if n in limits
        ]
        self._clock = clock
        self.total_spent_usd = 0.0
        self.fallback_spent_usd = 0.0
        self.exhausted = 0
        self.tokens: Counter[str] = Counter()
        self.tiers: Counter[str] = Counter()

    def count(self, usage: Usage) -> None:
        """Tally a billed call's tokens (cached and cache writes apart) and its service tier."""
        self.tokens.update(
            input=usage.input_tokens,
            cached=usage.cached_tokens,
            cache_write=usage.cache_write_tokens,
            output=usage.output_tokens,
        )
        self.tiers[usage.service_tier or "default"] += 1

    def try_reserve(self, cost_usd: float) -> Reservation | WindowSnapshot:
        """Reserve ``cost_usd`` in every window, or return the spent window that refuses it."""
        now = self._clock.now()
        for window in self._windows:
            window.roll(now)
            if not window.admits(cost_usd):
                self.exhausted += 1
                snap = self._snap(window, now)
                if not window.refusing:
                    window.refusing = True
                    _log.warning(
                        "budget.exhausted window=%s spent_usd=%.4f limit_usd=%.4f resets_in_s=%.0f",
                        snap.window,
                        snap.spent_usd,
                        snap.limit_usd,
                        snap.resets_in_s,
                    )
                return snap
        for window in self._windows:
            window.reserved_usd += cost_usd
        return Reservation(cost_usd)

    def rescale(self, share: float) -> None:
        """Hold ``share`` (0..1) of every configured window's limit from now on (a loss applies
        at once, a gain from the next window or after a handover: :class:`ShareHistory`). What
        was spent and reserved in the current windows stays counted: a replica whose share
        shrinks below its spend refuses calls until the window rolls over."""
        self.share.set(share)

    def fleet_windows(self) -> dict[str, tuple[float, float]]:
        """Each window's length and configured (whole fleet's) limit, by name."""
        return {w.name: (w.length_s, w.fleet_limit_usd) for w in self._windows}

    def fleet_refusal(self, name: str) -> WindowSnapshot:
        """The fleet's window ``name`` (in Redis) refused a call: count it, and say when the
        window rolls over."""
        self.exhausted += 1
        now = self._clock.now()
        window = next(w for w in self._windows if w.name == name)
        limit = window.fleet_limit_usd
        resets_in_s = window.length_s - now % window.length_s
        return WindowSnapshot(name, limit, limit, 0.0, 0.0, resets_in_s, fleet=True)

    def settle(self, reservation: Reservation, actual_usd: float | None) -> None:
        """Replace a reservation by what the call cost (None: the call failed, cost unknown)."""
        now = self._clock.now()
        for window in self._windows:
            window.roll(now)
            window.reserved_usd = max(0.0, window.reserved_usd - reservation.cost_usd)
            window.spent_usd += actual_usd or 0.0
        self.total_spent_usd += actual_usd or 0.0

    def snapshot(self) -> CostSnapshot:
        now = self._clock.now()
        for window in self._windows:
            window.roll(now)
        return CostSnapshot(
            tuple(self._snap(w, now) for w in self._windows),
            self.total_spent_usd,
            self.fallback_spent_usd,
            self.exhausted,
            dict(self.tokens),
            dict(self.tiers),
        )

    @staticmethod
    def _snap(w: _Window, now: float) -> WindowSnapshot:
        left = max(0.0, w.limit_usd - w.spent_usd - w.reserved_usd)
        return WindowSnapshot(
            w.name, w.limit_usd, w.spent_usd, w.reserved_usd, left, w.resets_in(now)
        )


class CostBudgetJudge(JudgeLayer):
    """Applies a :class:`CostBudget` and its exhaustion policy around ``inner``."""

    def __init__(
        self,
        inner: Judge,
        budget: CostBudget,
        *,
        price: PriceFn,
        policy: BudgetPolicy,
        fallback: Judge | None,
        max_pause_s: float,
        clock: Clock,
        shared: SharedBudget | None = None,
    ) -> None:
        super().__init__(inner)
        self._shared = shared
        if policy is BudgetPolicy.FALLBACK and fallback is None:
            raise ConfigError(
                "budget.on_budget_exhausted",
                "fallback needs a fallback judge",
                "set fallback_model or fallback_to_offline",
            )
        self.budget, self._price, self._policy = budget, price, policy
        self._fallback, self._max_pause_s, self._clock = fallback, max_pause_s, clock
        self.paused = 0
        self.fallbacks = 0

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        estimate = self._price(self.inner.model, estimate_usage(case))
        deadline = self._clock.now() + self._max_pause_s
        while True:
            refused = self.budget.try_reserve(estimate)
            if isinstance(refused, Reservation):
                grant, fleet = refused, await self._reserve_fleet(refused)
                if not isinstance(fleet, WindowSnapshot):
                    return await self._judge(case, grant, fleet)
                refused = fleet
            if self._policy is BudgetPolicy.SKIP:
                raise JudgementSkipped(SkipReason.budget_exhausted(refused.window))
            if self._policy is BudgetPolicy.FALLBACK:
                return await self._fall_back(case, refused.window)
            with tracing.waiting("cost_budget"):
                await self._pause(refused, deadline)

    async def _reserve_fleet(self, grant: Reservation) -> SharedReservation | WindowSnapshot | None:
        """With Redis, reserve the call in the fleet's windows too: the reservation, or the
        fleet's window that refuses it (the local reservation is then given back). None
        without Redis or while it is unavailable."""
        if self._shared is None:
            return None
        found = await self._shared.reserve(grant.cost_usd, self.budget.fleet_windows())
        if isinstance(found, str):
            self.budget.settle(grant, None)
            return self.budget.fleet_refusal(found)
        return found

    async def _judge(
        self, case: PreparedCase, grant: Reservation, fleet: SharedReservation | None
    ) -> JudgeOutcome:
        try:
            outcome = await self.inner.assess(case)
        except (MalformedJudgeOutput, JudgeTimeout):
            # the provider got the request and may bill it (an answer cut at max_tokens, a
            # refusal, a call we gave up on): count the estimate, so such failures cannot
            # spend outside the budget
            await self._settle(grant, fleet, grant.cost_usd)
            raise
        except BaseException:
            await self._settle(grant, fleet, None)
            raise
        await self._settle(grant, fleet, self._cost(outcome))
        if not (outcome.cached or outcome.tier == "offline"):
            self.budget.count(outcome.usage)
        return outcome

    async def _settle(
        self, grant: Reservation, fleet: SharedReservation | None, actual_usd: float | None
    ) -> None:
        self.budget.settle(grant, actual_usd)
        if fleet is not None and self._shared is not None:
            await self._shared.settle(fleet, actual_usd)

    def _cost(self, outcome: JudgeOutcome) -> float:
        """What a call cost: nothing for cache hits and the offline judge."""
        if outcome.cached or outcome.tier == "offline":
            return 0.0
        return self._price(outcome.model, outcome.usage)

    async def _pause(self, spent: WindowSnapshot, deadline: float) -> None:
        now = self._clock.now()
        if now >= deadline:  # paused as long as allowed: fall back to the skip policy
            raise JudgementSkipped(SkipReason.budget_exhausted(spent.window))
        self.paused += 1
        wait = spent.resets_in_s
        if spent.reserved_usd > 0 or spent.fleet:  # calls in flight may settle lower: look again
            wait = min(wait, RESERVATION_RECHECK_S)
        if (rises_in := self.budget.share.rises_in()) is not None:  # a gained share applies
            wait = min(wait, max(rises_in, _SLACK))
        await self._clock.sleep(min(wait, deadline - now))

    async def _fall_back(self, case: PreparedCase, window: str) -> JudgeOutcome:
        assert self._fallback is not None
        self.fallbacks += 1
        outcome = await self._fallback.assess(case)
        self.budget.fallback_spent_usd += self._cost(outcome)
        return dataclasses.replace(outcome, fallback_reason=f"budget_exhausted:{window}")

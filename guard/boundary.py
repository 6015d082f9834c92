"""What a runtime needs from the core: the one typed boundary between ``consumers`` and ``guard``.

The Kafka runtime and the CLI hold the judge as a :class:`GuardCore` and use nothing else of it.
:class:`guard.engine.Guard` implements it; :func:`guard.assembly.build_guard` assembles the
budgeted one from settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from guard.batch.items import ItemRef
    from guard.batch.judge import BatchingJudge
    from guard.budgets.judge import BudgetStats
    from guard.models import JudgeInfo, JudgeRequest, Verdict


class GuardCore(Protocol):
    """Parse a payload, judge a request, report intake stops and budget counters, take a
    share of the fleet's budgets, close."""

    @property
    def intake_stop_reason(self) -> str | None:
        """The error kind (quota exhausted, key rejected) after which no message should be
        taken in; None while intake may go on."""

    @property
    def judge_info(self) -> JudgeInfo:
        """The judge a verdict names when no judge call decided it (tier ``none``, the
        configured prompt's version): what an edge's own ``error`` verdicts name too."""

    def parse(self, payload: bytes | str | Mapping[str, Any]) -> JudgeRequest:
        """A request from a raw payload; :class:`~guard.errors.InvalidRequest` when impossible."""

    async def judge(
        self, request: JudgeRequest, *, message_key: str | None = None, item: ItemRef | None = None
    ) -> Verdict:
        """The verdict on ``request``; judge errors and skips are verdicts, never raised.
        ``message_key`` and ``item`` say where in a stream the request comes from."""

    @property
    def batcher(self) -> BatchingJudge | None:
        """The batching judge under ``delivery: batch`` (None otherwise): the runtime reads
        its counters, settles its submissions and releases handed-over streams (its durable
        journal is given to it when it is built: :func:`guard.assembly.build_guard`)."""

    def budget_stats(self) -> BudgetStats | None:
        """The budget layers' counters (for metrics and progress logs); None without them."""

    def rescale_budgets(self, share: float) -> None:
        """Limit judging to ``share`` (0..1) of the configured rpm, tpm and cost windows: the
        runtime passes this replica's share of the input partitions after every rebalance."""

    async def aclose(self) -> None:
        """Release the judge's clients."""

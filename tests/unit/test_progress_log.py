"""``groundguard run`` logs its progress, with the judge's spend and budget left."""

from __future__ import annotations

import asyncio
import contextlib

from structlog.testing import capture_logs

from consumers.cli.commands.run import log_progress
from consumers.runtime.stats import PartitionStats, ServiceStats
from guard.assembly import make_budgeted_judge
from guard.engine import Guard
from guard.models import JudgeRequest
from guard.settings import JudgeSettings


async def test_progress_lines_carry_counts_lag_and_budget() -> None:
    settings = JudgeSettings.model_validate(
        {"provider": "fake", "budget": {"cost_per_hour_usd": 2.0}}
    )
    guard = Guard(make_budgeted_judge(settings, {}), settings)
    await guard.judge(JudgeRequest(output="Paris", context="Paris."))
    stats = ServiceStats(consumed=7, quarantined=2)
    stats.verdicts["pass"] = 5
    stats.partitions["t-0"] = PartitionStats(committed=10, highwater=13)
    with capture_logs() as logs:
        task = asyncio.create_task(log_progress(stats, guard, 0.01))
        for _ in range(100):
            await asyncio.sleep(0.01)
            if logs:
                break
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    await guard.aclose()
    line = logs[0]
    assert line["event"] == "service.progress"
    assert (line["consumed"], line["quarantined"], line["verdicts_pass"], line["lag"]) == (
        7,
        2,
        5,
        3,
    )
    assert line["provider_calls"] == 1
    assert line["left_usd_hour"] <= 2.0
    assert "spent_usd" in line


async def test_an_interval_of_zero_turns_it_off() -> None:
    with capture_logs() as logs:
        await asyncio.wait_for(log_progress(ServiceStats(), None, 0), timeout=1)
    assert logs == []

"""Deterministic sampling: judge a fixed fraction of messages, chosen by a hash of their id or
key, so a replay of the same messages samples the same ones."""

from __future__ import annotations

import hashlib

from guard.budgets.layer import JudgeLayer
from guard.budgets.settings import SampleKey
from guard.case import PreparedCase
from guard.errors import JudgementSkipped
from guard.providers.base import Judge, JudgeOutcome
from guard.skips import SkipReason

_SCALE = float(2**64)


def sample_point(key: str) -> float:
    """A stable point in [0, 1) for ``key`` (the same on every machine and run)."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _SCALE


def is_sampled(key: str, rate: float) -> bool:
    return rate >= 1.0 or sample_point(key) < rate


def sample_key_of(case: PreparedCase, key: SampleKey) -> str:
    """The message key when asked for and present, else the request id."""
    if key is SampleKey.KEY and case.message_key is not None:
        return case.message_key
    return case.request_id


class SampledJudge(JudgeLayer):
    """Judges only sampled cases; the others raise ``JudgementSkipped("not_sampled")``."""

    def __init__(self, inner: Judge, *, rate: float, key: SampleKey) -> None:
        super().__init__(inner)
        self.rate, self.key = rate, key
        self.unsampled = 0

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        if not is_sampled(sample_key_of(case, self.key), self.rate):
            self.unsampled += 1
            raise JudgementSkipped(SkipReason.not_sampled())
        return await self.inner.assess(case)

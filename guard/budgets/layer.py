"""The shape every budget layer shares: a judge that wraps a judge."""

from __future__ import annotations

from guard.case import PreparedCase
from guard.providers.base import Judge, JudgeOutcome


class JudgeLayer:
    """A :class:`~guard.providers.base.Judge` that adds one behaviour around ``inner``."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        return await self.inner.assess(case)

    async def aclose(self) -> None:
        await self.inner.aclose()

"""Anthropic's Message Batches for :class:`guard.batch.judge.BatchingJudge`.

Each item's ``params`` is the body a realtime call of
:class:`~guard.providers.anthropic.AnthropicJudge` posts; an ended batch's results (JSONL) hold
each item's message, read as the realtime answer is, or its error, cancellation or expiry.
Message batches carry no metadata: :meth:`AnthropicBatchAPI.candidates` offers every batch of
the intent's size created since a journaled intent, and the batching judge keeps the one whose
results hold the intent's ``custom_id`` s.
"""

from __future__ import annotations

from typing import Any

from anthropic.types import Message

from guard.batch.api import ItemFailure, ItemResult
from guard.case import PreparedCase
from guard.prepare.injection import Fence
from guard.providers._common import bounded_call
from guard.providers.anthropic import AnthropicJudge
from guard.providers.base import JudgeOutcome
from guard.providers.prompts import JudgePrompt, build_prompt


class AnthropicBatchAPI:
    """Implements :class:`guard.batch.api.BatchAPI` with the ``anthropic`` SDK of ``judge``."""

    def __init__(self, judge: AnthropicJudge) -> None:
        self._judge = judge
        self._batches = judge.client.messages.batches
        self.provider, self.model = judge.provider, judge.model

    def prompt(self, case: PreparedCase) -> JudgePrompt:
        return build_prompt(case, Fence.new(), examples=self._judge.examples)

    def request(self, custom_id: str, prompt: JudgePrompt) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": self._judge.request_body(prompt)}

    async def submit(self, requests: list[dict[str, Any]], key: str) -> str:
        items: Any = requests  # the typed dicts' shape: custom_id and params
        batch = await self._bounded(lambda: self._batches.create(requests=items))
        return str(batch.id)

    async def candidates(self, key: str, since: float, size: int) -> list[str]:
        """Every batch of ``size`` items listed (newest first) back to ``since``: none carries
        ``key``."""

        async def find() -> list[str]:
            found = []
            async for batch in self._batches.list(limit=100):
                if batch.created_at.timestamp() < since:
                    break
                if not size or sum(batch.request_counts.model_dump().values()) == size:
                    found.append(batch.id)
            return found

        found: list[str] = await self._bounded(find)
        return found

    async def ended(self, batch_id: str) -> bool:
        batch = await self._bounded(lambda: self._batches.retrieve(batch_id))
        return bool(batch.processing_status == "ended")

    async def results(self, batch_id: str) -> dict[str, ItemResult]:
        async def read() -> dict[str, ItemResult]:
            out: dict[str, ItemResult] = {}
            async for item in await self._batches.results(batch_id):
                out[item.custom_id] = _result(item.result)
            return out

        result: dict[str, ItemResult] = await self._bounded(read)
        return result

    def outcome(self, result: Any, prompt: JudgePrompt) -> JudgeOutcome:
        return self._judge.message_outcome(prompt, result)

    async def aclose(self) -> None:
        """Nothing of its own: the clients are the realtime judge's, closed by its owner."""

    async def _bounded(self, call: Any) -> Any:
        s = self._judge.settings
        return await bounded_call(self.provider, s.timeout_s, call, self._judge.secrets)


def _result(result: Any) -> ItemResult:
    if result.type == "succeeded" and isinstance(result.message, Message):
        return result.message
    if result.type == "errored":
        return ItemFailure("errored", str(result.error.error.message)[:300])
    return ItemFailure("expired", f"the item was {result.type} before it ran")

"""What a provider's batch API offers the :class:`~guard.batch.judge.BatchingJudge`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from guard.case import PreparedCase
from guard.providers.base import JudgeOutcome
from guard.providers.prompts import JudgePrompt


@dataclass(frozen=True)
class ItemFailure:
    """An item the provider did not answer: it errored, or the batch expired or was canceled
    before it ran."""

    kind: Literal["errored", "expired"]
    message: str


ItemResult = Any | ItemFailure
"""The provider's answer to one item (its own response object), or why there is none."""


class BatchAPI(Protocol):
    """One provider's batch endpoints. Errors are :class:`~guard.errors.JudgeError`."""

    provider: str
    model: str

    def prompt(self, case: PreparedCase) -> JudgePrompt:
        """The prompt of ``case``, built as the realtime judge builds it."""
        ...

    def request(self, custom_id: str, prompt: JudgePrompt) -> dict[str, Any]:
        """One batch item: the same request body a realtime call sends."""
        ...

    async def submit(self, requests: list[dict[str, Any]], key: str) -> str:
        """Create a batch of ``requests``, tagged with ``key`` where the provider allows it;
        its id."""
        ...

    async def candidates(self, key: str, since: float, size: int) -> list[str]:
        """The ids of batches created since ``since`` (epoch seconds) that may be the one
        submitted under ``key``: the one tagged with it (OpenAI), or every one of ``size``
        items (Anthropic tags none; 0: any size); the caller confirms by the items'
        ``custom_id`` in its results."""
        ...

    async def ended(self, batch_id: str) -> bool:
        """Whether the batch has ended (completed, expired, canceled or failed)."""
        ...

    async def results(self, batch_id: str) -> dict[str, ItemResult]:
        """Every item's result of an ended batch, by ``custom_id``."""
        ...

    def outcome(self, result: Any, prompt: JudgePrompt) -> JudgeOutcome:
        """A successful item's outcome, parsed as the realtime answer is."""
        ...

    async def aclose(self) -> None:
        """Release what the API holds of its own (not the realtime judge's clients)."""
        ...

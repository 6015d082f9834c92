"""OpenAI's Batch API (Files + Batches) for :class:`guard.batch.judge.BatchingJudge`.

Each item is the body a realtime call of :class:`~guard.providers.openai.OpenAIJudge` posts
(chat completions or the Responses API), one JSONL line with its ``custom_id``; the input file is
uploaded with ``purpose=batch`` and the batch created on the same endpoint, its ``metadata``
naming the journal's key (``groundguard_batch``), by which :meth:`OpenAIBatchAPI.candidates`
finds it again among the batches listed. An ended batch's
output file holds the answers (read as realtime answers are), its error file the items that
failed or expired.
"""

from __future__ import annotations

from typing import Any

import orjson

from guard.batch.api import ItemFailure, ItemResult
from guard.case import PreparedCase
from guard.errors import MalformedJudgeOutput
from guard.prepare.injection import Fence
from guard.providers._common import bounded_call
from guard.providers.base import JudgeOutcome
from guard.providers.openai import OpenAIJudge
from guard.providers.prompts import JudgePrompt, build_prompt

ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
KEY_FIELD = "groundguard_batch"  # the batch metadata field holding the journal's key
EXPIRED_CODES = frozenset({"batch_expired", "batch_cancelled"})


class OpenAIBatchAPI:
    """Implements :class:`guard.batch.api.BatchAPI` with the ``openai`` SDK of ``judge``."""

    def __init__(self, judge: OpenAIJudge) -> None:
        self._judge = judge
        self._client = judge.client
        self.provider, self.model = judge.provider, judge.model

    def prompt(self, case: PreparedCase) -> JudgePrompt:
        return build_prompt(case, Fence.new(), examples=self._judge.examples)

    def request(self, custom_id: str, prompt: JudgePrompt) -> dict[str, Any]:
        url, body = self._judge.batch_request(prompt)
        return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}

    async def submit(self, requests: list[dict[str, Any]], key: str) -> str:
        data = b"".join(orjson.dumps(r) + b"\n" for r in requests)
        endpoint: Any = requests[0]["url"]

        async def create() -> str:
            upload = await self._client.files.create(
                file=("groundguard-batch.jsonl", data, "application/jsonl"), purpose="batch"
            )
            batch = await self._client.batches.create(
                input_file_id=upload.id,
                endpoint=endpoint,
                completion_window="24h",
                metadata={KEY_FIELD: key},
            )
            return batch.id

        batch_id: str = await self._bounded(create)
        return batch_id

    async def candidates(self, key: str, since: float, size: int) -> list[str]:
        """The batch tagged with ``key``, among those listed (newest first) back to ``since``."""

        async def find() -> list[str]:
            found = []
            async for batch in self._client.batches.list(limit=100):
                if batch.created_at < since:
                    break
                if (batch.metadata or {}).get(KEY_FIELD) == key:
                    found.append(batch.id)
            return found

        found: list[str] = await self._bounded(find)
        return found

    async def ended(self, batch_id: str) -> bool:
        batch = await self._bounded(lambda: self._client.batches.retrieve(batch_id))
        return batch.status in ENDED

    async def results(self, batch_id: str) -> dict[str, ItemResult]:
        batch = await self._bounded(lambda: self._client.batches.retrieve(batch_id))
        out: dict[str, ItemResult] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                out.update(_read_lines(await self._content(file_id)))
        return out

    def outcome(self, result: Any, prompt: JudgePrompt) -> JudgeOutcome:
        return self._judge.batch_outcome(prompt, result)

    async def aclose(self) -> None:
        """Nothing of its own: the clients are the realtime judge's, closed by its owner."""

    async def _content(self, file_id: str) -> bytes:
        async def read() -> bytes:
            return (await self._client.files.content(file_id)).content

        content: bytes = await self._bounded(read)
        return content

    async def _bounded(self, call: Any) -> Any:
        s = self._judge.settings
        secrets = self._judge.secrets
        return await bounded_call(self.provider, s.timeout_s, call, secrets)


def _read_lines(content: bytes) -> dict[str, ItemResult]:
    """Each line of an output or error file: the response body, or why there is none."""
    out: dict[str, ItemResult] = {}
    for line in content.splitlines():
        if not line.strip():
            continue
        try:
            item = orjson.loads(line)
            cid = str(item["custom_id"])
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            raise MalformedJudgeOutput("openai batch file has a line that is not an item") from exc
        out[cid] = _result(item)
    return out


def _result(item: dict[str, Any]) -> ItemResult:
    response, error = _object(item.get("response")), _object(item.get("error"))
    if response.get("status_code") == 200 and isinstance(response.get("body"), dict):
        return response["body"]
    code = str(error.get("code") or response.get("status_code") or "unknown")
    message = str(error.get("message") or _object(response.get("body")).get("error") or code)
    return ItemFailure("expired" if code in EXPIRED_CODES else "errored", message[:300])


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}

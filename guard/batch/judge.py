"""The batching judge: each ``assess`` becomes one item of a provider batch, and waits for it.

Items gather in one open batch until it holds ``max_items`` or its first item has waited
``max_wait_s``; then the batch is submitted (the same request bodies a realtime call sends, at the
batch price), recorded in the :class:`~guard.batch.journal.BatchJournal`, and polled every
``poll_interval_s`` until it ends. Each waiting ``assess`` then gets its item's outcome, parsed
by the provider's realtime code, its usage marked ``service_tier: batch`` (so it is priced at
the price table's ``delivery_factor.batch``). An item whose ``custom_id`` the journal already
knows (an earlier owner of the partition submitted it, or the message came round again) is not
submitted again: its batch is polled instead. A failed or expired item is judged in realtime,
or raises an error (``failure_policy``). An item whose caller gives up before its batch is
submitted (a revoked partition, a rewind) is taken out of the batch, so nobody pays for it.

Submission is idempotent across crashes: a batch is journaled as an intent (its items and a
fresh key) before it is submitted, tagged with that key where the provider allows it, and
journaled again with the provider's id once accepted. An item whose journal entry is still an
intent (the process died in between) has its batch looked for among the provider's batches
created since (``BatchAPI.candidates``, confirmed by the items' ``custom_id`` in the results):
adopted when found, its items submitted again only when the provider holds none.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import structlog

from guard.batch.api import BatchAPI, ItemFailure, ItemResult
from guard.batch.items import ItemRef, custom_id, stream_prefix
from guard.batch.journal import BatchJournal, MemoryJournal, SubmittedBatch
from guard.case import PreparedCase
from guard.errors import BatchItemExpired, BatchItemFailed, GuardError, JudgeError
from guard.providers.base import Judge, JudgeOutcome
from guard.providers.prompts import JudgePrompt
from guard.settings import BatchSettings

log = structlog.get_logger("guard.batch")
COMPLETION_WINDOW_S = {"24h": 86_400.0}
POLL_GRACE_S = 3_600.0  # polled this long past the completion window before items count expired
KEPT_RESULT_SETS = 64  # ended batches whose results stay for items asked again
CLOCK_SKEW_S = 300.0  # a provider batch created this long before its intent may still be it


@dataclass(frozen=True)
class BatchStats:
    """The batching judge's counters and gauges (metrics, logs, readiness)."""

    open_items: int  # gathered, not submitted yet
    submitted: int  # batches submitted since start
    completed: int  # batches ended and read
    polling: int  # batches being waited for
    items_waiting: int  # callers waiting for an outcome (open or submitted)
    oldest_item_age_s: float
    failed_items: int  # errored or expired items
    last_poll: float | None  # monotonic time of the last successful poll or submission


@dataclass
class _Entry:
    cid: str
    ref: ItemRef | None
    request: dict[str, Any]
    future: asyncio.Future[ItemResult]
    callers: int = 1


@dataclass
class _State:
    open: dict[str, _Entry] = field(default_factory=dict)
    waiters: dict[str, dict[str, list[asyncio.Future[ItemResult]]]] = field(default_factory=dict)
    results: OrderedDict[str, dict[str, ItemResult]] = field(default_factory=OrderedDict)
    pending: dict[asyncio.Future[ItemResult], float] = field(default_factory=dict)


class BatchingJudge:
    """A :class:`~guard.providers.base.Judge` over a provider's batch API (module docstring).

    ``realtime`` judges failed items under ``failure_policy: realtime``."""

    def __init__(
        self,
        api: BatchAPI,
        settings: BatchSettings,
        realtime: Judge,
        *,
        journal: BatchJournal | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api, self.settings, self.realtime = api, settings, realtime
        self.provider, self.model = api.provider, api.model
        self.journal: BatchJournal = journal if journal is not None else MemoryJournal()
        self._clock = clock
        self._state = _State()
        self._timer: asyncio.TimerHandle | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._adoptions: dict[str, asyncio.Task[str | None]] = {}  # intent key -> batch id
        self._submitted = self._completed = self._failed = 0
        self._last_poll: float | None = None

    def __repr__(self) -> str:
        return f"BatchingJudge(provider={self.provider!r}, model={self.model!r})"

    # ------------------------------------------------------------------ the judge

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        prompt = self.api.prompt(case)
        ref = case.item
        cid = custom_id(ref, case.window)
        known = self.journal.find(cid)
        if known is not None and known.batch_id is None:
            known = await self._adopted(known)
        if known is not None:
            result = await self._result_of(known, cid)
        else:
            result = await self._gathered(cid, ref, prompt)
        return await self._outcome(case, prompt, result)

    async def _outcome(
        self, case: PreparedCase, prompt: JudgePrompt, result: ItemResult
    ) -> JudgeOutcome:
        if isinstance(result, ItemFailure):
            self._failed += 1
            log.info("batch.item_failed", kind=result.kind, policy=self.settings.failure_policy)
            if self.settings.failure_policy == "realtime":
                return await self.realtime.assess(case)
            error = BatchItemExpired if result.kind == "expired" else BatchItemFailed
            raise error(f"batch item {result.kind}: {result.message[:200]}")
        outcome = self.api.outcome(result, prompt)
        usage = outcome.usage.model_copy(update={"service_tier": "batch"})
        return dataclasses.replace(outcome, usage=usage)

    # ------------------------------------------------------------------ gathering

    async def _gathered(self, cid: str, ref: ItemRef | None, prompt: JudgePrompt) -> ItemResult:
        """Add the item to the open batch and wait for its result."""
        state = self._state
        entry = state.open.get(cid)
        if entry is not None:  # the same message again while its first call still waits
            entry.callers += 1
        else:
            future: asyncio.Future[ItemResult] = asyncio.get_running_loop().create_future()
            entry = _Entry(cid, ref, self.api.request(cid, prompt), future)
            state.open[cid] = entry
            self._track(future)
            self._schedule()
        try:
            return await asyncio.shield(entry.future)
        except asyncio.CancelledError:
            entry.callers -= 1
            if entry.callers == 0 and state.open.get(cid) is entry:  # never submitted
                del state.open[cid]
                entry.future.cancel()
            raise

    def _schedule(self) -> None:
        if len(self._state.open) >= self.settings.max_items:
            self.flush()
        elif self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.settings.max_wait_s, self.flush)

    def flush(self) -> None:
        """Submit the open batch now (it is submitted by itself when full or old enough)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        entries = list(self._state.open.values())
        self._state.open.clear()
        if entries:
            task = asyncio.create_task(self._send(entries))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, entries: list[_Entry]) -> None:
        items = tuple((e.cid, e.ref) for e in entries)
        key = uuid.uuid4().hex
        intent = SubmittedBatch(self.provider, None, items, time.time(), key, len(items))
        await self._record(intent)  # before the provider holds it: a crash then adopts it
        try:
            batch_id = await self.api.submit([e.request for e in entries], intent.key)
        except JudgeError as exc:
            log.warning("batch.submit_failed", items=len(entries), error=str(exc))
            for e in entries:
                if not e.future.done():
                    e.future.set_exception(exc)
            return
        self._submitted += 1
        self._last_poll = self._clock()
        batch = dataclasses.replace(intent, batch_id=batch_id)
        log.info("batch.submitted", batch_id=batch_id, key=intent.key, items=len(entries))
        for e in entries:
            self._state.waiters.setdefault(batch_id, {}).setdefault(e.cid, []).append(e.future)
        await self._record(batch)
        self._watch(batch, just_submitted=True)

    async def _record(self, batch: SubmittedBatch) -> None:
        """Journal ``batch``; a failure is logged: the batch goes on (only a crash before the
        record is stored could then submit its items again)."""
        try:
            await self.journal.record(batch)
        except GuardError as exc:
            log.error("batch.record_failed", key=batch.ident, error=str(exc))

    # ------------------------------------------------------------------ adopting

    async def _adopted(self, intent: SubmittedBatch) -> SubmittedBatch | None:
        """The provider batch of ``intent`` (a batch whose submission was journaled but not
        its id), once found and recorded; None when the provider holds none: it was never
        submitted, and its items may be."""
        task = self._adoptions.get(intent.key)
        if task is None:  # one search at a time per intent, however many of its items ask
            task = asyncio.create_task(self._find_submitted(intent))
            self._adoptions[intent.key] = task
            task.add_done_callback(lambda _: self._adoptions.pop(intent.key, None))
        batch_id = await asyncio.shield(task)
        if batch_id is None:
            return None
        batch = dataclasses.replace(intent, batch_id=batch_id)
        if self.journal.find(intent.custom_ids[0]) is intent:
            await self._record(batch)
        return batch

    async def _find_submitted(self, intent: SubmittedBatch) -> str | None:
        for batch_id in await self._candidates(intent):
            results = await self._results_of(batch_id, intent.submitted_at)
            if any(cid in results for cid in intent.custom_ids):
                log.info("batch.adopted", batch_id=batch_id, key=intent.key)
                return batch_id
        log.info("batch.not_submitted", key=intent.key, items=len(intent.items))
        return None

    async def _candidates(self, intent: SubmittedBatch) -> list[str]:
        """The provider's candidates for ``intent``; transient errors are retried every
        ``poll_interval_s`` within the completion window, as polls are."""
        deadline = intent.submitted_at + COMPLETION_WINDOW_S[self.settings.completion_window]
        while True:
            try:
                since = intent.submitted_at - CLOCK_SKEW_S
                return await self.api.candidates(intent.key, since, intent.size)
            except JudgeError as exc:
                if not exc.retriable or time.time() >= deadline:
                    raise
                log.warning("batch.list_failed", key=intent.key, error=str(exc))
            await asyncio.sleep(self.settings.poll_interval_s)

    async def _results_of(self, batch_id: str, submitted_at: float) -> dict[str, ItemResult]:
        """Every result of ``batch_id`` once it ended (kept for the items that ask next)."""
        ready = self._state.results.get(batch_id)
        if ready is None:
            deadline = submitted_at + COMPLETION_WINDOW_S[self.settings.completion_window]
            ready = await self._until_ended(batch_id, deadline + POLL_GRACE_S)
            self._keep(batch_id, ready)
        return ready

    def release(self, streams: Collection[str]) -> None:
        """Stop waiting for the items of ``streams`` (partitions handed over to another owner,
        who polls their batches): their callers are cancelled, and a batch left with no caller
        is no longer polled."""
        prefixes = tuple(stream_prefix(s) for s in streams)
        if not prefixes:
            return
        for batch_id, by_item in list(self._state.waiters.items()):
            for cid in [c for c in by_item if c.startswith(prefixes)]:
                for future in by_item.pop(cid):
                    future.cancel()
            if by_item:
                continue
            del self._state.waiters[batch_id]
            poller = self._pollers.pop(batch_id, None)
            if poller is not None:
                poller.cancel()
                log.info("batch.released", batch_id=batch_id)

    async def settle(self, timeout_s: float) -> None:
        """Wait (up to ``timeout_s``) until batches being submitted are recorded: a partition
        is handed over only once its submitted batches can be found by the next owner."""
        if self._sending:
            await asyncio.wait(set(self._sending), timeout=timeout_s)

    # ------------------------------------------------------------------ waiting

    async def _result_of(self, batch: SubmittedBatch, cid: str) -> ItemResult:
        """The result of an item submitted before: known, or once its batch ends."""
        assert batch.batch_id is not None
        ready = self._state.results.get(batch.batch_id)
        if ready is not None:
            return ready.get(cid, ItemFailure("expired", "the batch has no result for it"))
        future: asyncio.Future[ItemResult] = asyncio.get_running_loop().create_future()
        self._state.waiters.setdefault(batch.batch_id, {}).setdefault(cid, []).append(future)
        self._track(future)
        self._watch(batch, just_submitted=False)
        return await future

    def _watch(self, batch: SubmittedBatch, *, just_submitted: bool) -> None:
        batch_id = batch.batch_id
        assert batch_id is not None
        if batch_id in self._pollers or batch_id in self._state.results:
            return
        task = asyncio.create_task(self._poll(batch_id, batch, just_submitted))
        self._pollers[batch_id] = task

    async def _poll(self, batch_id: str, batch: SubmittedBatch, just_submitted: bool) -> None:
        deadline = batch.submitted_at + COMPLETION_WINDOW_S[self.settings.completion_window]
        try:
            if just_submitted:
                await asyncio.sleep(self.settings.poll_interval_s)
            results = await self._until_ended(batch_id, deadline + POLL_GRACE_S)
            self._ended(batch_id, batch, results)
        finally:
            self._pollers.pop(batch_id, None)

    async def _until_ended(self, batch_id: str, deadline: float) -> dict[str, ItemResult]:
        while time.time() < deadline:
            try:
                if await self.api.ended(batch_id):
                    return await self.api.results(batch_id)
                self._last_poll = self._clock()
            except JudgeError as exc:
                if not exc.retriable:  # e.g. 404: the batch is not this key's
                    log.error("batch.lost", batch_id=batch_id, error=str(exc))
                    return {}
                log.warning("batch.poll_failed", batch_id=batch_id, error=str(exc))
            await asyncio.sleep(self.settings.poll_interval_s)
        return {}

    def _keep(self, batch_id: str, results: dict[str, ItemResult]) -> None:
        kept = self._state.results
        kept[batch_id] = results
        while len(kept) > KEPT_RESULT_SETS:
            kept.popitem(last=False)

    def _ended(self, batch_id: str, batch: SubmittedBatch, results: dict[str, ItemResult]) -> None:
        self._completed += 1
        self._last_poll = self._clock()
        missing = ItemFailure("expired", "the batch ended without a result for it")
        # every result the provider gave: ``batch`` may be one partition's slice of it
        full = {**dict.fromkeys(batch.custom_ids, missing), **results}
        self._keep(batch_id, full)
        failed = sum(isinstance(r, ItemFailure) for r in full.values())
        log.info("batch.completed", batch_id=batch_id, items=len(full), failed=failed)
        for cid, futures in self._state.waiters.pop(batch_id, {}).items():
            for future in futures:
                if not future.done():
                    future.set_result(full.get(cid, missing))

    def _track(self, future: asyncio.Future[ItemResult]) -> None:
        pending = self._state.pending
        pending[future] = self._clock()
        future.add_done_callback(lambda f: pending.pop(f, None))

    # ------------------------------------------------------------------ state

    def stats(self) -> BatchStats:
        now = self._clock()
        since = list(self._state.pending.values())
        return BatchStats(
            open_items=len(self._state.open),
            submitted=self._submitted,
            completed=self._completed,
            polling=len(self._pollers),
            items_waiting=len(since),
            oldest_item_age_s=max(0.0, now - min(since)) if since else 0.0,
            failed_items=self._failed,
            last_poll=self._last_poll,
        )

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        tasks = [*self._sending, *self._pollers.values(), *self._adoptions.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.api.aclose()
        await self.realtime.aclose()

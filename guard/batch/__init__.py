"""Batch delivery: judge calls gathered into provider batches at half the price.

* :mod:`guard.batch.items`: which stream position a judged case comes from (set by the runtime
  in a context variable) and the ``custom_id`` each item gets, the same on every replica;
* :mod:`guard.batch.journal`: where submitted batches are remembered (:class:`MemoryJournal`
  here; the Kafka runtime stores them in a compacted topic), so an item already submitted is
  awaited, never sent again;
* :mod:`guard.batch.api`: what a provider's batch API offers (OpenAI Files + Batches in
  :mod:`guard.providers.openai_batch`, Anthropic Message Batches in
  :mod:`guard.providers.anthropic_batch`);
* :mod:`guard.batch.judge`: :class:`BatchingJudge`, a :class:`~guard.providers.base.Judge`
  whose ``assess`` waits for its item's result; failed and expired items follow
  ``judge.batch.failure_policy``.
"""

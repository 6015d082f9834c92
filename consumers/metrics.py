"""Prometheus metrics of the service, in a registry of their own (no global state).

Two kinds of sources feed :class:`Metrics`:

* events the service reports as they happen: :meth:`Metrics.observe_verdict` (verdicts by label
  and judge tier, judge latency, tokens and cost by model, cache hits, error kinds);
* state read at scrape time: the :class:`~consumers.runtime.stats.ServiceStats` the service keeps
  (messages consumed, quarantined, dead-lettered by reason, in flight, lag per partition, intake
  stopped...) and the judge's budget layers (:meth:`guard.budgets.judge.BudgetedJudge.stats`:
  breaker state, USD left per budget window, provider calls, retries by error kind, read through
  :meth:`guard.boundary.GuardCore.budget_stats`), or explicit probes for them.

Every name starts with ``groundguard_``; counters end in ``_total`` as Prometheus expects.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from consumers.runtime.stats import ServiceStats
from guard.batch.judge import BatchStats
from guard.budgets.judge import BudgetStats
from guard.learning.learner import Learner
from guard.models import Verdict

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
NS = "groundguard"
# Judge calls take from ~50 ms (cache, offline) to tens of seconds (LLM under load).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)
BREAKER_STATES = ("closed", "half_open", "open")

BreakerProbe = Callable[[], str]
"""Returns the breaker state: ``closed``, ``half_open`` or ``open``."""
BudgetProbe = Callable[[], Mapping[str, float]]
"""Returns USD left per budget window, e.g. ``{"hour": 1.5, "day": 20.0}``."""
JudgeStatsProbe = Callable[[], BudgetStats | None]
"""Returns the budget layers' counters, or None without them (``GuardCore.budget_stats``)."""


class Metrics:
    """The service's metrics. ``stats`` is read at every scrape; call the methods on events."""

    def __init__(
        self,
        stats: ServiceStats | None = None,
        *,
        judge_stats: JudgeStatsProbe | None = None,
        breaker: BreakerProbe | None = None,
        budget: BudgetProbe | None = None,
        clock: Callable[[], float] = time.monotonic,
        learner: Learner | None = None,
    ) -> None:
        """``judge_stats``: the budget layers' counters (``guard.budget_stats``); they supply
        the breaker and budget gauges unless ``breaker`` / ``budget`` probes are given.
        ``learner``: the learning cascade's (``judge.cascade.learn``), read at each scrape."""
        self.learner = learner
        self.registry = CollectorRegistry(auto_describe=True)
        self.stats = stats
        self.judge_stats = judge_stats
        self.breaker = breaker
        self.budget = budget
        self._verdicts = Counter(
            f"{NS}_verdicts",
            "Verdicts published, by label and judge tier.",
            ["label", "tier"],
            registry=self.registry,
        )
        self._latency = Histogram(
            f"{NS}_judge_latency_seconds",
            "Time to a verdict (judge call, retries included), by tier.",
            ["tier"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._tokens = Counter(
            f"{NS}_judge_tokens",
            "Judge tokens, by model and kind (input, output, cached, cache_write; cached and "
            "cache_write are parts of input, billed at their own prices).",
            ["model", "kind"],
            registry=self.registry,
        )
        self._cost = Counter(
            f"{NS}_judge_cost_usd",
            "Judge spend in USD, by model.",
            ["model"],
            registry=self.registry,
        )
        self._tiers = Counter(
            f"{NS}_judge_service_tier_calls",
            "Judge calls by the provider tier that served them (default, flex, batch).",
            ["model", "service_tier"],
            registry=self.registry,
        )
        self._readings = Counter(
            f"{NS}_tier_readings",
            "Readings of messages by each tier of judge.tiers (cascades only), by tier name, "
            "kind and outcome: decided, handed_on, error.",
            ["tier_name", "kind", "outcome"],
            registry=self.registry,
        )
        self._cache_hits = Counter(
            f"{NS}_judge_cache_hits", "Verdicts served from the cache.", registry=self.registry
        )
        self._errors = Counter(
            f"{NS}_judge_errors",
            "Verdicts with label error, by error kind.",
            ["kind"],
            registry=self.registry,
        )
        self.registry.register(_StateCollector(self, clock))

    # ------------------------------------------------------------------ events

    def observe_verdict(self, verdict: Verdict) -> None:
        """Count one published verdict: label, tier, latency, tokens, cost, cache hit, error."""
        tier = verdict.judge.tier
        self._verdicts.labels(verdict.label.value, tier).inc()
        if tier != "none":
            self._latency.labels(tier).observe(max(verdict.latency_ms, 0.0) / 1000.0)
        model = verdict.judge.model
        for kind, count in (
            ("input", verdict.usage.input_tokens),
            ("output", verdict.usage.output_tokens),
            ("cached", verdict.usage.cached_tokens),
            ("cache_write", verdict.usage.cache_write_tokens),
        ):
            if count:
                self._tokens.labels(model, kind).inc(count)
        if verdict.usage.service_tier is not None:
            self._tiers.labels(model, verdict.usage.service_tier).inc()
        for reading in verdict.judge.tiers:
            outcome = "error" if reading.error else "decided" if reading.decided else "handed_on"
            self._readings.labels(reading.name, reading.kind, outcome).inc()
        if verdict.cost_usd:
            self._cost.labels(model).inc(verdict.cost_usd)
        if verdict.judge.cached:
            self._cache_hits.inc()
        if verdict.error is not None:
            self._errors.labels(verdict.error.kind).inc()

    # ------------------------------------------------------------------ exposition

    def render(self) -> bytes:
        """The text exposition format of every metric, as served on ``/metrics``."""
        return generate_latest(self.registry)


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(f"{NS}_{name}", doc, value=value)


def _gauge(
    name: str, doc: str, value: float | None = None, labels: Sequence[str] | None = None
) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{NS}_{name}", doc, value=value, labels=labels)


def _learning(learner: Learner) -> Iterable[Metric]:
    """Each tier's measured agreement (per direction, over its bases) and bases deciding."""
    agreement = _gauge(
        "learning_agreement",
        "The learning cascade: each screen tier's agreement with the labels, per direction "
        "(the seed, this replica and its peers summed over the tier's bases).",
        labels=["tier", "direction"],
    )
    bases = _gauge(
        "learning_bases",
        "The learning cascade's bases by tier and state: local (decides without the last "
        "tier) or measuring.",
        labels=["tier", "state"],
    )
    totals: dict[tuple[str, str], list[float]] = {}
    states: dict[tuple[str, str], int] = {}
    for key in learner.ledger.all_keys():
        count = learner.ledger.count(key)
        into = totals.setdefault((key.tier, key.direction), [0.0, 0.0])
        into[0] += count.agree
        into[1] += count.total
        where = (key.tier, "local" if learner.trusted(key) else "measuring")
        states[where] = states.get(where, 0) + 1
    for (tier, direction), (agree, total) in sorted(totals.items()):
        agreement.add_metric([tier, direction], agree / total if total else 0.0)
    for (tier, kind), n in sorted(states.items()):
        bases.add_metric([tier, kind], float(n))
    labels = CounterMetricFamily(
        f"{NS}_labels",
        "Reviewers' labels read, by outcome: applied (this replica judged the message) or "
        "unknown (it did not: every replica reads every label, so across N replicas a label "
        "applied once is unknown on the other N-1; sum applied over replicas).",
        labels=["outcome"],
    )
    labels.add_metric(["applied"], float(learner.labels - learner.unmatched_labels))
    labels.add_metric(["unknown"], float(learner.unmatched_labels))
    yield agreement
    yield bases
    yield labels


class _StateCollector(Collector):
    """Reads the service's stats and probes at scrape time."""

    def __init__(self, metrics: Metrics, clock: Callable[[], float]) -> None:
        self._metrics = metrics
        self._clock = clock

    def describe(self) -> list[Metric]:
        return []  # dynamic: families depend on which sources are present

    def collect(self) -> Iterable[Metric]:
        stats = self._metrics.stats
        if stats is not None:
            yield from self._service(stats)
            yield from self._partitions(stats)
        probe = self._metrics.judge_stats
        snapshot = probe() if probe is not None else None
        yield from self._breaker(snapshot)
        yield from self._budget(snapshot)
        if snapshot is not None:
            yield from self._judge(snapshot)
        if self._metrics.learner is not None:
            yield from _learning(self._metrics.learner)

    def _judge(self, snapshot: BudgetStats) -> Iterable[Metric]:
        yield _counter(
            "judge_provider_calls",
            "Calls made to the judge provider, retries included.",
            float(snapshot.provider_calls),
        )
        retries = CounterMetricFamily(
            f"{NS}_judge_retries", "Judge calls retried, by error kind.", labels=["kind"]
        )
        for kind, count in sorted(snapshot.retries.items()):
            retries.add_metric([kind], float(count))
        yield retries
        yield _gauge(
            "budget_fleet_share",
            "The share of the fleet's rpm and tpm this replica may take now (its input "
            "partitions over all of them; a gained share applies 60 s late).",
            snapshot.fleet_share,
        )
        if snapshot.shared is not None:
            yield _gauge(
                "budget_shared_up",
                "1 while Redis answers (judge.budget.fleet: redis); 0 while the replica runs "
                "on its partition share.",
                1.0 if snapshot.shared.up else 0.0,
            )
            yield _counter(
                "budget_shared_outages",
                "Times Redis became unavailable (each logged once as budget.shared_unavailable).",
                float(snapshot.shared.outages),
            )

    def _service(self, stats: ServiceStats) -> Iterable[Metric]:
        for attr, name, doc in _COUNTERS:
            yield _counter(name, doc, float(getattr(stats, attr)))
        dead = CounterMetricFamily(
            f"{NS}_dead_lettered", "Messages dead-lettered, by reason.", labels=["reason"]
        )
        for reason, count in sorted(stats.dead_lettered.items()):
            dead.add_metric([reason], float(count))
        yield dead
        yield from _replies(stats)
        yield from _streams(stats)
        for attr, name, doc in _GAUGES:
            yield _gauge(name, doc, float(getattr(stats, attr)))
        stopped = _gauge(
            "intake_stopped",
            "1 when intake stopped (quota spent, key rejected), by reason.",
            labels=["reason"],
        )
        stop = stats.intake_stopped
        stopped.add_metric([stop or ""], 1.0 if stop else 0.0)
        yield stopped
        yield _gauge(
            "buffered_bytes",
            "Input and output bytes held (in flight, waiting, unacknowledged or staged); "
            "partitions pause at max_buffered_bytes.",
            float(stats.buffered_bytes),
        )
        yield _gauge(
            "seconds_since_progress",
            "Seconds since a message last finished.",
            max(0.0, self._clock() - stats.last_progress),
        )
        if stats.batch is not None:
            yield from _batch_metrics(stats.batch)

    def _partitions(self, stats: ServiceStats) -> Iterable[Metric]:
        parts = stats.partitions
        lag = _gauge(
            "consumer_lag",
            "Messages not yet committed, per assigned partition.",
            labels=["topic", "partition"],
        )
        paused = _gauge(
            "partition_paused",
            "1 while a partition is paused (buffer full).",
            labels=["topic", "partition"],
        )
        outstanding = _gauge(
            "partition_outstanding", "Messages held per partition.", labels=["topic", "partition"]
        )
        for key, part in sorted(parts.items()):
            topic, partition = split_partition_key(key)
            if part.lag is not None:
                lag.add_metric([topic, partition], float(part.lag))
            paused.add_metric([topic, partition], 1.0 if part.paused else 0.0)
            outstanding.add_metric([topic, partition], float(part.outstanding))
        yield lag
        yield paused
        yield outstanding
        yield _gauge(
            "assigned_partitions", "Partitions assigned to this consumer.", float(len(parts))
        )

    def _breaker(self, snapshot: BudgetStats | None) -> Iterable[Metric]:
        probe = self._metrics.breaker
        if probe is not None:
            state = probe()
        elif snapshot is not None:
            state = snapshot.breaker.state.value
        else:
            return
        family = _gauge(
            "breaker_state", "1 for the judge circuit breaker's current state.", labels=["state"]
        )
        for name in BREAKER_STATES:
            family.add_metric([name], 1.0 if name == state else 0.0)
        yield family
        yield _gauge(
            "breaker_open",
            "1 while the judge circuit breaker is open.",
            1.0 if state == "open" else 0.0,
        )

    def _budget(self, snapshot: BudgetStats | None) -> Iterable[Metric]:
        probe = self._metrics.budget
        if probe is not None:
            left_usd = probe()
        elif snapshot is not None:
            left_usd = {w.window: float(w.left_usd) for w in snapshot.cost.windows}
        else:
            return
        family = _gauge(
            "budget_left_usd", "USD left in each judge cost budget window.", labels=["window"]
        )
        for window, left in sorted(left_usd.items()):
            family.add_metric([window], float(left))
        yield family


def _batch_metrics(batch: BatchStats) -> Iterable[Metric]:
    """``judge.delivery: batch``: the provider batches and the items waiting for them."""
    yield _gauge(
        "batches_open",
        "1 while items gather in a batch not submitted yet.",
        float(batch.open_items > 0),
    )
    yield _gauge("batch_open_items", "Items gathered in the open batch.", float(batch.open_items))
    yield _counter("batches_submitted", "Provider batches submitted.", float(batch.submitted))
    yield _counter("batches_completed", "Provider batches ended and read.", float(batch.completed))
    yield _gauge("batches_polling", "Submitted batches being waited for.", float(batch.polling))
    yield _gauge(
        "batch_items_waiting", "Messages waiting for a batch result.", float(batch.items_waiting)
    )
    yield _gauge(
        "batch_oldest_item_age_seconds",
        "Age of the oldest message waiting for a batch result.",
        batch.oldest_item_age_s,
    )
    yield _counter(
        "batch_items_failed", "Batch items that errored or expired.", float(batch.failed_items)
    )


def _replies(stats: ServiceStats) -> Iterable[Metric]:
    """Request-reply: replies sent, ignored (bad or disallowed headers), dropped (the reply
    topic missing or refusing)."""
    yield _counter("replies_published", "Replies acknowledged on a reply topic.", stats.replies)
    for name, doc, counts in (
        (
            "replies_ignored",
            "Reply headers ignored, by reason (not_allowed, invalid_topic, ...).",
            stats.replies_ignored,
        ),
        (
            "replies_dropped",
            "Replies not delivered, by reason (unknown_topic, unknown_partition, refused).",
            stats.replies_dropped,
        ),
    ):
        family = CounterMetricFamily(f"{NS}_{name}", doc, labels=["reason"])
        for reason, count in sorted(counts.items()):
            family.add_metric([reason], float(count))
        yield family


def _streams(stats: ServiceStats) -> Iterable[Metric]:
    """Streamed answers over Kafka (topics.deltas): open responses, how they closed, deltas
    dropped, release events."""
    yield _gauge("stream_responses_open", "Streamed answers being assembled.", stats.stream_open)
    yield _gauge(
        "stream_open_bytes", "Delta text held by open streamed answers.", stats.stream_open_bytes
    )
    yield _counter("stream_releases", "Release events delivered.", float(stats.releases))
    for name, doc, label, counts in (
        (
            "stream_responses_closed",
            "Streamed answers closed, by why (complete, stream_timeout, stream_evicted).",
            "reason",
            stats.stream_closed,
        ),
        (
            "stream_deltas_dropped",
            "Deltas dropped, by why (duplicate, late: after their answer closed).",
            "reason",
            stats.stream_dropped,
        ),
    ):
        family = CounterMetricFamily(f"{NS}_{name}", doc, labels=[label])
        for reason, count in sorted(counts.items()):
            family.add_metric([reason], float(count))
        yield family


def split_partition_key(key: Any) -> tuple[str, str]:
    """``("topic", "3")`` from a ``TopicPartition``, a ``(topic, n)`` tuple or ``"topic-3"``."""
    topic = getattr(key, "topic", None)
    if topic is not None:
        return str(topic), str(key.partition)
    if isinstance(key, tuple) and len(key) == 2:
        return str(key[0]), str(key[1])
    text = str(key)
    head, sep, tail = text.rpartition("-")
    if sep and tail.isdigit():
        return head, tail
    return text, ""


_COUNTERS = (
    ("consumed", "messages_consumed", "Messages read from the requests topic."),
    ("quarantined", "quarantined", "Responses published to the quarantine topic."),
    ("approved", "approved", "Responses published to the approved topic."),
    ("published", "published", "Output records acknowledged by the broker."),
    ("publish_retries", "publish_retries", "Output records retried after a send failure."),
    ("commits", "commits", "Offset commits."),
    ("transactions", "transactions", "Kafka transactions committed (exactly-once mode)."),
    ("rebalances", "rebalances", "Consumer group rebalances seen."),
)
_GAUGES = (
    ("in_flight", "in_flight", "Judge calls in flight."),
    ("waiting", "waiting", "Messages waiting for a judge slot."),
    ("stopping", "stopping", "1 while the service drains for shutdown."),
)

"""The metrics of ``serve``, beside the judge's (:class:`consumers.metrics.Metrics`, shared with
``run``: verdicts, judge latency, tokens, cost, budget and breaker gauges):

* ``groundguard_serve_request_seconds{route, outcome}``: time from the request to its answer;
  ``outcome`` is the verdict's label, ``deadline_exceeded``, or the refusal's code
  (``overloaded``, ``unauthorized``, ``invalid_json``, ...); ``verdicts`` for a batch answered;
* ``groundguard_serve_in_flight``: requests (batch items) being judged now;
* ``groundguard_serve_shed_total{reason}``: requests refused at once (``overloaded``) or by a
  budget (the verdict's reason, e.g. ``budget_exhausted:day``, ``rate_limited``).
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import Counter, Gauge, Histogram

from consumers.metrics import NS, Metrics

# From the offline judge's milliseconds to an LLM's seconds, and the deadlines between.
REQUEST_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0,
)  # fmt: skip


class ServeMetrics:
    """Request metrics registered on ``metrics.registry``; ``in_flight`` read at scrape time."""

    def __init__(self, metrics: Metrics, *, in_flight: Callable[[], float]) -> None:
        self.metrics = metrics
        registry = metrics.registry
        self._latency = Histogram(
            f"{NS}_serve_request_seconds",
            "Time from a check request to its answer, by route and outcome.",
            ["route", "outcome"],
            buckets=REQUEST_BUCKETS,
            registry=registry,
        )
        self._shed = Counter(
            f"{NS}_serve_shed",
            "Check requests refused at once (overload) or by a budget.",
            ["reason"],
            registry=registry,
        )
        gauge = Gauge(
            f"{NS}_serve_in_flight", "Check requests (batch items) being judged.", registry=registry
        )
        gauge.set_function(in_flight)

    def observe(self, route: str, outcome: str, seconds: float) -> None:
        self._latency.labels(route, outcome).observe(seconds)

    def shed(self, reason: str) -> None:
        self._shed.labels(reason).inc()

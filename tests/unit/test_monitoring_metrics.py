"""The chart's Grafana dashboard and PrometheusRule name only metrics the service exports.

Names come from the PromQL by a regex (strings, label matchers, ranges and grouping clauses
taken out, what is left that is neither a function nor a keyword is a metric); the exported
ones from the ``/metrics`` text of :class:`consumers.metrics.Metrics` with every source wired.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from consumers.metrics import Metrics
from consumers.runtime.stats import PartitionStats, ServiceStats
from guard.budgets.judge import build_budgeted_judge
from guard.budgets.settings import BudgetSettings
from guard.engine import Guard
from guard.models import JudgeRequest
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

CHART = Path(__file__).resolve().parents[2] / "helm" / "groundguard"
DASHBOARD = CHART / "dashboards" / "groundguard.json"
RULES = CHART / "templates" / "prometheusrule.yaml"

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENT = re.compile(r"(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()")
_KEYWORDS = {
    "and",
    "or",
    "unless",
    "offset",
    "bool",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
}
_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def metric_names(promql: str) -> set[str]:
    """The metric names a PromQL expression selects."""
    text = _STRINGS.sub(" ", promql)
    for pattern in (_MATCHERS, _RANGES, _GROUPING):
        text = pattern.sub(" ", text)
    return {name for name in _IDENT.findall(text) if name not in _KEYWORDS}


def dashboard_queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    for var in board["templating"]["list"]:
        if var["type"] == "query":
            # label_values(metric, label): the metric is the selector
            exprs.append(re.sub(r"label_values\((.*),\s*\w+\)", r"\1", var["definition"]))
    return exprs


def rule_expressions() -> list[str]:
    """Each ``expr: |`` block of the chart's template, its Helm placeholders blanked."""
    lines = RULES.read_text(encoding="utf-8").splitlines()
    exprs: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() != "expr: |":
            continue
        indent = len(line) - len(line.lstrip())
        block = []
        for body in lines[i + 1 :]:
            if body.strip() and len(body) - len(body.lstrip()) <= indent:
                break
            block.append(body)
        exprs.append(re.sub(r"\{\{.*?\}\}", "0", "\n".join(block)))
    return exprs


async def exported_names() -> set[str]:
    """Sample names on ``/metrics`` with the service stats, a partition and the budget layers."""
    judge = build_budgeted_judge(
        FakeJudge(), BudgetSettings(cost_per_day_usd=2.0), price=lambda model, usage: 0.5
    )
    guard = Guard(judge, JudgeSettings(provider="fake"))
    await guard.judge(JudgeRequest(output="Paris", context="Paris is big."))
    await guard.aclose()
    stats = ServiceStats(started=True)
    stats.partitions["rag.responses-0"] = PartitionStats(committed=10, highwater=12)
    text = Metrics(stats, judge_stats=guard.budget_stats).render().decode()
    return {
        family.name + suffix
        for family in text_string_to_metric_families(text)
        for suffix in _SUFFIXES.get(family.type, ("",))
    }


def test_the_regex_finds_metrics_and_skips_functions_labels_and_keywords() -> None:
    expr = (
        'sum by (job) (rate(a_total{job=~"$job", x="y(z)"}[$__rate_interval])) / ignoring (tier)'
        " group_left sum(b) > 2 * (c offset 1h) and on (job, instance) histogram_quantile"
        "(0.9, sum by (le) (rate(d_bucket[5m])))"
    )
    assert metric_names(expr) == {"a_total", "b", "c", "d_bucket"}


def test_the_dashboard_and_every_alert_have_queries() -> None:
    assert len(rule_expressions()) == 6
    assert all(metric_names(expr) for expr in rule_expressions() + dashboard_queries())


@pytest.mark.parametrize("source", ["dashboard", "alerts"])
async def test_every_metric_the_dashboard_and_the_alerts_use_is_exported(source: str) -> None:
    exprs = dashboard_queries() if source == "dashboard" else rule_expressions()
    used = set().union(*(metric_names(expr) for expr in exprs))
    exported = await exported_names()
    assert used - exported == set(), f"{source} uses metrics the service does not export"
    assert "groundguard_messages_consumed_total" in exported  # the exposition was read

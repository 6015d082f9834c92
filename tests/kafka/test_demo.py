"""The demo end to end on a real broker: every bundled sample ends as it should."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections import Counter

import pytest

from consumers.cli.demo import demo_settings, load_samples, screen
from guard.settings import JudgeSettings, Provider


async def test_the_demo_screens_every_sample_as_expected(kafka_bootstrap: str) -> None:
    samples = load_samples()
    settings = demo_settings(
        kafka_bootstrap, JudgeSettings(provider=Provider.OFFLINE), uuid.uuid4().hex[:8]
    )
    result = await screen(settings, samples, timeout_s=120)
    expected = Counter(s.expected for s in samples)
    labels = Counter(v["label"] for v in result.verdicts.values())
    assert result.outcomes == result.expected
    assert (labels["pass"], labels["fail"]) == (expected["pass"], expected["fail"])
    assert sorted(result.quarantined) == sorted(
        k for k, v in result.expected.items() if v == "fail"
    )
    assert len(result.dead_letters) == expected["dead_letter"]
    assert all(d["reason"] and d["detail"] for d in result.dead_letters)
    assert {v["source"] for k, v in result.verdicts.items() if k.startswith("chat-")} == {
        "messages"
    }


def _demo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "consumers", "demo", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_demo_command_prints_the_table_and_exits_0(kafka_bootstrap: str) -> None:
    done = _demo("--bootstrap", kafka_bootstrap)
    total = len(load_samples())
    assert done.returncode == 0, done.stderr
    assert f"as expected: {total} of {total}" in done.stdout
    assert "dead-lettered: " in done.stdout


@pytest.mark.slow
def test_the_demo_starts_and_stops_its_own_broker() -> None:
    """The README's first command: no broker given, so it starts one and stops it after."""
    done = _demo()
    assert done.returncode == 0, done.stderr
    assert "starting a local Kafka broker" in done.stderr
    assert "stopping the local broker" in done.stderr
    assert "as expected: " in done.stdout

"""Topics deleted while the service runs (issue 29): a deleted output topic stops the service
without committing past what it could not publish, in a bounded number of log lines (it once
wrote 113,815); a requests topic deleted and created again is consumed again, from its first
record, within ``kafka.metadata_max_age_ms`` (it took ~295 s, aiokafka's five-minute default)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml

from tests.kafka.cleanup import delete_topics
from tests.kafka.kafkautil import create_topics, produce, read_until, unique
from tests.kafka.servicekit import (
    Topics,
    by_id,
    command,
    committed_offsets,
    create_all,
    grounded,
    new_topics,
    service_env,
    wait_committed,
)


def _config(tmp_path: Path, bootstrap: str, group: str, topics: Topics, **extra: Any) -> Path:
    config = {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "instance_id": "proc",
        "topics": {
            "requests": topics.requests,
            "verdicts": topics.verdicts,
            "quarantine": topics.quarantine,
            "dlq": topics.dlq,
        },
        "commit_interval_s": 0.2,
        "judge": {"provider": "offline"},
        "kafka": {"metadata_max_age_ms": 2000},
    } | extra
    path = tmp_path / "groundguard.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _batch(start: int, count: int) -> list[tuple[bytes, bytes, None]]:
    return [(f"k{i}".encode(), grounded(i), None) for i in range(start, start + count)]


async def test_a_deleted_verdicts_topic_stops_the_service_uncommitted_in_few_lines(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    group = unique("group")
    config = _config(tmp_path, kafka_bootstrap, group, topics, publish_timeout_s=5)
    log_path = tmp_path / "service.log"
    async with command(
        "run", "--config", str(config), env=service_env(), log_path=log_path
    ) as proc:
        await produce(kafka_bootstrap, topics.requests, _batch(0, 20))
        assert len(by_id(await read_until(kafka_bootstrap, topics.verdicts, expected=20))) == 20
        committed, ends = await wait_committed(kafka_bootstrap, group, topics.requests, 2)
        assert committed == ends
        await delete_topics(kafka_bootstrap, [topics.verdicts])
        await produce(kafka_bootstrap, topics.requests, _batch(20, 20))
        for _ in range(240):  # bounded: 60 s for the publish timeout and the stop
            if proc.returncode is not None:
                break
            await asyncio.sleep(0.25)
        assert proc.returncode is not None, "the service kept running without its verdicts topic"
    log = log_path.read_text(encoding="utf-8", errors="replace")
    assert proc.returncode != 0, log[-3000:]
    assert topics.verdicts in log
    assert len(log.splitlines()) < 400, len(log.splitlines())
    after = await committed_offsets(kafka_bootstrap, group)
    assert sum(after.values()) == 20  # nothing committed past what was published


async def test_a_recreated_requests_topic_is_consumed_again_within_the_metadata_age(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Every record of the recreated topic is judged, its first ones too: the commit of the
    old topic's offset (5), refused while the topic was gone, is not retried onto the new one
    (it was: aiokafka retries it until it succeeds, and the first 5 records were skipped)."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    config = _config(tmp_path, kafka_bootstrap, unique("group"), topics)
    log_path = tmp_path / "service.log"
    async with command(
        "run", "--config", str(config), env=service_env(), log_path=log_path
    ) as proc:
        await produce(kafka_bootstrap, topics.requests, _batch(0, 5))
        assert len(by_id(await read_until(kafka_bootstrap, topics.verdicts, expected=5))) == 5
        await delete_topics(kafka_bootstrap, [topics.requests])
        for _ in range(40):  # bounded: the deletion may take a moment to finish
            try:
                await create_topics(kafka_bootstrap, {topics.requests: 1})
                break
            except Exception:
                await asyncio.sleep(0.5)
        await produce(kafka_bootstrap, topics.requests, _batch(100, 5))
        await asyncio.sleep(5)
        await produce(kafka_bootstrap, topics.requests, _batch(200, 5))
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=15, timeout_s=20)
        assert proc.returncode is None
    log = log_path.read_text(encoding="utf-8", errors="replace")
    wanted = {f"ok-{i}" for i in (*range(5), *range(100, 105), *range(200, 205))}
    assert set(by_id(verdicts)) >= wanted, log[-3000:]

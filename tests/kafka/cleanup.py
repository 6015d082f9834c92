"""Leave a broker someone gave the suite as it was: the topics the tests made are deleted.

A test names its topics with :func:`tests.kafka.kafkautil.unique` (``req-3f9a0c21be``) and the
demo with its run id (``demo-1a2b3c4d.verdicts``), and services create more from those names
(reply topics, batch state). At the session's end, every topic that was not on the broker at its
start and carries such a random token is deleted; a topic that was there before, or that someone
else created meanwhile under a name without one, is left alone. ``KAFKA_KEEP_TEST_TOPICS=1``
keeps them (to look at a failed run's records).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from aiokafka.admin import AIOKafkaAdminClient

# the random tokens the suite puts in its names: unique()'s 10 hex digits, the demo's 8
_TOKEN = re.compile(r"(?:^|[-._])[0-9a-f]{8}(?:[0-9a-f]{2})?(?:$|[-._])")


def made_by_the_suite(name: str) -> bool:
    return not name.startswith("__") and _TOKEN.search(name) is not None


def to_delete(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """The topics the suite made: new since the start, named with one of its tokens."""
    known = set(before)
    return sorted(t for t in after if t not in known and made_by_the_suite(t))


async def list_topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


async def delete_created_topics(bootstrap: str, before: set[str]) -> list[str]:
    """Delete the topics the suite made since ``before`` was listed; return their names."""
    doomed = to_delete(before, await list_topics(bootstrap))
    await delete_topics(bootstrap, doomed)
    return doomed


async def delete_topics(bootstrap: str, topics: list[str]) -> None:
    if not topics:
        return
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
    await admin.start()
    try:
        for start in range(0, len(topics), 100):  # bounded requests
            await admin.delete_topics(topics[start : start + 100], timeout_ms=30_000)
    finally:
        await admin.close()

"""Block an ungrounded answer before sending it: screen it through ``groundguard run`` over Kafka.

Needs a running service whose ``reply.allowed_prefixes`` includes ``--reply-prefix``::

    GROUNDGUARD_REPLY__ALLOWED_PREFIXES='["guard.reply."]' groundguard run
    python docs/examples/request_reply.py --bootstrap 127.0.0.1:9092 --requests rag.responses

Prints, for each answer, its verdict and whether it would be sent. A timeout gives an ``error``
verdict (fail-closed), so the answer is blocked.
"""

from __future__ import annotations

import argparse
import asyncio

from consumers.reply import ScreeningClient
from guard.models import Label

EVIDENCE = "Our return policy allows returns within 30 days of purchase."
ANSWERS = [
    "You can return items within 30 days of purchase.",
    "You can return items within 90 days for a full refund.",
]


async def main(bootstrap: str, requests: str, reply_prefix: str, timeout_s: float) -> None:
    async with ScreeningClient(
        bootstrap, request_topic=requests, reply_topic_prefix=reply_prefix
    ) as client:
        for answer in ANSWERS:
            verdict = await client.screen(
                {"output": answer, "context": EVIDENCE}, timeout=timeout_s
            )
            action = "send" if verdict.label is Label.PASS else "block"
            print(f"{verdict.label.value:<5} {action:<5} {answer}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--requests", default="rag.responses", help="the service's requests topic")
    parser.add_argument("--reply-prefix", default="guard.reply.", help="an allowed reply prefix")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds, then fail closed")
    args = parser.parse_args()
    asyncio.run(main(args.bootstrap, args.requests, args.reply_prefix, args.timeout))

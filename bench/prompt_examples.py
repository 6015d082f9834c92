"""Do the worked examples in the cached prefix change what the judge sees as the case?

    .venv/bin/python bench/prompt_examples.py [path ...] [--limit N]

Not a test: it prints figures. Every row of the dev sets (default
bench/data/halueval-qa-dev.jsonl and bench/data/realistic-dev.jsonl) is judged twice through
the real OpenAI SDK against the loopback fake (``numbers`` script: not grounded when the
fenced OUTPUT names a number the fenced EVIDENCE lacks, or carries the hallucination marker),
once with ``judge.prompt_cache.examples: off`` and once ``on``. The fake reads the case only
from the request's fence markers, as a careful reader would; if the examples (which hold
numbers of their own: 50 euros, 8:00, 18:00) leaked into what it takes for the case, verdicts
would change. It prints, per file, the balanced accuracy of each prompt against the labels, how
many verdicts differ between them, and the tokens the examples add. A real model's quality can
only be measured against the real API; this shows the examples are fenced off from the case.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.offline_quality import REALISTIC, halueval_path
from guard.assembly import make_judge
from guard.engine import Guard
from guard.models import JudgeRequest, Label, Verdict
from guard.offline import quality
from guard.providers.factory import make_pricer
from guard.settings import JudgeSettings
from guard.testing import FakeLLMServer
from guard.testing.fake_server import SCRIPTS

KEY = "sk-bench-not-a-key"
CONCURRENCY = 32  # calls in flight: on a busy machine more would only time out


async def judge_rows(
    srv: FakeLLMServer, rows: list[dict[str, object]], examples: str
) -> list[Verdict]:
    settings = JudgeSettings.model_validate(
        {
            "provider": "openai",
            "base_url": srv.openai_base_url,
            "max_retries": 0,
            "timeout_s": 120.0,
            "prompt_cache": {"examples": examples},
        }
    )
    guard = Guard(
        make_judge(settings, {"OPENAI_API_KEY": KEY}), settings, price=make_pricer(settings)
    )
    slots = asyncio.Semaphore(CONCURRENCY)

    async def one(request: JudgeRequest) -> Verdict:
        async with slots:
            return await guard.judge(request)

    try:
        requests = [JudgeRequest.model_validate({**r, "id": str(n)}) for n, r in enumerate(rows)]
        return list(await asyncio.gather(*(one(r) for r in requests)))
    finally:
        await guard.aclose()


def accuracy(rows: list[dict[str, object]], verdicts: list[Verdict]) -> float:
    pairs = [
        (v.label is not Label.PASS, bool(r["hallucinated"]))
        for r, v in zip(rows, verdicts, strict=True)
    ]
    return quality.balanced_accuracy(pairs)


async def compare(path: Path, limit: int | None) -> None:
    rows = quality.load(path)[:limit]
    with FakeLLMServer(verdict=SCRIPTS["numbers"]) as srv:
        off = await judge_rows(srv, rows, "off")
        on = await judge_rows(srv, rows, "on")
    errors = sum(v.label is Label.ERROR for v in off + on)
    differ = sum(a.label is not b.label for a, b in zip(off, on, strict=True))
    added = sum(b.usage.input_tokens - a.usage.input_tokens for a, b in zip(off, on, strict=True))
    print(
        f"{path.name}: {len(rows)} rows; balanced accuracy examples off {accuracy(rows, off):.3f}, "
        f"on {accuracy(rows, on):.3f}; verdicts that differ: {differ} ({errors} errors); "
        f"input tokens added a call: {added / len(rows):.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="first N rows of each file")
    args = parser.parse_args()
    for path in args.paths or [halueval_path(), REALISTIC]:
        asyncio.run(compare(path, args.limit))


if __name__ == "__main__":
    main()

"""``groundguard demo``: see groundguard screen a Kafka stream, in one command, no API key.

Exit status: 0 when every sample ended as expected, 1 otherwise, 2 for a bad setting.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any

from consumers.commands.judging import add_judge_arguments, judge_settings_from
from consumers.demo import format_result, load_samples, run_demo, write_progress
from consumers.errors import ConsumerError
from consumers.logging import configure_logging
from guard.errors import ConfigError
from guard.settings import JudgeSettings, Provider

EXIT_OK, EXIT_DIFFERS, EXIT_USAGE = 0, 1, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="screen bundled RAG traffic on a local Kafka broker (no API key needed)",
        description="Start a local Kafka broker (unless --bootstrap is given), create topics, "
        "produce bundled RAG traffic (faithful and hallucinated answers, a conversation with "
        "tool results, malformed messages), screen it with the offline judge (or the LLM "
        "judge whose key is set: OPENAI_API_KEY, then ANTHROPIC_API_KEY; or --judge), show "
        "progress and a table of verdicts, quarantined and dead-lettered messages, then stop "
        "everything it started.")
    parser.add_argument("--bootstrap", help="use this running Kafka instead of a local one")
    parser.add_argument("--deadline", type=float, default=180.0,
                        help="give up after this many seconds of screening (default 180)")
    add_judge_arguments(parser)
    parser.set_defaults(func=run)


def _judge_for_demo(args: argparse.Namespace) -> JudgeSettings:
    if args.judge is None:
        if os.environ.get("OPENAI_API_KEY"):
            args.judge = Provider.OPENAI.value
        elif os.environ.get("ANTHROPIC_API_KEY"):
            args.judge = Provider.ANTHROPIC.value
            args.model = args.model or "claude-haiku-4-5"
        else:
            args.judge = Provider.OFFLINE.value
    return judge_settings_from(args)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    try:
        judge = _judge_for_demo(args)
    except (ConfigError, ConsumerError) as exc:
        print(f"groundguard demo: {exc}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(level="warning")
    logging.getLogger("aiokafka").setLevel(logging.ERROR)  # leader elections of new topics
    tick = write_progress(sys.stderr, len(load_samples())) if sys.stderr.isatty() else None
    try:
        result = asyncio.run(run_demo(judge, bootstrap=args.bootstrap, timeout_s=args.deadline,
                                      say=_say, on_tick=tick))
    except (ConsumerError, ConfigError) as exc:
        print(f"\ngroundguard demo: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ConfigError) else EXIT_DIFFERS
    if tick is not None:
        sys.stderr.write("\n")
    print(format_result(result))
    return EXIT_OK if result.matches == len(result.expected) else EXIT_DIFFERS

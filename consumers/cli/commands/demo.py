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

from consumers.cli.commands.judging import add_judge_arguments, judge_settings_from
from consumers.cli.demo import format_result, load_samples, progress_line, run_demo
from consumers.cli.terminal import StatusLine
from consumers.errors import ConsumerError
from consumers.logging import configure_logging
from guard.errors import ConfigError
from guard.providers.factory import check_credentials
from guard.settings import JudgeSettings

EXIT_OK, EXIT_DIFFERS, EXIT_USAGE = 0, 1, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="screen bundled RAG traffic on a local Kafka broker (no API key needed)",
        description="Start a local Kafka broker (unless --bootstrap is given), create topics, "
        "produce bundled RAG traffic (faithful and hallucinated answers, a conversation with "
        "tool results, malformed messages), screen it with the offline judge unless --judge "
        "names another (openai, anthropic or cascade call a paid API, with the key from "
        "OPENAI_API_KEY / ANTHROPIC_API_KEY; a key in the environment alone changes nothing), "
        "show progress and a table of verdicts, quarantined and dead-lettered messages, then "
        "stop everything it started.",
    )
    parser.add_argument("--bootstrap", help="use this running Kafka instead of a local one")
    parser.add_argument(
        "--deadline",
        type=float,
        default=180.0,
        help="give up after this many seconds of screening (default 180)",
    )
    add_judge_arguments(parser)
    parser.set_defaults(func=run)


def _judge_for_demo(args: argparse.Namespace) -> JudgeSettings:
    """The offline judge unless ``--judge`` or the config's ``judge.provider`` names another:
    the demo never spends money because a key happens to be in the environment. An LLM judge's
    key is checked here, before a broker is started or a message produced."""
    judge = judge_settings_from(args)
    check_credentials(judge, os.environ)
    return judge


def run(args: argparse.Namespace) -> int:
    try:
        judge = _judge_for_demo(args)
    except (ConfigError, ConsumerError) as exc:
        print(f"groundguard demo: {exc}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(level="warning")
    logging.getLogger("aiokafka").setLevel(logging.ERROR)  # leader elections of new topics
    status, total = StatusLine(sys.stderr), len(load_samples())
    tick = (lambda stats: status.show(progress_line(stats, total))) if status.live else None
    try:
        result = asyncio.run(
            run_demo(
                judge,
                bootstrap=args.bootstrap,
                timeout_s=args.deadline,
                say=status.note,
                on_tick=tick,
            )
        )
    except (ConsumerError, ConfigError) as exc:
        status.note(f"groundguard demo: {exc}")
        return EXIT_USAGE if isinstance(exc, ConfigError) else EXIT_DIFFERS
    status.close()
    print(format_result(result))
    return EXIT_OK if result.matches == len(result.expected) else EXIT_DIFFERS

"""``groundguard replay``: judge a JSONL file (or stdin) of requests without Kafka.

Verdicts go out as JSONL in input order (``--out``, stdout, or nowhere with ``--summary-only``);
progress shows on a terminal only; a summary table ends the run (with a label column: balanced
accuracy, precision and recall). Bad lines are reported with their line number and skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from consumers.cli.commands.judging import add_judge_arguments, judge_settings_from
from consumers.cli.terminal import StatusLine
from consumers.errors import ConsumerError
from guard.assembly import build_guard
from guard.engine import describe_validation_error
from guard.errors import ConfigError
from guard.replay import (
    DEFAULT_CONCURRENCY,
    BadLine,
    ReplaySummary,
    format_progress,
    format_summary,
    replay,
)
from guard.settings import JudgeSettings

EXIT_OK, EXIT_USAGE = 0, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="judge a JSONL file of requests, write verdicts as JSONL",
        description="Judge every request of a JSONL file (or - for stdin) with any judge, under "
        "the same budgets as the service; write verdicts as JSONL; print a summary. With "
        "--label-field, also balanced accuracy, precision and recall (positive = hallucinated).",
    )
    parser.add_argument("path", type=Path, help="a JSONL file of requests, or - for stdin")
    verdicts = parser.add_mutually_exclusive_group()
    verdicts.add_argument("--out", type=Path, help="write verdicts here (default: stdout)")
    verdicts.add_argument(
        "--summary-only",
        action="store_true",
        help="write no verdicts; print only the summary (on stdout)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"requests judged at once (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--label-field", help="a column saying whether the row is hallucinated (true/false)"
    )
    parser.add_argument(
        "--invert-label",
        action="store_true",
        help="the label column says grounded (true = grounded) instead",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress line")
    add_judge_arguments(parser)
    parser.set_defaults(func=run)


def _lines(source: TextIO) -> Iterator[str]:
    yield from source


def _count_lines(path: Path) -> int | None:
    if str(path) == "-":
        return None
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


async def _replay(
    args: argparse.Namespace, judge: JudgeSettings, source: TextIO, out: TextIO
) -> ReplaySummary:
    guard = build_guard(judge, os.environ)
    status = StatusLine(sys.stderr, enabled=not args.no_progress)

    def bad_line(bad: BadLine) -> None:
        status.note(f"line {bad.line}: {bad.kind}: {bad.message}")

    try:
        return await replay(
            guard,
            _lines(source),
            out,
            concurrency=args.concurrency,
            label_field=args.label_field,
            invert_label=args.invert_label,
            total=_count_lines(args.path),
            on_progress=(lambda p: status.show(format_progress(p))) if status.live else None,
            on_bad_line=bad_line,
        )
    finally:
        await guard.aclose()
        status.close()


def _verdict_sink(args: argparse.Namespace) -> AbstractContextManager[TextIO]:
    """Where verdicts go: ``--out``, nowhere with ``--summary-only``, else stdout (left open)."""
    if args.summary_only:
        return open(os.devnull, "w", encoding="utf-8")
    if args.out is not None:
        return Path(args.out).open("w", encoding="utf-8")
    return contextlib.nullcontext(sys.stdout)


def run(args: argparse.Namespace) -> int:
    if args.concurrency < 1:
        print("groundguard replay: --concurrency must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    try:
        judge = judge_settings_from(args)
        with ExitStack() as stack:
            source = (
                sys.stdin
                if str(args.path) == "-"
                else stack.enter_context(args.path.open(encoding="utf-8", errors="replace"))
            )
            out = stack.enter_context(_verdict_sink(args))
            summary = asyncio.run(_replay(args, judge, source, out))
    except (ConfigError, ConsumerError, OSError, ValidationError) as exc:
        problem = describe_validation_error(exc) if isinstance(exc, ValidationError) else exc
        print(f"groundguard replay: {problem}", file=sys.stderr)  # never pydantic's input echo
        return EXIT_USAGE
    report = sys.stdout if args.out is not None or args.summary_only else sys.stderr
    report.write(format_summary(summary) + "\n")
    return EXIT_OK

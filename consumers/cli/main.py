"""The ``groundguard`` command line: a thin edge over the library.

Each sub-command lives in :mod:`consumers.cli.commands` as a module with ``register(subparsers)``;
the module sets ``func`` on its parser, a callable ``(args) -> int`` exit status.
Exit statuses: 0 pass / success, 1 fail, 2 usage or configuration error, 3 judge error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

COMMANDS = (
    "check",
    "replay",
    "run",
    "serve",
    "demo",
    "label",
    "calibration",
    "schemas",
    "settings_doc",
    "rules_doc",
)
EXIT_USAGE = 2


def _version() -> str:
    try:
        return version("groundguard")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groundguard",
        description="Catch ungrounded (hallucinated) RAG and agent answers before they reach "
        "people: judge one answer, replay files, screen a Kafka stream, or check answers over "
        "HTTP before sending them.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {_version()}",
        help="print the installed version and exit",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"consumers.cli.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())

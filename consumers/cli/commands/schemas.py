"""``groundguard schemas``: write or check the published JSON Schemas in ``schemas/``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from consumers import schemas
from consumers.cli.generated import report


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schemas",
        help="write or check the JSON Schemas of every message (schemas/*.json)",
        description="Generate the JSON Schemas (draft 2020-12) of the request, verdict, "
        "quarantine and dead-letter messages, and the OpenAPI document of groundguard serve, "
        "from the models.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="(re)write the schema files")
    action.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when the checked-in files differ from the models",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=schemas.SCHEMA_DIR,
        help="schema directory (default: %(default)s)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.write:
        for path in schemas.write(args.dir):
            print(f"wrote {path}")
        return 0
    problems = schemas.drift(args.dir)
    return report(
        problems,
        stale=f"{len(problems)} schema file(s) drifted from the models; "
        "run `groundguard schemas --write` and commit the result",
        fresh=f"schemas up to date ({len(schemas.expected_files())} files in {args.dir})",
    )

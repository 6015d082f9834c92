"""``groundguard rules-doc``: write or check the offline rules reference, ``docs/rules.md``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from consumers import rules_doc
from consumers.cli.generated import report


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rules-doc",
        help="write or check the offline judge's rules reference (docs/rules.md)",
        description="Generate the reference of every offline rule (name, stage, status, "
        "calibration keys, what it checks, an example) from the rule registry.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="(re)write the reference")
    action.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when the checked-in file differs from the registry or a rule has no example",
    )
    parser.add_argument(
        "--file",
        type=Path,
        default=rules_doc.DOC_PATH,
        help="the reference file (default: %(default)s)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.write:
        print(f"wrote {rules_doc.write(args.file)}")
        return 0
    return report(
        rules_doc.drift(args.file),
        stale=f"{args.file} drifted from the rule registry; give every rule an example, run "
        "`groundguard rules-doc --write` and commit the result",
        fresh=f"rules reference up to date ({args.file})",
    )

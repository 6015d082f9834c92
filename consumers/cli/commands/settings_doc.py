"""``groundguard settings-doc``: write or check the settings reference, ``docs/settings.md``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from consumers import settings_doc
from consumers.cli.generated import report


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "settings-doc",
        help="write or check the settings reference (docs/settings.md)",
        description="Generate the reference of every setting (YAML path, environment "
        "variable, type, default, description) from the settings models.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="(re)write the reference")
    action.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when the checked-in file differs from the models or a setting has no "
        "description",
    )
    parser.add_argument(
        "--file",
        type=Path,
        default=settings_doc.DOC_PATH,
        help="the reference file (default: %(default)s)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.write:
        print(f"wrote {settings_doc.write(args.file)}")
        return 0
    return report(
        settings_doc.drift(args.file),
        stale=f"{args.file} drifted from the settings models; describe every setting, run "
        "`groundguard settings-doc --write` and commit the result",
        fresh=f"settings reference up to date ({args.file})",
    )

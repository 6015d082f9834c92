"""``groundguard label``: a reviewer's label of a judged message, sent to ``topics.labels``.

The learning cascade (``judge.cascade.learn``) reads it: the replica that judged the message
replaces the LLM's label of its readings with this one (it outranks the LLM's). A label for a
request no replica remembers is counted (``groundguard_labels_total{outcome="unknown"}``),
never an error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from aiokafka.errors import KafkaError
from pydantic import ValidationError

from consumers.config import load_settings
from consumers.errors import SettingsError
from consumers.runtime.learning import publish_label
from guard.models import ReviewLabel


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "label",
        help="label a judged message pass or fail (the learning cascade learns from it)",
        description="Send a reviewer's label of a verdict's request_id to topics.labels; "
        "with judge.cascade.learn the replicas count it in place of the LLM's label. "
        "Settings: --config FILE and GROUNDGUARD_... environment variables.",
    )
    parser.add_argument("request_id", help="the verdict's request_id")
    parser.add_argument("label", choices=["pass", "fail"], help="was the answer grounded")
    parser.add_argument("--reviewer", help="who labels it (default: $USER)")
    parser.add_argument("--note", help="why, in a few words")
    parser.add_argument("--config", type=Path, help="a YAML or JSON settings file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args.config, os.environ)
        label = ReviewLabel(
            request_id=args.request_id,
            label=args.label,
            reviewer=args.reviewer or os.environ.get("USER"),
            note=args.note,
        )
    except SettingsError as exc:
        print(f"groundguard label: bad setting {exc}", file=sys.stderr)
        return 2
    except ValidationError as exc:
        print(f"groundguard label: {exc.errors()[0]['msg']}", file=sys.stderr)
        return 2
    try:
        asyncio.run(publish_label(settings, label))
    except (KafkaError, OSError) as exc:
        print(f"groundguard label: could not send the label: {exc!r}", file=sys.stderr)
        return 1
    print(f"labelled {label.request_id} {label.label} on {settings.topics.labels}")
    return 0

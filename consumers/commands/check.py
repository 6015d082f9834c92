"""``groundguard check``: judge one answer against its evidence and print the verdict.

Exit status: 0 pass, 1 fail, 3 the judge could not decide (error), 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import orjson
import yaml
from pydantic import ValidationError

from consumers.commands.judging import add_judge_arguments, build_guard, judge_settings_from
from consumers.render import render_verdict
from guard.errors import ConfigError, InvalidRequest
from guard.models import Label, Verdict

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="judge one answer against its evidence",
        description="Judge whether OUTPUT is grounded in its evidence. Exit status: 0 pass, "
        "1 fail, 3 judge error, 2 usage error. API keys come from OPENAI_API_KEY / "
        "ANTHROPIC_API_KEY or --api-key-file, never from a flag.",
    )
    src = parser.add_argument_group("the request")
    src.add_argument("--output", help="the answer to judge")
    src.add_argument("--output-file", type=Path, help="read the answer from a file")
    src.add_argument("--context", action="append", default=None,
                     help="retrieved evidence; repeat for several documents")
    src.add_argument("--context-file", type=Path, action="append", default=None,
                     help="a file of evidence; repeat for several documents")
    src.add_argument("--messages", type=Path,
                     help="a JSON file: a list of {role, content, name?} turns (the conversation)")
    src.add_argument("--question", help="the user's question, if any")
    src.add_argument("--input", help="the input (grounding source with --context-field input)")
    src.add_argument("--expected-output",
                     help="the expected output (grounding source with --context-field "
                     "expected_output)")
    src.add_argument("--request", type=Path,
                     help="a whole request as JSON (use - for stdin); flags override its fields")
    add_judge_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.set_defaults(func=run)


def _read(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    return path.read_text(encoding="utf-8")


def _request_from(args: argparse.Namespace) -> dict[str, Any]:
    request: dict[str, Any] = {}
    if args.request is not None:
        loaded = orjson.loads(_read(args.request))
        if not isinstance(loaded, dict):
            raise InvalidRequest("--request: expected a JSON object")
        request.update(loaded)
    output = args.output if args.output is not None else (
        _read(args.output_file) if args.output_file else None)
    docs = list(args.context or []) + [_read(p) for p in args.context_file or []]
    fields = {
        "output": output,
        "context": (docs[0] if len(docs) == 1 else docs) if docs else None,
        "messages": orjson.loads(_read(args.messages)) if args.messages else None,
        "question": args.question,
        "input": args.input,
        "expected_output": args.expected_output,
    }
    request.update({k: v for k, v in fields.items() if v is not None})
    return request


def _exit_status(verdict: Verdict) -> int:
    if verdict.label is Label.PASS:
        return EXIT_PASS
    if verdict.label is Label.FAIL:
        return EXIT_FAIL
    return EXIT_ERROR if verdict.label is Label.ERROR else EXIT_PASS


async def _judge(args: argparse.Namespace, request: dict[str, Any]) -> Verdict:
    if args.messages and args.context_field is None and "context" not in request:
        args.context_field = "messages"  # a conversation given alone is the evidence
    guard = build_guard(judge_settings_from(args), os.environ)
    try:
        return await guard.judge_payload(request)
    finally:
        await guard.aclose()


def run(args: argparse.Namespace) -> int:
    try:
        request = _request_from(args)
        if "output" not in request:
            raise InvalidRequest("give the answer to judge with --output, --output-file or "
                                 "--request")
        verdict = asyncio.run(_judge(args, request))
    except (ConfigError, InvalidRequest, OSError, orjson.JSONDecodeError, yaml.YAMLError,
            ValidationError) as exc:
        print(f"groundguard check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        sys.stdout.write(verdict.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(render_verdict(verdict) + "\n")
    return _exit_status(verdict)

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

from consumers.cli.commands.judging import add_judge_arguments, judge_settings_from
from consumers.cli.terminal import render_verdict
from consumers.errors import ConsumerError
from guard import strictjson
from guard.assembly import build_guard
from guard.errors import ConfigError, InvalidRequest
from guard.models import ContextField, Label, Verdict
from guard.settings import JudgeSettings

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
    src.add_argument(
        "--context",
        action="append",
        default=None,
        help="retrieved evidence; repeat for several documents",
    )
    src.add_argument(
        "--context-file",
        type=Path,
        action="append",
        default=None,
        help="a file of evidence; repeat for several documents",
    )
    src.add_argument(
        "--messages",
        type=Path,
        help="a JSON file: a list of {role, content, name?} turns (the conversation; "
        "the grounding source when given without --context and --context-field)",
    )
    src.add_argument("--question", help="the user's question, if any")
    src.add_argument("--input", help="the input (grounding source with --context-field input)")
    src.add_argument(
        "--expected-output",
        help="the expected output: the grounding source when given without "
        "--context/--messages and without --context-field, or with "
        "--context-field expected_output",
    )
    src.add_argument(
        "--request",
        type=Path,
        help="a whole request as JSON (use - for stdin); flags override its fields",
    )
    add_judge_arguments(parser, source_help=CHECK_SOURCE_HELP)
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.set_defaults(func=run)


def _read(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    return path.read_text(encoding="utf-8")


def _read_json(flag: str, path: Path) -> Any:
    """The JSON in ``path``; an :class:`InvalidRequest` naming the flag, the file and what is
    wrong with it (not found, unreadable, not JSON) otherwise."""
    where = f"{flag} {path}"
    try:
        text = _read(path)
    except FileNotFoundError as exc:
        raise InvalidRequest(f"{where}: file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"{where}: cannot be read ({exc})") from exc
    try:
        return strictjson.loads(text, full_check=True)
    except InvalidRequest as exc:
        raise InvalidRequest(f"{where}: not valid JSON ({exc})") from exc


def _request_file(path: Path) -> dict[str, Any]:
    loaded = _read_json("--request", path)
    if not isinstance(loaded, dict):
        kind = "a JSON array" if isinstance(loaded, list) else f"a JSON {type(loaded).__name__}"
        raise InvalidRequest(
            f"--request {path}: holds {kind}, not an object; a request is "
            '{"output": ..., "context": ...} (see README.md, Requests)'
        )
    return loaded


def _request_from(args: argparse.Namespace) -> dict[str, Any]:
    request: dict[str, Any] = {}
    if args.request is not None:
        request.update(_request_file(args.request))
    output = (
        args.output
        if args.output is not None
        else (_read(args.output_file) if args.output_file else None)
    )
    docs = list(args.context or []) + [_read(p) for p in args.context_file or []]
    fields = {
        "output": output,
        "context": (docs[0] if len(docs) == 1 else docs) if docs else None,
        "messages": _read_json("--messages", args.messages) if args.messages else None,
        "question": args.question,
        "input": args.input,
        "expected_output": args.expected_output,
    }
    request.update({k: v for k, v in fields.items() if v is not None})
    return request


def _missing_output(args: argparse.Namespace, request: dict[str, Any]) -> InvalidRequest:
    if args.request is None:
        return InvalidRequest("give the answer to judge with --output, --output-file or --request")
    found = ", ".join(sorted(request)) or "none"
    return InvalidRequest(
        f'--request {args.request}: no "output" field (fields: {found}); '
        "add it, pass --output, or map your field onto it with "
        "judge.field_map in --config"
    )


CHECK_SOURCE_HELP = (
    "the grounding source (default: context when --context or --context-file is given (or the "
    "request has context); else the conversation when --messages is given, else the expected "
    "output when --expected-output is given, else context)"
)


def _exit_status(verdict: Verdict) -> int:
    if verdict.label is Label.PASS:
        return EXIT_PASS
    if verdict.label is Label.FAIL:
        return EXIT_FAIL
    return EXIT_ERROR if verdict.label is Label.ERROR else EXIT_PASS


def _inferred_source(settings: JudgeSettings, request: dict[str, Any]) -> ContextField | None:
    """The grounding source when the user named none and gave no context: the conversation if
    there is one, else the expected output if there is one."""
    named = "context_field" in settings.model_fields_set or "context_field" in request
    if named or "context" in request:
        return None
    given = [
        source for source, keys in _SOURCE_KEYS.items() if any(request.get(key) for key in keys)
    ]
    return given[0] if given else None


_SOURCE_KEYS = {
    ContextField.MESSAGES: ("messages",),
    ContextField.EXPECTED_OUTPUT: ("expected_output", "expectedOutput"),
}
_SOURCE_FLAGS = {
    "context": "--context",
    "input": "--input",
    "expected_output": "--expected-output",
    "messages": "--messages",
}


def _no_evidence_hint(verdict: Verdict, request: dict[str, Any]) -> str | None:
    if verdict.reason != "no_evidence":
        return None
    source = verdict.source.value
    others = [name for name in _SOURCE_FLAGS if name != source and request.get(name)]
    switch = "; ".join(
        f"you gave {_SOURCE_FLAGS[name]}: add --context-field {name} to judge against it"
        for name in others
    )
    return (
        f"hint: the grounding source is '{source}' and it is empty; give "
        f"{_SOURCE_FLAGS[source]}" + (f" ({switch})" if switch else "")
    )


async def _judge(settings: JudgeSettings, request: dict[str, Any]) -> Verdict:
    source = _inferred_source(settings, request)
    if source is not None:
        settings = settings.model_copy(update={"context_field": source})
    guard = build_guard(settings, os.environ)
    try:
        return await guard.judge_payload(request)
    finally:
        await guard.aclose()


def _verdict_for(args: argparse.Namespace) -> tuple[Verdict, dict[str, Any]]:
    settings = judge_settings_from(args)
    request = _request_from(args)
    if "output" not in request and not settings.field_map:
        raise _missing_output(args, request)
    try:
        return asyncio.run(_judge(settings, request)), request
    except InvalidRequest as exc:
        if args.request is None:
            raise
        raise InvalidRequest(f"--request {args.request} (with the flags given): {exc}") from exc


def run(args: argparse.Namespace) -> int:
    try:
        verdict, request = _verdict_for(args)
    except (ConfigError, ConsumerError, InvalidRequest, OSError) as exc:
        print(f"groundguard check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        sys.stdout.write(verdict.model_dump_json(indent=2) + "\n")
    else:
        sys.stdout.write(render_verdict(verdict) + "\n")
    hint = _no_evidence_hint(verdict, request)
    if hint is not None:
        print(hint, file=sys.stderr)
    return _exit_status(verdict)

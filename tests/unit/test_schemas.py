"""The published JSON Schemas: in step with the models, and the documented examples obey them."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from consumers import schemas
from consumers.cli.commands import schemas as command
from consumers.records import DeadLetter, QuarantineRecord, SourceCoordinates, VerdictRecord
from guard.defaults import SCHEMA_VERSION
from guard.engine import Guard
from guard.models import (
    ContextField,
    Cut,
    JudgeInfo,
    JudgeRequest,
    Label,
    ScoringMode,
    Truncation,
    Verdict,
)
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

ROOT = Path(__file__).resolve().parents[2]
# A fenced block whose info string is ``json <message>``, e.g. ```json verdict
FENCE = re.compile(r"^```json[ \t]+([a-z-]+)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
NAMES = [m.name for m in schemas.MESSAGES]


def validator(name: str) -> Draft202012Validator:
    schema = schemas.load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors_of(name: str, instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(name).iter_errors(instance)
    ]


def documented_examples() -> list[tuple[str, str, Any]]:
    """(file, message name, parsed example) for every tagged JSON block in README and docs/."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    found = []
    for path in files:
        if not path.exists():
            continue
        for match in FENCE.finditer(path.read_text(encoding="utf-8")):
            if match.group(1) in NAMES:
                found.append((path.name, match.group(1), json.loads(match.group(2))))
    return found


def sample_verdict(**overrides: Any) -> Verdict:
    fields: dict[str, Any] = {
        "request_id": "r-1",
        "label": Label.PASS,
        "score": 1.0,
        "raw_score": 5,
        "threshold": 0.5,
        "mode": ScoringMode.SCALE5,
        "hallucinated": False,
        "truncation": Truncation(
            context=Cut(original_chars=10, kept_chars=10, truncated=False),
            output=Cut(original_chars=5, kept_chars=5, truncated=False),
        ),
        "source": ContextField.CONTEXT,
        "judge": JudgeInfo(provider="fake", model="fake-judge", prompt_version="groundedness-v4"),
    }
    return Verdict(**{**fields, **overrides})


def coordinates() -> SourceCoordinates:
    return SourceCoordinates(topic="rag.responses", partition=0, offset=42, key="k")


def test_checked_in_schemas_match_the_models() -> None:
    """Changing a model without `groundguard schemas --write` fails here, with a diff."""
    assert schemas.drift() == [], "\n".join(schemas.drift())


def test_every_schema_is_draft_2020_12_with_a_versioned_id() -> None:
    for message in schemas.MESSAGES:
        schema = schemas.load(message.name)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"].endswith(f":v{SCHEMA_VERSION}")
        assert schema["title"]
        assert schema["description"]
        assert message.filename == f"{message.name}.v{SCHEMA_VERSION}.json"


def test_check_command_exits_1_with_a_diff_when_a_file_drifted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["schemas", "--write", "--dir", str(tmp_path)])
    assert args.func(args) == 0
    args = parser.parse_args(["schemas", "--check", "--dir", str(tmp_path)])
    assert args.func(args) == 0
    verdict = tmp_path / f"verdict.v{SCHEMA_VERSION}.json"
    verdict.write_text(verdict.read_text().replace('"label"', '"lable"'), encoding="utf-8")
    assert args.func(args) == 1
    err = capsys.readouterr().err
    assert '-    "lable"' in err or "lable" in err
    assert "groundguard schemas --write" in err


def test_docs_carry_request_and_verdict_examples() -> None:
    names = {name for _, name, _ in documented_examples()}
    assert {"request", "verdict"} <= names


@pytest.mark.parametrize("example", documented_examples(), ids=lambda e: f"{e[0]}:{e[1]}")
def test_documented_example_validates(example: tuple[str, str, Any]) -> None:
    _, name, instance = example
    assert errors_of(name, instance) == []


def test_documented_request_examples_are_accepted_by_the_model() -> None:
    """Every documented request parses, and each field it shows is read as written: the model
    ignores unknown fields, so a misspelt or stale field in the docs would otherwise pass."""
    examples = [(where, x) for where, name, x in documented_examples() if name == "request"]
    assert examples, "no documented request example found"
    for where, instance in examples:
        parsed = JudgeRequest.model_validate(instance)
        expected = instance | ({"id": str(instance["id"])} if "id" in instance else {})
        assert parsed.model_dump(mode="json", exclude_unset=True) == expected, where


async def test_verdict_from_guard_code_validates() -> None:
    """A verdict judged by the engine, recorded as the service publishes it, obeys the schema."""
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    try:
        verdict = await guard.judge(
            JudgeRequest(
                id="r-1", output="The tower is in Rome.", context=["The tower is in Paris."]
            )
        )
    finally:
        await guard.aclose()
    record = VerdictRecord(**verdict.model_dump(), input=coordinates())
    assert errors_of("verdict", json.loads(record.model_dump_json())) == []


def test_quarantine_and_dead_letter_records_validate() -> None:
    verdict = sample_verdict(label=Label.FAIL, score=0.0, raw_score=1, hallucinated=True)
    quarantine = QuarantineRecord(
        request_id="r-1", input=coordinates(), payload={"output": "x"}, verdict=verdict
    )
    assert errors_of("quarantine", json.loads(quarantine.model_dump_json())) == []
    dead = DeadLetter(
        reason="invalid_json", detail="line 1", input=coordinates(), payload_text="{nope"
    )
    assert errors_of("dead-letter", json.loads(dead.model_dump_json())) == []


def test_schema_rejects_a_verdict_without_its_label() -> None:
    record = json.loads(
        VerdictRecord(**sample_verdict().model_dump(), input=coordinates()).model_dump_json()
    )
    del record["label"]
    assert any("label" in e for e in errors_of("verdict", record))


def test_request_schema_rejects_a_request_without_output() -> None:
    assert any("output" in e for e in errors_of("request", {"context": "evidence"}))


@pytest.mark.parametrize(
    "payload",
    [
        {"output": "x"},
        {"output": "x", "id": 7},
        {"output": "x", "id": True},
        {"output": "x", "expectedOutput": "y"},
        {"output": "x", "expectedOutput": 3},
        {"output": "x", "context": ["a", {"text": "b"}]},
        {"output": "x", "context": [{"text": "b"}], "extra_field": {"ignored": True}},
        {"output": "x", "messages": [{"role": "robot", "content": "hi"}]},
        {"output": 1},
        {"context": "no output"},
    ],
)
def test_request_schema_accepts_exactly_what_the_model_accepts(payload: dict[str, Any]) -> None:
    """Producers can validate against the schema and trust the service to agree."""
    try:
        JudgeRequest.model_validate(payload)
        model_ok = True
    except ValueError:
        model_ok = False
    assert (errors_of("request", payload) == []) == model_ok

"""Published message contracts: JSON Schemas (draft 2020-12) generated from the pydantic models.

Every message groundguard reads or writes has a schema in ``schemas/<name>.v<version>.json``:
``request`` (what producers publish), ``verdict``, ``quarantine`` and ``dead-letter`` (what
groundguard publishes); ``serve.openapi.json`` is the OpenAPI document of ``groundguard serve``
(:mod:`consumers.serve.openapi`), built from the same models. The files are generated, never
edited by hand: ``groundguard schemas --write`` regenerates them and ``groundguard schemas
--check`` fails when they drift from the models. Output schemas list every field as required,
because groundguard always writes them all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema

from consumers import generated
from consumers.records import (
    DeadLetter,
    DeltaRecord,
    QuarantineRecord,
    ReleaseRecord,
    VerdictRecord,
)
from guard.defaults import SCHEMA_VERSION
from guard.learning.state import CalibrationRecord
from guard.models import JudgeRequest, ReviewLabel

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_PREFIX = "urn:groundguard:schema:"
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"

Mode = Literal["validation", "serialization"]


@dataclass(frozen=True)
class MessageSchema:
    """One published contract: which model, read (validation) or written (serialization)."""

    name: str
    model: type[BaseModel]
    mode: Mode
    title: str
    description: str

    @property
    def filename(self) -> str:
        return f"{self.name}.v{SCHEMA_VERSION}.json"

    @property
    def schema_id(self) -> str:
        return f"{ID_PREFIX}{self.name}:v{SCHEMA_VERSION}"


MESSAGES: tuple[MessageSchema, ...] = (
    MessageSchema(
        "request",
        JudgeRequest,
        "validation",
        "groundguard request",
        "An answer to judge with its evidence, as producers publish it to the requests "
        "topic (default rag.responses). Unknown fields are ignored.",
    ),
    MessageSchema(
        "verdict",
        VerdictRecord,
        "serialization",
        "groundguard verdict",
        "The decision on one request, published to the verdicts topic (default "
        "guard.verdicts) with the input's topic/partition/offset.",
    ),
    MessageSchema(
        "quarantine",
        QuarantineRecord,
        "serialization",
        "groundguard quarantine record",
        "A failing (or, under fail-closed, undecided) response with its original "
        "payload and verdict, published to the quarantine topic (default "
        "guard.quarantine).",
    ),
    MessageSchema(
        "dead-letter",
        DeadLetter,
        "serialization",
        "groundguard dead letter",
        "A message that could not be decoded or validated, with the original bytes, "
        "headers, source coordinates and the reason, published to the dead-letter topic "
        "(default guard.dlq).",
    ),
    MessageSchema(
        "delta",
        DeltaRecord,
        "validation",
        "groundguard streamed-answer delta",
        "One delta of an answer published as it streams, to the deltas topic (topics.deltas), "
        "keyed by response_id; seq 0 carries the evidence and question.",
    ),
    MessageSchema(
        "release",
        ReleaseRecord,
        "serialization",
        "groundguard release event",
        "How far a streamed answer is verified for release, with its span verdicts, published "
        "to the releases topic (default guard.releases) keyed by response_id.",
    ),
    MessageSchema(
        "review-label",
        ReviewLabel,
        "validation",
        "groundguard review label",
        "A reviewer's label of a judged message, on the labels topic (default guard.labels; "
        "groundguard label): the learning cascade counts it in place of the LLM's label.",
    ),
    MessageSchema(
        "calibration-record",
        CalibrationRecord,
        "validation",
        "groundguard calibration record",
        "One replica's agreement count of one (tier, basis, direction), on the compacted "
        "calibration topic (default guard.calibration), keyed by replica, tier, basis and "
        "direction.",
    ),
)


class OutputSchema(GenerateJsonSchema):
    """Serialization schemas: every field is written, so every field is required."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        if self.mode == "serialization":
            return True
        return super().field_is_required(field, total)


def request_leniency(body: dict[str, Any]) -> None:
    """What :class:`JudgeRequest` accepts beyond its annotations (validators, aliases)."""
    props = body["properties"]
    props["id"]["anyOf"].insert(1, {"type": "integer"})
    props["id"]["description"] = "Integer ids are accepted and used as their decimal text."
    props["expectedOutput"] = {
        **props["expected_output"],
        "description": "Accepted spelling of expected_output.",
    }


def generate(message: MessageSchema) -> dict[str, Any]:
    """One message's JSON Schema, with ``$schema``, a versioned ``$id``, title and description."""
    body = message.model.model_json_schema(mode=message.mode, schema_generator=OutputSchema)
    body.pop("title", None)
    body.pop("description", None)
    if message.model is JudgeRequest:
        request_leniency(body)
    return {
        "$schema": DRAFT,
        "$id": message.schema_id,
        "title": message.title,
        "description": message.description,
        "x-schema-version": SCHEMA_VERSION,
        **body,
    }


def render(schema: dict[str, Any]) -> str:
    """Stable text for a schema file (model field order kept, so diffs stay readable)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def expected_files() -> dict[str, str]:
    """File name -> the text it should hold, for every published message and the OpenAPI
    document of ``serve``."""
    from consumers.serve import openapi  # it builds on OutputSchema from this module

    files = {m.filename: render(generate(m)) for m in MESSAGES}
    files[openapi.FILENAME] = render(openapi.document())
    return files


def write(directory: Path = SCHEMA_DIR) -> list[Path]:
    """(Re)generate every schema file; returns the files written."""
    return [generated.write(directory / name, text) for name, text in expected_files().items()]


def drift(directory: Path = SCHEMA_DIR) -> list[str]:
    """Human-readable differences between the checked-in files and the models (empty: none)."""
    problems: list[str] = []
    for name, want in expected_files().items():
        problems += generated.drift(directory / name, want, f"{name} (from the models)")
    return problems


def load(name: str, directory: Path = SCHEMA_DIR) -> dict[str, Any]:
    """The checked-in schema of one message by name (``request``, ``verdict``...)."""
    message = next(m for m in MESSAGES if m.name == name)
    loaded: dict[str, Any] = json.loads((directory / message.filename).read_text("utf-8"))
    return loaded

"""The learner's counts as records: one per writer and key, the same on a compacted topic
(keyed by :func:`record_key`) and in a local file (JSON lines, ``judge.cascade.state_file``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from guard.errors import ConfigError
from guard.learning.ledger import Count, Direction, Key, Ledger

SEP = "\x1f"  # unit separator: in no tier name, basis or replica id


def record_key(origin: str, key: Key) -> str:
    return SEP.join((origin, key.tier, key.basis, key.direction))


def to_record(origin: str, key: Key, count: Count) -> dict[str, Any]:
    return {
        "origin": origin,
        "tier": key.tier,
        "basis": key.basis,
        "direction": key.direction,
        "agree": round(count.agree, 6),
        "total": round(count.total, 6),
    }


class CalibrationRecord(BaseModel):
    """One writer's count of one key (the records of ``topics.calibration`` and state files)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)

    origin: str = Field(min_length=1, description="The replica (instance_id) that counted.")
    tier: str = Field(min_length=1, description="The tier's name in judge.tiers.")
    basis: str = Field(min_length=1, description="The rule or score bucket of the readings.")
    direction: Direction = Field(description="What the readings said: pass or fail.")
    agree: float = Field(ge=0, description="Labels that agreed with the readings.")
    total: float = Field(ge=0, description="Labels of the readings (reviewers' weighted).")

    @model_validator(mode="after")
    def _agree_at_most_total(self) -> Self:
        if self.agree > self.total:
            raise ValueError("agree must be at most total")
        return self


def from_record(data: Any) -> tuple[str, Key, Count]:
    """The writer, key and count of a record; ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a calibration record is a JSON object")
    try:
        record = CalibrationRecord.model_validate(
            {k: float(v) if k in ("agree", "total") and type(v) is int else v
             for k, v in data.items()}
        )  # fmt: skip
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "record"
        raise ValueError(f"{where}: {first['msg']} (the record must be {FIELDS})") from None
    key = Key(record.tier, record.basis, record.direction)
    return record.origin, key, Count(record.agree, record.total)


FIELDS = "origin, tier, basis, direction (pass or fail), 0 <= agree <= total"


def records(ledger: Ledger) -> Iterator[dict[str, Any]]:
    """Every writer's counts the ledger holds (the seed is not state: it ships)."""
    for key, count in sorted(ledger.own.items()):
        yield to_record(ledger.origin, key, count)
    for origin, counts in sorted(ledger.peers.items()):
        for key, count in sorted(counts.items()):
            yield to_record(origin, key, count)


def load(path: Path, ledger: Ledger) -> int:
    """Read ``path`` into ``ledger`` (nothing when it does not exist); the records read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise ConfigError(
            "judge.cascade.state_file", f"{path}: {exc}", "give a readable file"
        ) from exc
    read = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            origin, key, count = from_record(orjson.loads(line))
        except (ValueError, orjson.JSONDecodeError) as exc:
            raise ConfigError(
                "judge.cascade.state_file",
                f"{path} line {number}: {exc}",
                "fix or remove the line (the file holds one JSON record per line)",
            ) from exc
        ledger.put(origin, key, count)
        read += 1
    return read


def save(path: Path, ledger: Ledger) -> None:
    """Write the ledger's counts to ``path`` atomically (a temporary file renamed)."""
    body = b"".join(orjson.dumps(r) + b"\n" for r in records(ledger))
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(body)
    os.replace(tmp, path)

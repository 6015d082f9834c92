"""The learner's counts as records: one per writer and key, the same on a compacted topic
(keyed by :func:`record_key`) and in a local file (JSON lines, ``judge.cascade.state_file``)."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from guard.errors import ConfigError
from guard.learning.ledger import Count, Key, Ledger

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


def from_record(data: Any) -> tuple[str, Key, Count]:
    """The writer, key and count of a record; ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a calibration record is a JSON object")
    origin, tier, basis, direction = (data.get(f) for f in ("origin", "tier", "basis", "direction"))
    if not all(isinstance(v, str) and v for v in (origin, tier, basis)):
        raise ValueError("origin, tier and basis must be non-empty strings")
    if direction not in ("pass", "fail"):
        raise ValueError("direction must be pass or fail")
    agree, total = _number(data.get("agree")), _number(data.get("total"))
    if not (math.isfinite(agree) and math.isfinite(total) and 0 <= agree <= total):
        raise ValueError("agree and total must be finite, with 0 <= agree <= total")
    key = Key(str(tier), str(basis), direction)
    return str(origin), key, Count(float(agree), float(total))


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("agree and total must be numbers")
    return float(value)


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

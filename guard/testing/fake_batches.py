"""The fake batch endpoints: OpenAI Files + Batches and Anthropic Message Batches.

:class:`guard.testing.fake_server.FakeLLMServer` serves these next to its model calls. The shapes
are the ones the real SDKs read (``openai.types.Batch``, ``FileObject``, the batch output JSONL;
``anthropic.types.messages.MessageBatch`` and ``MessageBatchIndividualResponse``):

* ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}``,
  ``GET /v1/files/{id}/content``;
* ``POST /v1/batches`` (``metadata`` kept), ``GET /v1/batches`` (all, newest first),
  ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``;
* ``POST /v1/messages/batches``, ``GET /v1/messages/batches`` (all, newest first),
  ``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``,
  ``POST /v1/messages/batches/{id}/cancel``.

A batch completes ``delay_s`` after it was created (its status is computed when read, with
the ``delay_s`` of that moment: a test may hold batches running, then let them end). Each item
is answered by the server's model-call function, as a realtime call would be, unless it fails:
an item whose prompt holds :data:`ITEM_ERROR_MARKER` (or drawn by ``fail_rate``) errors, and one
holding :data:`ITEM_EXPIRE_MARKER` expires (its batch ends ``expired`` on OpenAI). Every item
submitted is counted by ``custom_id``, so a test proves nothing was sent twice. ``on_create``
(when set) is called as each batch is created, before the reply: a test can kill the client
right then, in the window between the provider accepting a batch and the client learning its id.
"""

from __future__ import annotations

import email.parser
import email.policy
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from guard.testing.fake_api import Reply, json_reply, new_id, prompt_text, route

ITEM_ERROR_MARKER = "BATCH_ITEM_ERROR"
ITEM_EXPIRE_MARKER = "BATCH_ITEM_EXPIRE"

ModelCall = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]
"""``(api, request body) -> (status, reply body)``: one item answered as a realtime call."""

_ID = r"([A-Za-z0-9_-]+)"
_ROUTES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("POST", re.compile(r".*/files"), "file_create"),
    ("GET", re.compile(rf".*/files/{_ID}/content"), "file_content"),
    ("GET", re.compile(rf".*/files/{_ID}"), "file_get"),
    ("POST", re.compile(r".*/messages/batches"), "msg_create"),
    ("GET", re.compile(r".*/messages/batches"), "msg_list"),
    ("GET", re.compile(rf".*/messages/batches/{_ID}/results"), "msg_results"),
    ("POST", re.compile(rf".*/messages/batches/{_ID}/cancel"), "msg_cancel"),
    ("GET", re.compile(rf".*/messages/batches/{_ID}"), "msg_get"),
    ("POST", re.compile(r".*/batches"), "oai_create"),
    ("GET", re.compile(r".*/batches"), "oai_list"),
    ("POST", re.compile(rf".*/batches/{_ID}/cancel"), "oai_cancel"),
    ("GET", re.compile(rf".*/batches/{_ID}"), "oai_get"),
)


@dataclass
class _Item:
    custom_id: str
    api: str
    body: dict[str, Any]
    fate: str  # succeeded | errored | expired


@dataclass
class _Batch:
    id: str
    provider: str  # openai | anthropic
    items: list[_Item]
    created: float
    canceled_at: float | None = None
    endpoint: str = ""
    input_file_id: str = ""
    canceled: bool = False
    results: list[dict[str, Any]] | None = None  # computed once, when it ends
    output_file_id: str | None = None
    error_file_id: str | None = None
    metadata: dict[str, str] | None = None


@dataclass
class BatchCounters:
    batches: int = 0
    items: Counter[str] = field(default_factory=Counter)  # custom_id -> times submitted
    polls: int = 0

    def snapshot(self) -> dict[str, Any]:
        return {
            "batches_created": self.batches,
            "items_submitted": sum(self.items.values()),
            "items_distinct": len(self.items),
            "items_duplicated": sorted(k for k, n in self.items.items() if n > 1),
            "polls": self.polls,
        }


class FakeBatches:
    """The state of the fake's files and batches (thread-safe; see the module docstring)."""

    def __init__(
        self, model_call: ModelCall, *, delay_s: float = 1.0, fail_rate: float = 0.0, seed: int = 0
    ) -> None:
        self.delay_s = delay_s
        self.fail_rate = fail_rate
        self.base_url = ""
        self._call = model_call
        self._rng = random.Random(seed)
        self._lock = threading.RLock()
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, _Batch] = {}
        self.counters = BatchCounters()
        self.on_create: Callable[[], None] | None = None

    def reset(self) -> None:
        with self._lock:
            self.counters = BatchCounters()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return self.counters.snapshot()

    def submitted(self) -> Counter[str]:
        """How many times each ``custom_id`` was submitted."""
        with self._lock:
            return Counter(self.counters.items)

    # ------------------------------------------------------------------ routing

    @staticmethod
    def handles(method: str, path: str) -> bool:
        return _match(method, path) is not None

    def dispatch(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        found = _match(method, path)
        if found is None:
            return json_reply(404, {"error": {"message": f"no route {method} {path}"}})
        name, ident = found
        try:
            return getattr(self, "_" + name)(ident, headers, raw)  # type: ignore[no-any-return]
        except (ValueError, KeyError, TypeError) as exc:
            return json_reply(400, _error(f"bad batch request: {exc}"))

    # ------------------------------------------------------------------ OpenAI files

    def _file_create(self, _ident: str, headers: dict[str, str], raw: bytes) -> Reply:
        fields = _multipart(headers.get("content-type", ""), raw)
        content, purpose = fields["file"], fields.get("purpose", b"batch").decode()
        fid = new_id("file-")
        with self._lock:
            self._files[fid] = content
        return json_reply(200, _file_object(fid, len(content), purpose))

    def _file_get(self, ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        with self._lock:
            content = self._files.get(ident)
        if content is None:
            return json_reply(404, _error(f"no file {ident}"))
        return json_reply(200, _file_object(ident, len(content), "batch"))

    def _file_content(self, ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        with self._lock:
            content = self._files.get(ident)
        if content is None:
            return json_reply(404, _error(f"no file {ident}"))
        return Reply(200, content, content_type="application/octet-stream")

    # ------------------------------------------------------------------ OpenAI batches

    def _oai_create(self, _ident: str, _h: dict[str, str], raw: bytes) -> Reply:
        spec = orjson.loads(raw)
        with self._lock:
            content = self._files.get(spec["input_file_id"])
        if content is None:
            return json_reply(404, _error(f"no file {spec['input_file_id']}"))
        items = []
        for line in content.splitlines():
            if line.strip():
                entry = orjson.loads(line)
                api = route(entry["url"]) or "chat"
                items.append(self._item(entry["custom_id"], api, entry["body"]))
        batch = self._new_batch("openai", new_id("batch_"), items, spec.get("metadata"))
        batch.endpoint, batch.input_file_id = spec["endpoint"], spec["input_file_id"]
        return json_reply(200, self._openai_view(batch))

    def _oai_list(self, _ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        views = [self._openai_view(b) for b in self._newest_first("openai")]
        return json_reply(200, {"object": "list", "data": views, "has_more": False})

    def _oai_get(self, ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        batch = self._polled(ident)
        if batch is None or batch.provider != "openai":
            return json_reply(404, _error(f"no batch {ident}"))
        return json_reply(200, self._openai_view(batch))

    def _oai_cancel(self, ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        batch = self._cancel(ident)
        if batch is None:
            return json_reply(404, _error(f"no batch {ident}"))
        return json_reply(200, self._openai_view(batch))

    def _openai_view(self, batch: _Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        expired = any(i.fate == "expired" for i in batch.items) and not batch.canceled
        status = "in_progress"
        if ended:
            status = "cancelled" if batch.canceled else "expired" if expired else "completed"
            self._openai_files(batch)
        done = sum(1 for i in batch.items if i.fate == "succeeded") if ended else 0
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "created_at": int(batch.created),
            "expires_at": int(batch.created) + 86_400,
            "completed_at": int(self._due(batch)) if status == "completed" else None,
            "expired_at": int(self._due(batch)) if status == "expired" else None,
            "cancelled_at": int(self._due(batch)) if status == "cancelled" else None,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "request_counts": {
                "total": len(batch.items),
                "completed": done,
                "failed": len(batch.items) - done if ended else 0,
            },
            "metadata": batch.metadata,
            "errors": None,
        }

    def _openai_files(self, batch: _Batch) -> None:
        """The output and error files of an ended batch (made once)."""
        if batch.output_file_id is not None or batch.error_file_id is not None:
            return
        out, err = [], []
        for item, result in zip(batch.items, self._results(batch), strict=True):
            line: dict[str, Any] = {"id": new_id("batch_req_"), "custom_id": item.custom_id}
            if result["type"] == "succeeded":
                rid = new_id("req_")
                line |= {
                    "response": {"status_code": 200, "request_id": rid, "body": result["body"]}
                }
                out.append(line | {"error": None})
            else:
                code = (
                    "batch_expired" if result["type"] in ("expired", "canceled") else "server_error"
                )
                err.append(line | {"response": None, "error": {"code": code, "message": code}})
        with self._lock:
            if out:
                batch.output_file_id = new_id("file-")
                self._files[batch.output_file_id] = _jsonl(out)
            if err:
                batch.error_file_id = new_id("file-")
                self._files[batch.error_file_id] = _jsonl(err)

    # ------------------------------------------------------------------ Anthropic batches

    def _msg_create(self, _ident: str, _h: dict[str, str], raw: bytes) -> Reply:
        spec = orjson.loads(raw)
        items = [self._item(r["custom_id"], "messages", r["params"]) for r in spec["requests"]]
        batch = self._new_batch("anthropic", new_id("msgbatch_"), items)
        return json_reply(200, self._anthropic_view(batch))

    def _msg_list(self, _ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        views = [self._anthropic_view(b) for b in self._newest_first("anthropic")]
        first, last = (views[0]["id"], views[-1]["id"]) if views else (None, None)
        page = {"data": views, "has_more": False, "first_id": first, "last_id": last}
        return json_reply(200, page)

    def _msg_get(self, ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        batch = self._polled(ident)
        if batch is None or batch.provider != "anthropic":
            return json_reply(404, _anthropic_error(f"no batch {ident}"))
        return json_reply(200, self._anthropic_view(batch))

    def _msg_cancel(self, ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        batch = self._cancel(ident)
        if batch is None:
            return json_reply(404, _anthropic_error(f"no batch {ident}"))
        return json_reply(200, self._anthropic_view(batch))

    def _msg_results(self, ident: str, _h: dict[str, str], _raw: bytes) -> Reply:
        with self._lock:
            batch = self._batches.get(ident)
        if batch is None or not self._ended(batch):
            return json_reply(404, _anthropic_error(f"no results for batch {ident}"))
        lines = []
        for item, result in zip(batch.items, self._results(batch), strict=True):
            kind = result["type"]
            entry: dict[str, Any] = {"type": kind}
            if kind == "succeeded":
                entry["message"] = result["body"]
            elif kind == "errored":
                entry["error"] = {"type": "error", "error": result["error"]}
            lines.append({"custom_id": item.custom_id, "result": entry})
        return Reply(200, _jsonl(lines), content_type="application/binary")

    def _anthropic_view(self, batch: _Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        counts = Counter(self._fate(i, batch) for i in batch.items) if ended else Counter()
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "created_at": _iso(batch.created),
            "expires_at": _iso(batch.created + 86_400),
            "ended_at": _iso(self._due(batch)) if ended else None,
            "cancel_initiated_at": _iso(batch.canceled_at) if batch.canceled_at else None,
            "archived_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{batch.id}/results"
            if ended
            else None,
            "request_counts": {
                "processing": 0 if ended else len(batch.items),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "expired": counts["expired"],
                "canceled": counts["canceled"],
            },
        }

    # ------------------------------------------------------------------ shared

    def _item(self, custom_id: str, api: str, body: dict[str, Any]) -> _Item:
        text = prompt_text(body)
        fate = "succeeded"
        if ITEM_EXPIRE_MARKER in text:
            fate = "expired"
        elif ITEM_ERROR_MARKER in text or (self.fail_rate and self._rng.random() < self.fail_rate):
            fate = "errored"
        return _Item(custom_id, api, body, fate)

    def _new_batch(
        self, provider: str, ident: str, items: list[_Item], metadata: Any = None
    ) -> _Batch:
        ids = [i.custom_id for i in items]
        if len(set(ids)) != len(ids):
            raise ValueError("custom_id values must be unique within a batch")
        batch = _Batch(ident, provider, items, time.time(), metadata=metadata)
        with self._lock:
            self._batches[ident] = batch
            self.counters.batches += 1
            self.counters.items.update(ids)
        if self.on_create is not None:
            self.on_create()
        return batch

    def _newest_first(self, provider: str) -> list[_Batch]:
        with self._lock:
            batches = [b for b in self._batches.values() if b.provider == provider]
        return sorted(batches, key=lambda b: b.created, reverse=True)

    def _polled(self, ident: str) -> _Batch | None:
        with self._lock:
            self.counters.polls += 1
            return self._batches.get(ident)

    def _cancel(self, ident: str) -> _Batch | None:
        with self._lock:
            batch = self._batches.get(ident)
            if batch is not None and not self._ended(batch):
                batch.canceled, batch.canceled_at = True, time.time()
        return batch

    def _due(self, batch: _Batch) -> float:
        """When the batch ends: ``delay_s`` (as set now: a test may shorten it for batches
        already running) after its creation, or when it was cancelled."""
        return batch.canceled_at or batch.created + self.delay_s

    def _ended(self, batch: _Batch) -> bool:
        return time.time() >= self._due(batch)

    @staticmethod
    def _fate(item: _Item, batch: _Batch) -> str:
        return "canceled" if batch.canceled and item.fate == "succeeded" else item.fate

    def _results(self, batch: _Batch) -> list[dict[str, Any]]:
        """Each item's result: the model call's reply body, or its failure (computed once)."""
        with self._lock:
            if batch.results is None:
                batch.results = self._answer(batch)
            return batch.results

    def _answer(self, batch: _Batch) -> list[dict[str, Any]]:
        results = []
        for item in batch.items:
            fate = self._fate(item, batch)
            if fate != "succeeded":
                results.append({"type": fate, "error": _error_object("item failed")})
                continue
            status, body = self._call(item.api, item.body)
            if status == 200:
                results.append({"type": "succeeded", "body": body})
            else:
                results.append({"type": "errored", "error": _error_object(str(body))})
        return results


def _match(method: str, path: str) -> tuple[str, str] | None:
    for verb, pattern, name in _ROUTES:
        found = pattern.fullmatch(path)
        if verb == method and found is not None:
            return name, found.group(1) if found.groups() else ""
    return None


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a ``multipart/form-data`` body, by name."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    fields: dict[str, bytes] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if name and isinstance(payload, bytes):
            fields[str(name)] = payload
    if "file" not in fields:
        raise ValueError("multipart body has no 'file' field")
    return fields


def _file_object(fid: str, size: int, purpose: str) -> dict[str, Any]:
    return {
        "id": fid,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": "batch.jsonl",
        "purpose": purpose,
        "status": "processed",
    }


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}


def _error_object(message: str) -> dict[str, Any]:
    return {"type": "api_error", "message": message}


def _anthropic_error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "not_found_error", "message": message}}


__all__ = ["ITEM_ERROR_MARKER", "ITEM_EXPIRE_MARKER", "BatchCounters", "FakeBatches", "ModelCall"]

"""The OpenAPI 3.1 document of ``serve``, generated from the same models as ``schemas/``.

Served at ``/openapi.json`` and checked in as ``schemas/serve.openapi.json`` (``groundguard
schemas --check`` fails when it drifts). The request and verdict bodies are the topic's
request and verdict (without the verdict record's ``input``), so one schema serves both ways.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from consumers.schemas import OutputSchema, request_leniency
from consumers.serve.body import BATCH_FIELD, DEADLINE_HEADER
from guard.defaults import MAX_SERVE_DEADLINE_MS, SCHEMA_VERSION
from guard.models import JudgeRequest, ReviewLabel, Verdict
from guard.stream.chat import CONTEXT_FIELD

REF = "#/components/schemas/{model}"
FILENAME = "serve.openapi.json"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(model=name)}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "field"],
            "properties": {
                "code": {"type": "string", "description": "e.g. invalid_json, overloaded"},
                "message": {"type": "string"},
                "field": {
                    "type": ["string", "null"],
                    "description": "The JSON path (output, requests.3.context) or header at fault.",
                },
            },
        }
    },
}

_REFUSALS = {
    "400": "Not JSON, not an object, or a bad deadline header (field names it).",
    "401": "No or an unknown bearer API key (when serve.api_keys_file is set).",
    "408": "The body did not arrive whole by the request's deadline, or the headers not "
    "within serve.header_timeout_s (the connection is closed).",
    "413": "The body is larger than serve.max_body_bytes.",
    "415": "Not application/json.",
    "422": "A field has the wrong type or is missing (field names it).",
}


def _errors(*extra: tuple[str, str]) -> dict[str, Any]:
    replies = {code: _json(_ref("Error"), text) for code, text in _REFUSALS.items()}
    for code, text in extra:
        replies[code] = _json(_ref("Error"), text)
    return replies


def _check_operation(summary: str, body: str, reply: str, ok: str) -> dict[str, Any]:
    return {
        "summary": summary,
        "security": [{"bearer": []}],
        "parameters": [
            {
                "name": DEADLINE_HEADER,
                "in": "header",
                "required": False,
                "description": "Deadline in milliseconds (default serve.deadline_ms); past it "
                "serve.on_deadline decides: an error verdict (deadline_exceeded) or the offline "
                "judge's verdict (judge.fallback_reason deadline_exceeded).",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_SERVE_DEADLINE_MS},
            }
        ],
        "requestBody": {"required": True, **_json(_ref(body), "What to judge.")},
        "responses": {
            "200": _json(_ref(reply), ok),
            **_errors(
                (
                    "429",
                    "Shed: serve.max_in_flight or serve.max_buffered_body_bytes reached (the "
                    "body unread), or a budget refusal (Retry-After).",
                ),
                (
                    "503",
                    "A budget refusal (breaker open, quota spent), or serve.max_connections "
                    "reached (Retry-After).",
                ),
            ),
        },
    }


def _proxy_operation(summary: str, wire: str) -> dict[str, Any]:
    """A proxy route: the upstream API's own request and answer (not described here), the
    answer released as judged (serve.proxy)."""
    body = {
        "type": "object",
        "description": f"A {wire} request, forwarded as sent; "
        f"'{CONTEXT_FIELD}' (a string, strings or documents) is evidence and is not "
        "forwarded.",
    }
    answer = {
        "description": f"The {wire} answer (JSON, or text/event-stream with stream: true), "
        "released only as far as it is judged grounded; a 'groundguard' object in the answer "
        "(the last chunk of a stream) summarises the verdict.",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
    return {
        "summary": summary,
        "security": [{"bearer": []}],
        "requestBody": {"required": True, **_json(body, "The model request.")},
        "responses": {
            "200": answer,
            "404": _json(_ref("Error"), "No upstream of this API (serve.proxy)."),
            "502": _json(_ref("Error"), "The upstream could not be reached."),
            "504": _json(_ref("Error"), "The upstream did not answer in time."),
        },
    }


def _health(summary: str) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "responses": {"200": {"description": "ok"}, "503": {"description": "not ok"}},
        }
    }


def document() -> dict[str, Any]:
    """The whole OpenAPI document (its version is the message schema version)."""
    _, defs = models_json_schema(
        [(JudgeRequest, "validation"), (Verdict, "serialization"), (ReviewLabel, "validation")],
        ref_template=REF,
        schema_generator=OutputSchema,
    )
    schemas: dict[str, Any] = defs["$defs"]
    request_leniency(schemas["JudgeRequest"])
    schemas["Error"] = _ERROR
    schemas["BatchRequest"] = {
        "type": "object",
        "required": [BATCH_FIELD],
        "properties": {BATCH_FIELD: {"type": "array", "items": _ref("JudgeRequest")}},
    }
    schemas["BatchResponse"] = {
        "type": "object",
        "required": ["verdicts"],
        "properties": {"verdicts": {"type": "array", "items": _ref("Verdict")}},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "groundguard serve",
            "version": SCHEMA_VERSION,
            "description": "Check an answer against its evidence before sending it. Request "
            f"and verdict are schema version {SCHEMA_VERSION}, as on the Kafka topics.",
        },
        "paths": {
            "/v1/check": {
                "post": _check_operation(
                    "Judge one answer", "JudgeRequest", "Verdict", "The verdict."
                )
            },
            "/v1/check/batch": {
                "post": _check_operation(
                    "Judge many answers",
                    "BatchRequest",
                    "BatchResponse",
                    "One verdict per request, in order (budget refusals are verdicts here).",
                )
            },
            "/v1/labels": {
                "post": {
                    "summary": "A reviewer's label of a judged message (judge.cascade.learn)",
                    "security": [{"bearer": []}],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("ReviewLabel")}},
                    },
                    "responses": {
                        "200": {
                            "description": "Applied, or not (the request is not remembered).",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["request_id", "applied"],
                                        "properties": {
                                            "request_id": {"type": "string"},
                                            "applied": {"type": "boolean"},
                                        },
                                    }
                                }
                            },
                        },
                        **_errors(("409", "Learning is off (learning_off).")),
                    },
                }
            },
            "/v1/chat/completions": {
                "post": _proxy_operation("Proxy an OpenAI chat completion", "OpenAI chat")
            },
            "/v1/messages": {"post": _proxy_operation("Proxy an Anthropic message", "Anthropic")},
            "/healthz": _health("Liveness: the event loop answers."),
            "/readyz": _health("Readiness: started, not stopping, intake not stopped."),
            "/metrics": _health("Prometheus metrics."),
        },
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }

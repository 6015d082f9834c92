"""The check API in process (httpx2 over ASGI): budget refusals as statuses, the deadline
policies, API keys from a file, and the request parser under hostile input."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumers.asgi import AsgiServer
from consumers.errors import SettingsError
from consumers.serve import body
from consumers.serve.app import build_app
from consumers.serve.auth import ApiKeys, read_keys
from consumers.serve.errors import BadRequest, Unauthorized
from consumers.serve.service import make_api
from consumers.settings import ServiceSettings
from guard.budgets.judge import build_budgeted_judge
from guard.budgets.settings import BudgetSettings
from guard.engine import Guard
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

REQUEST = {"output": "Paris is in France.", "context": "Paris is in France."}
KEY = "k" * 32


async def client_for(
    guard: Guard, offline: Guard | None = None, **serve: Any
) -> AsyncIterator[httpx2.AsyncClient]:
    settings = ServiceSettings.model_validate({"serve": serve, "judge": {"provider": "fake"}})
    api, ready = make_api(settings, guard, offline)
    api.state.started = True
    transport = httpx2.ASGITransport(app=build_app(api, ready=ready))
    async with httpx2.AsyncClient(transport=transport, base_url="http://serve") as client:
        yield client
    await guard.aclose()


@pytest.fixture
async def spent() -> AsyncIterator[httpx2.AsyncClient]:
    """A judge whose cost budget (skip policy) is spent after one call."""
    budget = BudgetSettings(cost_per_day_usd=0.01, on_budget_exhausted="skip")
    judge = build_budgeted_judge(FakeJudge(), budget, price=lambda model, usage: 0.02)
    async for client in client_for(Guard(judge, JudgeSettings(provider="fake"))):
        yield client


async def test_a_spent_cost_budget_answers_429_with_the_skipped_verdict(
    spent: httpx2.AsyncClient,
) -> None:
    first = await spent.post("/v1/check", json=REQUEST)
    second = await spent.post("/v1/check", json={**REQUEST, "output": "Paris is big."})
    assert first.status_code == 200
    assert second.status_code == 429
    assert second.headers["retry-after"] == "1"
    assert second.json()["label"] == "skipped"
    assert second.json()["reason"].startswith("budget_exhausted")
    metrics = (await spent.get("/metrics")).text
    assert 'groundguard_serve_shed_total{reason="budget_exhausted:day"} 1.0' in metrics


async def test_the_offline_policy_answers_with_the_offline_judge_past_the_deadline() -> None:
    slow = Guard(FakeJudge(latency_s=5.0), JudgeSettings(provider="fake"))
    offline = Guard(FakeJudge(model="offline-stand-in"), JudgeSettings(provider="fake"))
    async for client in client_for(slow, offline, on_deadline="offline"):
        reply = await client.post(
            "/v1/check", json=REQUEST, headers={"x-groundguard-deadline-ms": "50"}
        )
        assert reply.status_code == 200
        verdict = reply.json()
        assert verdict["judge"]["model"] == "offline-stand-in"
        assert verdict["judge"]["fallback_reason"] == "deadline_exceeded"
        assert verdict["label"] == "pass"


async def test_the_error_policy_keeps_the_request_id_and_metadata() -> None:
    slow = Guard(FakeJudge(latency_s=5.0), JudgeSettings(provider="fake"))
    async for client in client_for(slow):
        reply = await client.post(
            "/v1/check",
            json={**REQUEST, "id": "r-7", "metadata": {"app": "bot"}},
            headers={"x-groundguard-deadline-ms": "20"},
        )
        verdict = reply.json()
        assert (verdict["request_id"], verdict["metadata"]) == ("r-7", {"app": "bot"})
        assert verdict["error"] == {
            "kind": "deadline_exceeded",
            "message": "no verdict within 20 ms",
            "retriable": True,
        }


# --------------------------------------------------------------------------- keys


def test_keys_are_read_without_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(f"# team a\n\n{KEY}\n  {'m' * 20}  \n", encoding="utf-8")
    assert read_keys(path) == (KEY.encode(), b"m" * 20)


@pytest.mark.parametrize("text", ["", "# only a comment\n", "short\n"])
def test_an_unusable_key_file_fails_at_start_without_quoting_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "keys"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        read_keys(path)
    assert "serve.api_keys_file" in str(caught.value)
    assert "short\n" not in str(caught.value)


def test_a_rotated_key_file_takes_effect_without_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(KEY, encoding="utf-8")
    keys = ApiKeys(path)
    keys.check(f"Bearer {KEY}")
    new = "n" * 32
    path.write_text(new, encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a same-tick rewrite of the same size could share an mtime
    keys.check(f"Bearer {new}")
    with pytest.raises(Unauthorized):
        keys.check(f"Bearer {KEY}")


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer ", "Token " + KEY, KEY])
def test_anything_but_a_bearer_key_is_refused(tmp_path: Path, header: str | None) -> None:
    path = tmp_path / "keys"
    path.write_text(KEY, encoding="utf-8")
    with pytest.raises(Unauthorized):
        ApiKeys(path).check(header)


# --------------------------------------------------------------------------- parsing

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    ["output", "context", "messages", "id", "metadata", "context_field", "question", "requests"]
)
_BODIES = st.one_of(
    st.binary(max_size=300),
    _JSON.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(_KEYS, _JSON, max_size=5).map(lambda v: json.dumps(v).encode()),
)


@settings(max_examples=150, deadline=None)
@given(raw=_BODIES)
def test_the_parser_answers_any_body_with_a_request_or_a_bad_request_naming_a_field(
    raw: bytes,
) -> None:
    parse = Guard(FakeJudge(), JudgeSettings(provider="fake")).parse
    refused = _refusal(parse, raw)
    if refused is not None:
        assert refused.status in (400, 422)
        assert refused.field
        assert refused.code


def _refusal(parse: body.Parse, raw: bytes) -> BadRequest | None:
    """What parsing ``raw`` as a single and as a batch request refused first (None: nothing)."""
    try:
        value = body.decode_object(raw)
        body.parse_one(parse, value)
        if "requests" in value:
            body.parse_batch(parse, value, 10)
    except BadRequest as exc:
        return exc
    return None


def test_a_batch_larger_than_the_in_flight_bound_is_a_bad_setting() -> None:
    with pytest.raises(ValueError, match=r"serve\.max_batch_items"):
        ServiceSettings.model_validate({"serve": {"max_in_flight": 4, "max_batch_items": 5}})


async def test_a_request_cut_off_by_the_drain_deadline_gets_503_not_500() -> None:
    """Past drain_timeout_s the stop cancels what is left; the caller is told to retry."""
    slow = Guard(FakeJudge(latency_s=30.0), JudgeSettings(provider="fake"))
    settings = ServiceSettings.model_validate({"judge": {"provider": "fake"}})
    api, ready = make_api(settings, slow, None)
    server = AsgiServer(build_app(api, ready=ready), host="127.0.0.1", port=0, grace_s=0.3)
    await server.start()
    async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as client:
        reply = asyncio.create_task(
            client.post("/v1/check", json=REQUEST, headers={"x-groundguard-deadline-ms": "60000"})
        )
        for _ in range(1000):  # until the request is with the judge
            if api.admission.in_flight:
                break
            await asyncio.sleep(0.01)
        api.state.stopping = True
        await asyncio.wait_for(server.close(), 5)
        cut = await reply
    await slow.aclose()
    assert cut.status_code == 503
    assert cut.json()["error"]["code"] == "shutting_down"


async def test_the_openapi_schemas_accept_what_serve_reads_and_writes() -> None:
    """The document's components are JSON Schema (OpenAPI 3.1): a real verdict and a batch
    validate, a request without ``output`` does not."""
    from jsonschema import Draft202012Validator

    from consumers.serve.openapi import document

    doc = document()

    def validator(name: str) -> Draft202012Validator:
        root = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
        Draft202012Validator.check_schema(root)
        return Draft202012Validator(root)

    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    verdict = await guard.judge(guard.parse(REQUEST))
    await guard.aclose()
    assert not list(validator("Verdict").iter_errors(json.loads(verdict.model_dump_json())))
    assert validator("BatchRequest").is_valid({"requests": [REQUEST, {**REQUEST, "id": 7}]})
    assert not validator("JudgeRequest").is_valid({"context": "no output"})


async def test_metrics_enabled_false_drops_the_metrics_route_but_keeps_the_probes() -> None:
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    settings = ServiceSettings.model_validate({"judge": {"provider": "fake"}})
    api, ready = make_api(settings, guard, None)
    api.state.started = True
    app = build_app(api, ready=ready, expose_metrics=False)
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://serve") as client:
        assert (await client.get("/metrics")).status_code == 404
        assert (await client.get("/readyz")).json()["reason"] == "serving"
    await guard.aclose()


@pytest.mark.parametrize("raw", [b"\xb2", b"1\xb9", b"\xbc", b"  \xb3 "])
async def test_a_deadline_header_of_non_ascii_digits_is_a_bad_request_not_a_500(
    raw: bytes,
) -> None:
    """Starlette reads header bytes as Latin-1, where ``²`` and ``¹`` are str.isdigit() but
    not int()."""
    async for client in client_for(Guard(FakeJudge(), JudgeSettings(provider="fake"))):
        reply = await client.post(
            "/v1/check", json=REQUEST, headers={"x-groundguard-deadline-ms": raw}
        )
        assert reply.status_code == 400
        assert reply.json()["error"]["field"] == "x-groundguard-deadline-ms"


async def test_a_body_that_trickles_in_past_the_deadline_is_refused_not_waited_for() -> None:
    """The deadline counts from arrival: a client that never finishes its body gets 408 by
    then, rather than holding the request (and the connection) open."""

    async def trickle() -> AsyncIterator[bytes]:
        yield b'{"output": "Paris is in France.", '
        await asyncio.sleep(30)
        yield b'"context": "Paris is in France."}'

    async for client in client_for(Guard(FakeJudge(), JudgeSettings(provider="fake"))):
        reply = await asyncio.wait_for(
            client.post(
                "/v1/check", content=trickle(), headers={"x-groundguard-deadline-ms": "200"}
            ),
            timeout=10,
        )
        assert reply.status_code == 408
        assert reply.json()["error"]["code"] == "body_timeout"
        assert reply.json()["error"]["field"] == "body"

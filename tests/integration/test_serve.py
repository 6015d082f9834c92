"""``groundguard serve`` as a process, over real HTTP (httpx2), judging with the OpenAI SDK
against the loopback FakeLLMServer: verdicts, deadlines, overload, bad input, auth, logs, and
the graceful stop on SIGTERM.

Two server processes for the whole module: ``api`` (API keys, a small in-flight bound,
``on_deadline: error``) and ``lenient`` (no keys, ``on_deadline: offline``; the SIGTERM test
stops it, so it runs last). An output containing ``SLOW-<ms>`` makes the fake LLM take that long.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from consumers.schemas import SCHEMA_DIR
from guard.testing import FakeLLMServer
from guard.testing.fake_api import HALLUCINATION_MARKER, Fault
from guard.testing.fake_server import marker_verdict
from tests.integration.serveproc import ServeProcess

API_KEY = "test-key-0123456789abcdef-never-logged"
OTHER_KEY = "wrong-key-fedcba9876543210-never-logged"
LLM_KEY = "sk-fake-llm-key-for-the-judge"
MAX_IN_FLIGHT = 3
MAX_BODY = 4096
EVIDENCE = "Returns are accepted within 30 days of delivery for a full refund."
_SLOW = re.compile(r"SLOW-(\d+)")


def slow_marker_latency(body: Mapping[str, Any]) -> float:
    found = _SLOW.search(json.dumps(body))
    return int(found.group(1)) / 1000 if found else 0.0


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict, latency_s=slow_marker_latency) as server:
        yield server


def judge_env(llm: FakeLLMServer) -> dict[str, str]:
    return {
        "GROUNDGUARD_JUDGE__PROVIDER": "openai",
        "GROUNDGUARD_JUDGE__BASE_URL": llm.openai_base_url,
        "GROUNDGUARD_JUDGE__MAX_RETRIES": "0",
        "OPENAI_API_KEY": LLM_KEY,
    }


@pytest.fixture(scope="module")
def api(llm: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    home = tmp_path_factory.mktemp("serve-api")
    keys = home / "keys"
    keys.write_text(f"# rotated monthly\n{API_KEY}\n", encoding="utf-8")
    env = judge_env(llm) | {
        "GROUNDGUARD_SERVE__API_KEYS_FILE": str(keys),
        "GROUNDGUARD_SERVE__MAX_IN_FLIGHT": str(MAX_IN_FLIGHT),
        "GROUNDGUARD_SERVE__MAX_BATCH_ITEMS": str(MAX_IN_FLIGHT),
        "GROUNDGUARD_SERVE__MAX_BODY_BYTES": str(MAX_BODY),
        "GROUNDGUARD_LOG__LEVEL": "debug",  # refusals are logged at debug: keys must not be
    }
    server = ServeProcess(home / "serve.log", env)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def lenient(llm: FakeLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    home = tmp_path_factory.mktemp("serve-lenient")
    env = judge_env(llm) | {
        "GROUNDGUARD_SERVE__ON_DEADLINE": "offline",
        "GROUNDGUARD_DRAIN_TIMEOUT_S": "10",
    }
    server = ServeProcess(home / "serve.log", env)
    yield server
    server.stop()


def authed(key: str = API_KEY) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def check(
    server: ServeProcess,
    body: Any,
    *,
    headers: Mapping[str, str] | None = None,
    path: str = "/v1/check",
) -> httpx2.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    merged = {"content-type": "application/json", **authed(), **(headers or {})}
    return server.client.post(path, content=content, headers=merged)


def request(output: str, **extra: Any) -> dict[str, Any]:
    return {"output": output, "context": EVIDENCE, **extra}


# --------------------------------------------------------------------------- verdicts


def test_a_grounded_answer_passes_and_an_ungrounded_one_fails(api: ServeProcess) -> None:
    passed = check(api, request("You can return items within 30 days.", id="r-pass"))
    failed = check(api, request(f"Returns within 90 days. {HALLUCINATION_MARKER}", id="r-fail"))
    assert passed.status_code == failed.status_code == 200
    assert passed.json()["label"] == "pass"
    assert passed.json()["request_id"] == "r-pass"
    assert passed.json()["judge"]["tier"] == "llm"
    assert failed.json()["label"] == "fail"
    assert failed.json()["hallucinated"] is True


def test_a_judge_failure_is_an_error_verdict_not_an_http_error(
    api: ServeProcess, llm: FakeLLMServer
) -> None:
    llm.inject(Fault("server_error"))
    reply = check(api, request("Items can be returned within 30 days, unless worn."))
    assert reply.status_code == 200
    assert reply.json()["label"] == "error"
    assert reply.json()["error"]["kind"] == "judge_unavailable"


def test_a_batch_answers_one_verdict_per_request_in_order(api: ServeProcess) -> None:
    items = [request("Returns within 30 days.", id="b1"), request(HALLUCINATION_MARKER, id="b2")]
    reply = check(api, {"requests": items}, path="/v1/check/batch")
    assert reply.status_code == 200
    verdicts = reply.json()["verdicts"]
    assert [(v["request_id"], v["label"]) for v in verdicts] == [("b1", "pass"), ("b2", "fail")]


def test_the_openapi_document_is_served_as_checked_in(api: ServeProcess) -> None:
    served = api.client.get("/openapi.json").json()
    assert served == json.loads((SCHEMA_DIR / "serve.openapi.json").read_text("utf-8"))
    assert {"/v1/check", "/v1/check/batch"} <= set(served["paths"])


# --------------------------------------------------------------------------- deadlines


SLOW_JUDGE_S = 8.0  # the fake LLM's delay for SLOW outputs: far past every deadline below


def past_deadline(server: ServeProcess, llm: FakeLLMServer, output: str) -> dict[str, Any]:
    """The verdict on an output the LLM answers only after SLOW_JUDGE_S, with a 300 ms
    deadline; it must come while the LLM still holds the call (answered without waiting for
    the judge: checked on the fake, not on the clock)."""
    reply = check(
        server,
        request(f"{output} SLOW-{int(SLOW_JUDGE_S * 1000)}"),
        headers={"x-groundguard-deadline-ms": "300"},
    )
    assert reply.status_code == 200
    assert llm.stats()["in_flight"] >= 1  # the judge's call is still unanswered
    verdict: dict[str, Any] = reply.json()
    return verdict


def test_past_the_deadline_the_verdict_is_an_error_and_says_so(
    api: ServeProcess, llm: FakeLLMServer
) -> None:
    verdict = past_deadline(api, llm, "Returns within 30 days.")
    assert verdict["label"] == "error"
    assert verdict["reason"] == verdict["error"]["kind"] == "deadline_exceeded"


def test_under_the_offline_policy_the_offline_verdict_answers_by_the_deadline(
    lenient: ServeProcess, llm: FakeLLMServer
) -> None:
    verdict = past_deadline(lenient, llm, "You can return items within 90 days.")
    assert verdict["label"] == "fail"  # the offline judge sees 90 against 30 days
    assert verdict["judge"]["tier"] == "offline"
    assert verdict["judge"]["fallback_reason"] == "deadline_exceeded"


# --------------------------------------------------------------------------- overload


async def test_past_max_in_flight_a_request_is_shed_at_once_with_retry_after(
    api: ServeProcess,
) -> None:
    headers = {"content-type": "application/json", **authed(), "x-groundguard-deadline-ms": "1500"}
    async with httpx2.AsyncClient(base_url=api.url, headers=headers, timeout=30) as client:
        slow = [
            asyncio.create_task(
                client.post("/v1/check", json=request(f"Returns within 30 days. SLOW-3000 #{n}"))
            )
            for n in range(MAX_IN_FLIGHT)
        ]
        await _until_in_flight(client, MAX_IN_FLIGHT)
        shed = await client.post("/v1/check", json=request("Returns within 30 days."))
        queued = all(task.done() for task in slow)  # answered only after the slow ones?
        held = await asyncio.gather(*slow)
        metrics = (await client.get("/metrics")).text
    assert shed.status_code == 429
    assert shed.headers["retry-after"] == "1"
    assert shed.json()["error"]["code"] == "overloaded"
    assert not queued  # refused at once, while the slow ones were still being judged
    assert [r.json()["reason"] for r in held] == ["deadline_exceeded"] * MAX_IN_FLIGHT
    assert 'groundguard_serve_shed_total{reason="overloaded"} 1.0' in metrics
    assert 'outcome="deadline_exceeded",route="check"' in metrics
    assert "groundguard_serve_in_flight 0.0" in metrics


async def _until_in_flight(client: httpx2.AsyncClient, want: int) -> None:
    for _ in range(200):
        text = (await client.get("/metrics")).text
        if f"groundguard_serve_in_flight {float(want)}" in text:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never {want} requests in flight")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("body", "headers", "status", "field"),
    [
        (b'{"output": "x",', {}, 400, "body"),
        (b"[1, 2]", {}, 400, "body"),
        (b'{"output": 3, "context": "c"}', {}, 422, "output"),
        (b'{"context": "c"}', {}, 422, "output"),
        (b'{"output": "x", "messages": [{"role": "boss", "content": "y"}]}', {}, 422,
         "messages.0.role"),
        (b'{"output": "' + b"x" * MAX_BODY + b'"}', {}, 413, "body"),
        (b'{"output": "x"}', {"x-groundguard-deadline-ms": "soon"}, 400,
         "x-groundguard-deadline-ms"),
        (b'{"output": "x"}', {"content-type": "text/csv"}, 415, "content-type"),
        (b'{"output": "x"}', {"authorization": ""}, 401, "authorization"),
        (b'{"output": "x"}', {"authorization": "Basic dXNlcjpwYXNz"}, 401, "authorization"),
        (b'{"output": "x"}', authed(OTHER_KEY), 401, "authorization"),
    ],
)  # fmt: skip
def test_bad_input_is_a_4xx_naming_the_field(
    api: ServeProcess, body: bytes, headers: dict[str, str], status: int, field: str
) -> None:
    reply = check(api, body, headers=headers)
    assert reply.status_code == status, reply.text
    assert reply.json()["error"]["field"] == field


def test_a_bad_batch_item_is_named_by_its_index(api: ServeProcess) -> None:
    items = [request("fine"), {"output": "x", "context": 7}]
    reply = check(api, {"requests": items}, path="/v1/check/batch")
    assert reply.status_code == 422
    assert reply.json()["error"]["field"] == "requests.1.context"


def test_without_a_key_the_api_refuses_but_probes_answer(api: ServeProcess) -> None:
    reply = api.client.post("/v1/check", json=request("x"))
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"].startswith("Bearer")
    assert api.client.get("/readyz").json()["ok"] is True
    assert api.client.get("/healthz").status_code == 200


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_FIELDS = st.sampled_from(["output", "context", "messages", "id", "metadata", "context_field"])
_HOSTILE = st.one_of(
    st.binary(max_size=200),
    _JSON.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(_FIELDS, _JSON, max_size=4).map(lambda v: json.dumps(v).encode()),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=_HOSTILE, batch=st.booleans())
def test_hostile_bodies_never_get_a_5xx(api: ServeProcess, body: bytes, batch: bool) -> None:
    path = "/v1/check/batch" if batch else "/v1/check"
    reply = check(api, body, path=path, headers={"x-groundguard-deadline-ms": "2000"})
    assert reply.status_code in (200, 400, 413, 415, 422), reply.text
    if reply.status_code != 200:
        assert reply.json()["error"]["code"]


def test_api_keys_never_reach_the_log(api: ServeProcess) -> None:
    for key in (API_KEY, OTHER_KEY):
        check(api, request("Returns within 30 days."), headers=authed(key))
    text = api.log_text()
    assert "serve.refused" in text  # the refusals were logged (at debug)
    assert API_KEY not in text
    assert OTHER_KEY not in text
    assert LLM_KEY not in text


# --------------------------------------------------------------------------- shutdown (last)


async def test_sigterm_finishes_requests_in_flight_then_exits_0(lenient: ServeProcess) -> None:
    async with httpx2.AsyncClient(base_url=lenient.url, timeout=30) as client:
        in_flight = asyncio.create_task(
            client.post(
                "/v1/check",
                json=request("You can return items within 30 days. SLOW-1500"),
                headers={"x-groundguard-deadline-ms": "10000"},
            )
        )
        await _until_in_flight(client, 1)
        lenient.terminate()
        reply = await in_flight
    assert reply.status_code == 200
    assert reply.json()["label"] == "pass"
    assert reply.json()["judge"]["tier"] == "llm"  # the LLM answered: it was not cut short
    assert await asyncio.to_thread(lenient.wait, 20) == 0
    with pytest.raises(httpx2.ConnectError):
        httpx2.get(lenient.url + "/healthz", timeout=5)
    events = [e["event"] for e in lenient.events()]
    assert events.index("serve.draining") < events.index("serve.stopped")


def test_key_file_path_is_a_setting(tmp_path: Path) -> None:
    """A missing key file fails at start naming the setting (exit 2), before any request."""
    env = {"GROUNDGUARD_SERVE__API_KEYS_FILE": str(tmp_path / "absent")}
    done = subprocess.run(
        [sys.executable, "-m", "consumers", "serve"],
        env={**_base_env(), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "serve.api_keys_file" in done.stderr


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}

"""POST /v1/labels on a real `groundguard serve`: a reviewer's label teaches its cascade."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.serveproc import ServeProcess

EVIDENCE = "Our return policy allows returns within 30 days."


@pytest.fixture(scope="module")
def learning(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, Path]]:
    home = tmp_path_factory.mktemp("serve-labels")
    state = home / "calibration.jsonl"
    env = {
        "GROUNDGUARD_JUDGE__TIERS": '[{"kind": "offline"}, {"kind": "fake"}]',
        "GROUNDGUARD_JUDGE__CASCADE__LEARN": "true",
        "GROUNDGUARD_JUDGE__CASCADE__SEED": "empty",
        "GROUNDGUARD_JUDGE__CASCADE__STATE_FILE": str(state),
    }
    server = ServeProcess(home / "serve.log", env)
    yield server, state
    server.stop()


def post(server: ServeProcess, path: str, body: object) -> tuple[int, dict[str, object]]:
    response = server.client.post(
        path, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    return response.status_code, response.json()


def test_a_label_replaces_the_llms_label_and_an_unknown_one_is_kept(
    learning: tuple[ServeProcess, Path],
) -> None:
    server, state = learning
    status, verdict = post(
        server, "/v1/check", {"id": "m-1", "output": "Returns within 90 days.", "context": EVIDENCE}
    )
    assert status == 200
    judge = verdict["judge"]
    assert isinstance(judge, dict)
    assert judge["tier_name"] == "fake"
    status, answer = post(server, "/v1/labels", {"request_id": "m-1", "label": "pass"})
    assert (status, answer) == (200, {"request_id": "m-1", "applied": True})
    status, answer = post(server, "/v1/labels", {"request_id": "never", "label": "fail"})
    assert (status, answer) == (200, {"request_id": "never", "applied": False})
    metrics = server.client.get("/metrics").text
    assert 'groundguard_labels_total{outcome="applied"} 1.0' in metrics
    assert 'groundguard_labels_total{outcome="unknown"} 1.0' in metrics
    server.stop()  # the state file is written at stop
    records = [json.loads(line) for line in state.read_text().splitlines()]
    assert sum(r["total"] for r in records) == 10  # the reviewer's label, weighing 10


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    home = tmp_path_factory.mktemp("serve-plain")
    server = ServeProcess(home / "serve.log", {})
    yield server
    server.stop()


def test_without_learning_labels_are_409_and_bad_ones_422(plain: ServeProcess) -> None:
    status, answer = post(plain, "/v1/labels", {"request_id": "m-1", "label": "pass"})
    assert status == 409
    assert answer["error"]["code"] == "learning_off"  # type: ignore[index]
    status, answer = post(plain, "/v1/labels", {"request_id": "m-1", "label": "maybe"})
    assert status == 422
    assert answer["error"]["field"] == "label"  # type: ignore[index]

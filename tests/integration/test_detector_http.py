"""The HTTP detector backends (TEI, vLLM) against the shipped loopback fake, over real HTTP.

The fake's rule: P(supported) is the share of the hypothesis's words found in the premise, and a
span model's token is unsupported when its id occurs once in the whole input.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, processors

from guard.detect.backend import Span, SpanInput
from guard.detect.http import DetectorHTTP
from guard.detect.tei import TEIPairBackend
from guard.detect.vllm import VLLMClassifyBackend, VLLMPoolingSpanBackend, VLLMScoreBackend
from guard.errors import (
    ConfigError,
    JudgeError,
    JudgeRejected,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
    RateLimited,
)
from guard.testing.fake_detector_server import DetectorFault, FakeDetectorServer

MODEL = "fake-detector"
# (premise, hypothesis, P(supported) by the fake's rule)
CASES = [
    ("The sky is blue over Paris", "The sky is blue", 1.0),
    ("The sky is blue over Paris", "Grass grows green", 0.0),
    ("Water boils at 100 degrees", "Water freezes", 0.5),
    ("Zürich liegt in der Schweiz", "Zürich liegt in Österreich", 0.75),
]
PAIRS = [(premise, hypothesis) for premise, hypothesis, _ in CASES]
EXPECTED = [p for _, _, p in CASES]

Factory = Callable[..., Any]


@pytest.fixture
def server() -> Iterator[FakeDetectorServer]:
    with FakeDetectorServer() as srv:
        yield srv


@pytest.fixture
async def make() -> AsyncIterator[Factory]:
    """Builds backends and closes them after the test."""
    made: list[Any] = []

    def build(cls: type[Any], url: str, **kwargs: Any) -> Any:
        backend = cls(url, **kwargs)
        made.append(backend)
        return backend

    yield build
    await asyncio.gather(*(backend.aclose() for backend in made))


def tei(make: Factory, url: str, **kwargs: Any) -> TEIPairBackend:
    args: dict[str, Any] = {
        "api_key": None,
        "timeout_s": 5,
        "max_length": 512,
        "supported_label": "supported",
    }
    result: TEIPairBackend = make(TEIPairBackend, url, **{**args, **kwargs})
    return result


def vllm_score(make: Factory, url: str, **kwargs: Any) -> VLLMScoreBackend:
    args: dict[str, Any] = {"model": MODEL, "api_key": None, "timeout_s": 5, "max_length": 512}
    result: VLLMScoreBackend = make(VLLMScoreBackend, url, **{**args, **kwargs})
    return result


def vllm_classify(make: Factory, url: str, **kwargs: Any) -> VLLMClassifyBackend:
    args: dict[str, Any] = {
        "model": MODEL,
        "api_key": None,
        "timeout_s": 5,
        "max_length": 512,
        "supported_label": "supported",
        "pair_separator": "</s></s>",
    }
    result: VLLMClassifyBackend = make(VLLMClassifyBackend, url, **{**args, **kwargs})
    return result


PAIR_BACKENDS = {"tei": tei, "vllm_score": vllm_score, "vllm_classify": vllm_classify}


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --------------------------------------------------------------------------- a tokenizer.json

SPECIAL = ["[UNK]", "[CLS]", "[SEP]"]


def write_tokenizer(path: Path, texts: list[str]) -> Path:
    """A word-level tokenizer.json with BERT-style pair encoding ([CLS] a [SEP] b [SEP])."""
    splitter = pre_tokenizers.Whitespace()
    vocab = {token: i for i, token in enumerate(SPECIAL)}
    for text in texts:
        for word, _ in splitter.pre_tokenize_str(text):
            vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = splitter
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    tokenizer.save(str(path))
    return path


# --------------------------------------------------------------------------- TEI


class TestTEI:
    async def test_scores_batches_in_order(self, server: FakeDetectorServer, make: Factory) -> None:
        """Pairs beyond max_batch go in slices; the scores come back in input order."""
        backend = tei(make, server.base_url, max_batch=3)
        pairs = PAIRS * 3
        assert await backend.score_pairs(pairs) == pytest.approx(EXPECTED * 3)
        stats = server.stats()
        assert sorted(stats["batch_sizes"]) == [3, 3, 3, 3]
        body = server.requests[0]
        assert body["raw_scores"] is False
        assert body["truncate"] is False
        assert all(len(pair) == 2 for pair in body["inputs"])

    async def test_reads_the_supported_label_among_three(self, make: Factory) -> None:
        """A 3-class NLI model: the score of supported_label, wherever TEI's sort puts it."""
        labels = ("contradiction", "entailment", "neutral")
        with FakeDetectorServer(labels=labels, supported_label="entailment") as srv:
            backend = tei(make, srv.base_url, supported_label="entailment")
            assert await backend.score_pairs(PAIRS) == pytest.approx(EXPECTED)

    async def test_check_adopts_the_server_batch_limit(self, make: Factory) -> None:
        with FakeDetectorServer(max_client_batch_size=2) as srv:
            backend = tei(make, srv.base_url)
            await backend.check()
            assert backend.max_batch == 2
            assert await backend.score_pairs(PAIRS) == pytest.approx(EXPECTED)
            assert max(srv.stats()["batch_sizes"]) == 2

    async def test_a_batch_over_the_server_limit_is_rejected_with_its_message(
        self, make: Factory
    ) -> None:
        with FakeDetectorServer(max_client_batch_size=2) as srv:
            backend = tei(make, srv.base_url, max_batch=4)
            with pytest.raises(JudgeRejected, match="maximum allowed batch size 2") as caught:
                await backend.score_pairs(PAIRS)
            assert caught.value.status == 413

    async def test_check_refuses_an_unknown_label(
        self, server: FakeDetectorServer, make: Factory
    ) -> None:
        backend = tei(make, server.base_url, supported_label="entailment")
        with pytest.raises(ConfigError, match="supported_label"):
            await backend.check()

    async def test_check_refuses_a_window_below_max_length(
        self, server: FakeDetectorServer, make: Factory
    ) -> None:
        backend = tei(make, server.base_url, max_length=1024)
        with pytest.raises(ConfigError, match="max_length"):
            await backend.check()

    def test_an_embedding_model_is_no_classifier(self) -> None:
        from guard.detect import tei as tei_module

        with pytest.raises(ConfigError, match="not a classifier"):
            tei_module._labels({"embedding": {"pooling": "cls"}})


# --------------------------------------------------------------------------- vLLM /score


class TestVLLMScore:
    async def test_scores_pairs_in_order(self, server: FakeDetectorServer, make: Factory) -> None:
        backend = vllm_score(make, server.base_url, max_batch=3)
        pairs = PAIRS * 2
        assert await backend.score_pairs(pairs) == pytest.approx(EXPECTED * 2)
        # the slices go concurrently: they arrive in any order, each one whole
        slices = [pairs[i : i + 3] for i in range(0, len(pairs), 3)]
        bodies = server.requests
        sent = sorted((tuple(b["text_1"]), tuple(b["text_2"])) for b in bodies)
        assert sent == sorted(
            (tuple(p for p, _ in chunk), tuple(h for _, h in chunk)) for chunk in slices
        )
        assert all(b["model"] == MODEL and "use_activation" not in b for b in bodies)

    async def test_raw_scores_go_through_a_sigmoid(
        self, server: FakeDetectorServer, make: Factory
    ) -> None:
        backend = vllm_score(make, server.base_url, raw_scores=True)
        scores = await backend.score_pairs(PAIRS)
        assert scores == pytest.approx(EXPECTED, abs=1e-5)
        assert server.requests[0]["use_activation"] is False

    async def test_check_refuses_a_model_not_served(
        self, server: FakeDetectorServer, make: Factory
    ) -> None:
        backend = vllm_score(make, server.base_url, model="other")
        with pytest.raises(ConfigError, match="not served"):
            await backend.check()
        await vllm_score(make, server.base_url).check()

    async def test_a_model_not_served_is_rejected_with_the_server_message(
        self, server: FakeDetectorServer, make: Factory
    ) -> None:
        backend = vllm_score(make, server.base_url, model="other")
        with pytest.raises(JudgeRejected, match="does not exist") as caught:
            await backend.score_pairs(PAIRS)
        assert caught.value.status == 404


# --------------------------------------------------------------------------- vLLM /classify


NLI = ("contradiction", "entailment", "neutral")


class TestVLLMClassify:
    async def test_learns_the_supported_class_from_the_server_labels(self, make: Factory) -> None:
        """No label map: the index of 'entailment' is read from the label vLLM names."""
        with FakeDetectorServer(labels=NLI, supported_label="entailment") as srv:
            backend = vllm_classify(make, srv.base_url, supported_label="entailment")
            assert await backend.score_pairs(PAIRS) == pytest.approx(EXPECTED)
            assert srv.requests[0]["input"][0] == f"{PAIRS[0][0]}</s></s>{PAIRS[0][1]}"

    async def test_unknown_supported_class_is_an_error_never_a_guess(self, make: Factory) -> None:
        with FakeDetectorServer(labels=NLI, supported_label="entailment") as srv:
            backend = vllm_classify(make, srv.base_url, supported_label="entailment")
            with pytest.raises(MalformedJudgeOutput, match="label_map"):
                await backend.score_pairs([PAIRS[1]])  # its top class is not entailment

    async def test_check_learns_the_supported_class(self, make: Factory) -> None:
        """check() pairs a sentence with itself: its top class names the supported one."""
        with FakeDetectorServer(labels=NLI, supported_label="entailment") as srv:
            backend = vllm_classify(make, srv.base_url, supported_label="entailment")
            await backend.check()
            assert await backend.score_pairs([PAIRS[1]]) == pytest.approx([0.0])

    async def test_check_refuses_a_label_the_model_does_not_use(self, make: Factory) -> None:
        with FakeDetectorServer(labels=NLI, supported_label="entailment") as srv:
            backend = vllm_classify(make, srv.base_url, supported_label="supported")
            with pytest.raises(ConfigError, match="label_map"):
                await backend.check()

    async def test_a_label_map_gives_the_class(self, make: Factory) -> None:
        with FakeDetectorServer(labels=NLI, supported_label="entailment") as srv:
            backend = vllm_classify(
                make, srv.base_url, supported_label="entailment", label_map=list(NLI)
            )
            assert await backend.score_pairs([PAIRS[1]]) == pytest.approx([0.0])

    async def test_a_label_map_the_server_contradicts_is_an_error(self, make: Factory) -> None:
        with FakeDetectorServer(labels=NLI, supported_label="entailment") as srv:
            backend = vllm_classify(
                make,
                srv.base_url,
                supported_label="entailment",
                label_map=["entailment", "contradiction", "neutral"],
            )
            with pytest.raises(MalformedJudgeOutput, match="label_map says"):
                await backend.score_pairs(PAIRS)

    async def test_pairs_encoded_with_the_model_tokenizer(
        self, make: Factory, tmp_path: Path
    ) -> None:
        """With a tokenizer.json, each pair is sent as the model's own pair token ids."""
        path = write_tokenizer(tmp_path / "tokenizer.json", [t for pair in PAIRS for t in pair])
        with FakeDetectorServer(sep_token_id=2, special_token_ids={1}) as srv:
            backend = vllm_classify(make, srv.base_url, tokenizer=path, pair_separator=None)
            assert await backend.score_pairs(PAIRS) == pytest.approx(EXPECTED)
            ids = srv.requests[0]["input"][0]
            assert ids[0] == 1
            assert ids.count(2) == 2

    def test_a_pair_needs_a_tokenizer_or_a_separator(self) -> None:
        with pytest.raises(ConfigError, match="tokenizer"):
            VLLMClassifyBackend(
                "http://127.0.0.1:1",
                model=MODEL,
                api_key=None,
                timeout_s=1,
                max_length=512,
                supported_label="supported",
            )


# --------------------------------------------------------------------------- vLLM /pooling

CONTEXT = "Zürich lies in Switzerland and has a lake"
SPAN_ITEMS = [
    # unsupported: "東京 café" (one span: consecutive tokens), at characters 15..22
    SpanInput(CONTEXT, "Where is Zürich?", "Zürich lies in 東京 café"),
    SpanInput(CONTEXT, None, "Zürich has a lake"),  # all supported
    SpanInput(CONTEXT, None, "naïve Zürich has crêpes"),  # two spans: "naïve", "crêpes"
]


@pytest.fixture
def span_tokenizer(tmp_path: Path) -> Path:
    texts = [CONTEXT, "Where is Zürich?"] + [item.answer for item in SPAN_ITEMS]
    return write_tokenizer(tmp_path / "tokenizer.json", texts)


def span_backend(make: Factory, url: str, tokenizer: Path, **kwargs: Any) -> VLLMPoolingSpanBackend:
    args: dict[str, Any] = {
        "model": MODEL,
        "api_key": None,
        "timeout_s": 5,
        "max_length": 64,
        "tokenizer": tokenizer,
    }
    result: VLLMPoolingSpanBackend = make(VLLMPoolingSpanBackend, url, **{**args, **kwargs})
    return result


def texts(item: SpanInput, spans: list[Span]) -> list[str]:
    return [item.answer[span.start : span.end] for span in spans]


class TestVLLMPoolingSpans:
    async def test_unsupported_spans_are_character_offsets_into_non_ascii_answers(
        self, server: FakeDetectorServer, make: Factory, span_tokenizer: Path
    ) -> None:
        backend = span_backend(make, server.base_url, span_tokenizer)
        found = await backend.unsupported_spans(SPAN_ITEMS)
        assert [texts(item, spans) for item, spans in zip(SPAN_ITEMS, found, strict=True)] == [
            ["東京 café"],
            [],
            ["naïve", "crêpes"],
        ]
        assert found[0] == [Span(start=15, end=22, p_unsupported=pytest.approx(0.9))]
        body = server.requests[0]
        assert body["task"] == "token_classify"
        assert all(isinstance(ids, list) for ids in body["input"])

    async def test_order_kept_across_slices_and_raw_logits(
        self, server: FakeDetectorServer, make: Factory, span_tokenizer: Path
    ) -> None:
        backend = span_backend(make, server.base_url, span_tokenizer, max_batch=1, raw_scores=True)
        found = await backend.unsupported_spans(SPAN_ITEMS * 2)
        assert [len(spans) for spans in found] == [1, 0, 2, 1, 0, 2]
        assert server.stats()["batch_sizes"] == [1] * 6
        assert server.requests[0]["use_activation"] is False

    async def test_an_answer_longer_than_the_window_is_rejected(
        self, server: FakeDetectorServer, make: Factory, span_tokenizer: Path
    ) -> None:
        backend = span_backend(make, server.base_url, span_tokenizer, max_length=6)
        with pytest.raises(JudgeRejected, match="max_length"):
            await backend.unsupported_spans(SPAN_ITEMS[:1])
        assert server.stats()["requests_total"] == 0

    @pytest.mark.parametrize("kind", ["wrong_length", "missing_label", "nan", "bad_index"])
    async def test_a_wrong_answer_shape_is_malformed(
        self, server: FakeDetectorServer, make: Factory, span_tokenizer: Path, kind: Any
    ) -> None:
        backend = span_backend(make, server.base_url, span_tokenizer)
        server.inject(DetectorFault(kind))
        with pytest.raises(MalformedJudgeOutput):
            await backend.unsupported_spans(SPAN_ITEMS)

    def test_a_missing_tokenizer_file_is_a_config_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match="tokenizer"):
            VLLMPoolingSpanBackend(
                "http://127.0.0.1:1",
                model=MODEL,
                api_key=None,
                timeout_s=1,
                max_length=64,
                tokenizer=tmp_path / "missing.json",
            )


# --------------------------------------------------------------------------- failures


@pytest.fixture(params=sorted(PAIR_BACKENDS))
def pair_backend(request: pytest.FixtureRequest) -> Callable[..., Any]:
    factory: Callable[..., Any] = PAIR_BACKENDS[request.param]
    return factory


class TestFailures:
    async def test_empty_input_makes_no_call(
        self, server: FakeDetectorServer, make: Factory, pair_backend: Factory
    ) -> None:
        assert await pair_backend(make, server.base_url).score_pairs([]) == []
        assert server.stats()["requests_total"] == 0

    async def test_connection_refused_is_unavailable(
        self, make: Factory, pair_backend: Factory
    ) -> None:
        backend = pair_backend(make, f"http://127.0.0.1:{free_port()}")
        with pytest.raises(JudgeUnavailable, match="cannot reach"):
            await backend.score_pairs(PAIRS)

    async def test_a_server_that_went_down_is_unavailable(
        self, make: Factory, pair_backend: Factory
    ) -> None:
        srv = FakeDetectorServer()
        srv.start()
        backend = pair_backend(make, srv.base_url)
        assert await backend.score_pairs(PAIRS[:1]) == pytest.approx(EXPECTED[:1])
        srv.stop()
        with pytest.raises(JudgeUnavailable):
            await backend.score_pairs(PAIRS[:1])

    async def test_a_hung_server_is_a_timeout(
        self, server: FakeDetectorServer, make: Factory, pair_backend: Factory
    ) -> None:
        backend = pair_backend(make, server.base_url, timeout_s=0.3)
        server.inject(DetectorFault("hang", hang_s=5))
        with pytest.raises(JudgeTimeout, match=r"0\.3s"):
            await backend.score_pairs(PAIRS)

    async def test_a_dropped_connection_is_unavailable(
        self, server: FakeDetectorServer, make: Factory, pair_backend: Factory
    ) -> None:
        server.inject(DetectorFault("drop"))
        with pytest.raises(JudgeUnavailable, match="disconnected"):
            await pair_backend(make, server.base_url).score_pairs(PAIRS)

    @pytest.mark.parametrize(
        ("kind", "error", "status"),
        [
            ("server_error", JudgeUnavailable, 500),
            ("unavailable", JudgeUnavailable, 503),
            ("inference_failed", JudgeUnavailable, 424),
            ("too_large", JudgeRejected, 413),
            ("bad_request", JudgeRejected, 400),
        ],
    )
    async def test_error_statuses_carry_the_server_message(
        self,
        server: FakeDetectorServer,
        make: Factory,
        pair_backend: Factory,
        kind: Any,
        error: type[JudgeError],
        status: int,
    ) -> None:
        server.inject(DetectorFault(kind, retry_after_s=None))
        with pytest.raises(error, match=f"HTTP {status}: ") as caught:
            await pair_backend(make, server.base_url).score_pairs(PAIRS)
        assert caught.value.status == status
        assert caught.value.retriable is (error is JudgeUnavailable)

    @pytest.mark.parametrize("kind", ["overloaded", "rate_limit"])
    async def test_429_is_rate_limited_with_retry_after(
        self, server: FakeDetectorServer, make: Factory, pair_backend: Factory, kind: Any
    ) -> None:
        """The backend does not sleep: the hint goes to the budget layer."""
        backend = pair_backend(make, server.base_url)
        server.inject(DetectorFault(kind, retry_after_s=2))
        with pytest.raises(RateLimited) as caught:
            await backend.score_pairs(PAIRS)
        assert caught.value.retry_after_s == 2.0
        assert server.stats()["requests_total"] == 1
        server.inject(DetectorFault(kind, retry_after_s=None))
        with pytest.raises(RateLimited) as caught:
            await backend.score_pairs(PAIRS)
        assert caught.value.retry_after_s is None

    async def test_503_keeps_its_retry_after(
        self, server: FakeDetectorServer, make: Factory, pair_backend: Factory
    ) -> None:
        server.inject(DetectorFault("unavailable", retry_after_s=3))
        with pytest.raises(JudgeUnavailable) as caught:
            await pair_backend(make, server.base_url).score_pairs(PAIRS)
        assert caught.value.retry_after_s == 3.0

    @pytest.mark.parametrize(
        ("kind", "words"),
        [
            ("malformed", "not JSON"),
            ("wrong_length", "entries for 4 inputs"),
            ("missing_label", "no .*label|not a number|no class probabilities"),
            ("nan", "not finite"),
            ("out_of_range", "outside"),
        ],
    )
    async def test_a_wrong_answer_is_malformed_never_a_score(
        self,
        server: FakeDetectorServer,
        make: Factory,
        pair_backend: Factory,
        kind: Any,
        words: str,
    ) -> None:
        server.inject(DetectorFault(kind))
        with pytest.raises(MalformedJudgeOutput, match=words):
            await pair_backend(make, server.base_url).score_pairs(PAIRS)

    async def test_one_failed_slice_fails_the_call_as_itself(
        self, server: FakeDetectorServer, make: Factory, pair_backend: Factory
    ) -> None:
        """Slices run concurrently; a failure is raised as the JudgeError, not a group."""
        server.inject(DetectorFault("server_error"))
        with pytest.raises(JudgeUnavailable):
            await pair_backend(make, server.base_url, max_batch=1).score_pairs(PAIRS)

    async def test_the_api_key_is_sent_and_never_shown(
        self, make: Factory, pair_backend: Factory
    ) -> None:
        with FakeDetectorServer(api_key="sk-right-key-123") as srv:
            good = pair_backend(make, srv.base_url, api_key="sk-right-key-123")
            assert await good.score_pairs(PAIRS) == pytest.approx(EXPECTED)
            bad = pair_backend(make, srv.base_url, api_key="sk-wrong-key-456")
            with pytest.raises(JudgeRejected) as caught:
                await bad.score_pairs(PAIRS)
            assert caught.value.status == 401
            assert caught.value.stops_intake
            assert "sk-wrong-key-456" not in str(caught.value)


# --------------------------------------------------------------------------- connections


class TestKeepAlive:
    async def test_many_calls_reuse_one_connection(
        self, server: FakeDetectorServer, make: Factory, pair_backend: Factory
    ) -> None:
        backend = pair_backend(make, server.base_url)
        for _ in range(40):
            await backend.score_pairs(PAIRS[:2])
        stats = server.stats()
        assert stats["requests_total"] == 40
        assert stats["connections_total"] == 1

    async def test_concurrent_calls_stay_within_the_pool(
        self, make: Factory, pair_backend: Factory
    ) -> None:
        with FakeDetectorServer(latency_s=0.02) as srv:
            backend = pair_backend(make, srv.base_url, max_connections=4)
            results = await asyncio.gather(*(backend.score_pairs(PAIRS) for _ in range(40)))
            assert all(r == pytest.approx(EXPECTED) for r in results)
            stats = srv.stats()
            assert stats["connections_total"] <= 4
            assert stats["peak_in_flight"] <= 4


class TestConfig:
    @pytest.mark.parametrize("url", ["127.0.0.1:8080", "ftp://host", "http://"])
    def test_a_bad_url_is_a_config_error(self, url: str) -> None:
        with pytest.raises(ConfigError, match="url"):
            DetectorHTTP("tei", url, api_key=None, timeout_s=1)

    def test_bounds_are_config_errors(self) -> None:
        with pytest.raises(ConfigError, match="timeout_s"):
            DetectorHTTP("tei", "http://127.0.0.1:1", api_key=None, timeout_s=0)
        with pytest.raises(ConfigError, match="max_connections"):
            DetectorHTTP("tei", "http://127.0.0.1:1", api_key=None, timeout_s=1, max_connections=0)
        with pytest.raises(ConfigError, match="max_batch"):
            TEIPairBackend(
                "http://127.0.0.1:1",
                api_key=None,
                timeout_s=1,
                max_length=512,
                supported_label="supported",
                max_batch=0,
            )


# --------------------------------------------------------------------------- as a process


def test_the_fake_runs_as_a_process() -> None:
    """``python -m guard.testing.fake_detector_server --port 0`` prints its URL and serves."""
    with subprocess.Popen(
        [sys.executable, "-m", "guard.testing.fake_detector_server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        try:
            _talk_to(proc.stdout.readline().strip())
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def _talk_to(line: str) -> None:
    """Reads the printed URL, then GET /info, POST /_faults and GET /_stats."""
    assert line.startswith("FAKE_DETECTOR_URL=http://127.0.0.1:")
    url = line.split("=", 1)[1]
    with urllib.request.urlopen(f"{url}/info", timeout=5) as response:
        info = json.load(response)
    assert info["model_type"]["classifier"]["id2label"] == {
        "0": "supported",
        "1": "unsupported",
    }
    faults = json.dumps({"faults": [{"kind": "server_error"}]}).encode()
    request = urllib.request.Request(f"{url}/_faults", data=faults, method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.load(response) == {"ok": True}
    with urllib.request.urlopen(f"{url}/_stats", timeout=5) as response:
        assert json.load(response)["requests_total"] == 0

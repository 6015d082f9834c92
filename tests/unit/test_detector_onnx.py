"""The detector judge kind over ONNX Runtime, with the tiny model of guard.testing: loading,
refusing model dirs that cannot work, truncation at the window, span offsets, the judge's
outcome and its failures. The weights are random: these tests prove mechanics, not accuracy."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper
from pydantic import ValidationError

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.decide.assessment import BinaryAssessment
from guard.decide.quotes import quote_occurs
from guard.detect.backend import SpanInput
from guard.detect.judge import DetectorJudge, build_detector
from guard.detect.onnx import OnnxPairBackend, OnnxSpanBackend
from guard.detect.presets import PRESETS, template_problem
from guard.detect.settings import DetectorTier
from guard.errors import (
    ConfigError,
    JudgeError,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
)
from guard.models import JudgeRequest, ScoringMode
from guard.testing import FakeJudge
from guard.testing.tiny_detector import build_tiny_detector

FLAGGED = ["berlin", "zürich", "madrid"]


@pytest.fixture(scope="module")
def pair_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_detector(tmp_path_factory.mktemp("pair"), flagged=FLAGGED)


@pytest.fixture(scope="module")
def span_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_detector(
        tmp_path_factory.mktemp("spans"),
        task="spans",
        flagged=FLAGGED,
        labels=("supported", "hallucinated"),
    )


def tier(model_dir: Path, **changes: Any) -> DetectorTier:
    fields: dict[str, Any] = {
        "kind": "detector",
        "task": "pair",
        "model_dir": model_dir,
        "supported_label": "supported",
    }
    return DetectorTier(**(fields | changes))


def case(
    output: str, context: list[str], *, mode: str = "scale5", question: str = ""
) -> PreparedCase:
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake", mode=mode))
    prepared = guard.prepare(
        JudgeRequest(output=output, context=context, question=question or None)
    )
    assert isinstance(prepared, PreparedCase)
    return prepared


PARIS = ["The tower in Paris opened in 1889.", "It is 330 metres tall and made of iron."]


# ---------------------------------------------------------------- loading


def test_a_pair_and_a_span_model_dir_load(pair_dir: Path, span_dir: Path) -> None:
    pair = OnnxPairBackend(pair_dir, supported_label="supported")
    spans = OnnxSpanBackend(span_dir, supported_label="supported")
    assert (pair.name, pair.max_length, spans.max_length) == ("onnx", 512, 512)
    assert pair.count_tokens("the tower in paris") == 4


def copy(model_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(model_dir, target)
    return target


def rewrite_config(model_dir: Path, **changes: Any) -> None:
    path = model_dir / "config.json"
    config = json.loads(path.read_text()) | changes
    path.write_text(json.dumps({k: v for k, v in config.items() if v is not None}))


def broken(model_dir: Path, how: str) -> None:
    if how.startswith("missing "):
        (model_dir / how.removeprefix("missing ")).unlink()
    elif how == "config not json":
        (model_dir / "config.json").write_text("{not json")
    elif how == "config a list":
        (model_dir / "config.json").write_text("[]")
    elif how == "no id2label":
        rewrite_config(model_dir, id2label=None)
    elif how == "id2label keys not integers":
        rewrite_config(model_dir, id2label={"a": "unsupported", "b": "supported"})
    elif how == "id2label with a gap":
        rewrite_config(model_dir, id2label={"0": "unsupported", "2": "supported"})
    elif how == "labels without the supported one":
        rewrite_config(model_dir, id2label={"0": "LABEL_0", "1": "LABEL_1"})
    elif how == "labels the graph does not give":
        rewrite_config(model_dir, id2label={"0": "a", "1": "supported", "2": "c"})
    elif how == "graph not onnx":
        (model_dir / "model.onnx").write_bytes(b"\x00not a graph")
    elif how == "tokenizer not json":
        (model_dir / "tokenizer.json").write_text("{}")
    elif how == "an input the backend does not give":
        model = onnx.load(str(model_dir / "model.onnx"))
        extra = helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["b", "s"])
        model.graph.input.append(extra)
        onnx.save(model, str(model_dir / "model.onnx"))
    else:
        raise AssertionError(how)


BROKEN = {
    "missing model.onnx": ("model_dir", "model.onnx"),
    "missing tokenizer.json": ("model_dir", "tokenizer.json"),
    "missing config.json": ("model_dir", "config.json"),
    "config not json": ("model_dir", "config.json"),
    "config a list": ("model_dir", "config.json"),
    "no id2label": ("model_dir", "config.json"),
    "id2label keys not integers": ("model_dir", "config.json"),
    "id2label with a gap": ("model_dir", "config.json"),
    "labels without the supported one": ("supported_label", "config.json"),
    "labels the graph does not give": ("model_dir", "model.onnx"),
    "graph not onnx": ("model_dir", "model.onnx"),
    "tokenizer not json": ("model_dir", "tokenizer.json"),
    "an input the backend does not give": ("model_dir", "position_ids"),
}


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_a_model_dir_that_cannot_work_is_a_config_error_naming_the_file(
    how: str, pair_dir: Path, tmp_path: Path
) -> None:
    model_dir = copy(pair_dir, tmp_path)
    broken(model_dir, how)
    field, named = BROKEN[how]
    with pytest.raises(ConfigError) as raised:
        build_detector(tier(model_dir))
    assert raised.value.field == field
    assert named in raised.value.problem
    assert raised.value.fix


def test_a_pair_model_dir_read_as_a_span_model_says_set_task(pair_dir: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        OnnxSpanBackend(pair_dir, supported_label="supported")
    assert raised.value.field == "task"
    assert "task: pair" in raised.value.fix


def test_no_supported_label_anywhere_is_a_config_error(pair_dir: Path) -> None:
    with pytest.raises(ConfigError, match="supported_label"):
        OnnxPairBackend(pair_dir, supported_label=None)


def test_the_window_comes_from_the_setting_the_preset_or_the_model_dir(pair_dir: Path) -> None:
    assert OnnxPairBackend(pair_dir, supported_label="supported", max_length=64).max_length == 64
    preset = tier(pair_dir, preset="minicheck-roberta-large", task=None)
    assert build_detector(preset).backend.max_length == 512  # type: ignore[attr-defined]


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"model_dir": None}, "model_dir"),
        ({"backend": "tei"}, "url"),
        ({"url": "http://tei:8080"}, "url"),
        ({"preset": "no-such-model"}, "preset"),
        ({"preset": "minicheck-flan-t5-large", "task": None}, "preset"),
        ({"task": None}, "task"),
        ({"task": "spans", "backend": "tei", "url": "http://x", "model_dir": None}, "backend"),
        ({"template": "{premise} and {claim}"}, "template"),
        ({"template": "{premise} only"}, "template"),
        ({"task": "spans"}, "template"),
        ({"template_without_question": "{context}"}, "template_without_question"),
    ],
)
def test_settings_that_cannot_work_fail_at_load_naming_the_field_and_the_fix(
    changes: dict[str, Any], field: str, tmp_path: Path
) -> None:
    fields = {"kind": "detector", "task": "pair", "model_dir": tmp_path} | changes
    with pytest.raises(ValidationError) as raised:
        DetectorTier(**fields)
    message = str(raised.value)
    assert f"{field}: " in message
    assert "(fix: " in message


def test_every_preset_that_runs_in_process_has_a_usable_template() -> None:
    for preset in PRESETS.values():
        assert template_problem(preset.template, preset.task) is None, preset.name
        assert preset.card.startswith("https://huggingface.co/")


def test_every_field_of_the_settings_is_described() -> None:
    assert all(f.description for f in DetectorTier.model_fields.values())


# ---------------------------------------------------------------- truncation


def test_a_pair_over_the_window_is_cut_and_reported(pair_dir: Path) -> None:
    backend = OnnxPairBackend(pair_dir, supported_label="supported", max_length=16)
    _, cut = backend.encode("the tower is in paris", "it is free")
    assert not cut
    long, cut = backend.encode("the tower is in paris " * 20, "it is free")
    assert cut
    assert len(long.ids) == 16
    assert long.tokens[-4:] == ["it", "is", "free", "[SEP]"]  # the premise was cut, not this


def test_a_hypothesis_longer_than_the_window_is_cut_too(pair_dir: Path) -> None:
    backend = OnnxPairBackend(pair_dir, supported_label="supported", max_length=16)
    encoding, cut = backend.encode("paris", "the tower is tall " * 10)
    assert cut
    assert len(encoding.ids) <= 16


def test_a_one_text_template_cuts_the_premise_and_keeps_the_hypothesis(pair_dir: Path) -> None:
    backend = OnnxPairBackend(
        pair_dir, supported_label="supported", max_length=20, template="{premise}[SEP]{hypothesis}"
    )
    encoding, cut = backend.encode("the tower is in paris " * 10, "it opened in 1889")
    assert cut
    assert len(encoding.ids) <= 20
    assert encoding.tokens[-6:] == ["[SEP]", "it", "opened", "in", "1889", "[SEP]"]


async def test_the_scores_say_which_pairs_were_cut(pair_dir: Path) -> None:
    backend = OnnxPairBackend(pair_dir, supported_label="supported", max_length=16)
    scores = await backend.score_pairs_marked([("paris", "tall"), ("paris " * 40, "tall")])
    assert [s.cut for s in scores] == [False, True]
    assert all(0.0 <= s.p <= 1.0 for s in scores)
    await backend.aclose()


async def test_scores_do_not_depend_on_what_else_is_in_the_batch(pair_dir: Path) -> None:
    backend = OnnxPairBackend(pair_dir, supported_label="supported")
    pairs = [("the tower is in paris", "it is in berlin"), ("paris " * 30, "the tower")]
    together = await backend.score_pairs(pairs)
    alone = [(await backend.score_pairs([pair]))[0] for pair in pairs]
    assert together == pytest.approx(alone, abs=1e-6)  # padding is masked out
    await backend.aclose()


# ---------------------------------------------------------------- spans


async def spans_of(span_dir: Path, answer: str) -> list[str]:
    backend = OnnxSpanBackend(span_dir, supported_label="supported")
    (result,) = await backend.spans_marked([SpanInput("passage 1: some context", None, answer)])
    await backend.aclose()
    return [answer[s.start : s.end] for s in result.spans]


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        ("Der Müller aus Zürich sah 🙂 das ﬁne Café.", ["Zürich"]),
        ("東京 und ZÜRICH, dann Madrid!", ["ZÜRICH", "Madrid"]),
        ("Zu\u0308rich (decomposed) and Berlin.", ["Zu\u0308rich", "Berlin"]),
        ("Bеrlin with a Cyrillic е is another word.", []),
        ("The tower is in Paris.", []),
    ],
)
async def test_span_offsets_are_character_offsets_into_the_answer(
    span_dir: Path, answer: str, flagged: list[str]
) -> None:
    assert await spans_of(span_dir, answer) == flagged


async def test_consecutive_unsupported_tokens_merge_into_one_span(span_dir: Path) -> None:
    assert await spans_of(span_dir, "From Berlin  Madrid, then Zürich.") == [
        "Berlin  Madrid",
        "Zürich",
    ]


async def test_an_answer_longer_than_the_window_is_cut_and_reported(span_dir: Path) -> None:
    backend = OnnxSpanBackend(span_dir, supported_label="supported", max_length=16)
    answer = "paris is the capital " * 10 + "berlin"
    (result,) = await backend.spans_marked([SpanInput("context", None, answer)])
    assert result.cut
    assert all(s.end <= len(answer) for s in result.spans)
    await backend.aclose()


# ---------------------------------------------------------------- the judge


async def test_the_pair_judge_scores_each_sentence_and_the_output_by_its_worst(
    pair_dir: Path,
) -> None:
    judge = build_detector(tier(pair_dir))
    outcome = await judge.assess(case("The tower is in Paris. It opened in Berlin.", PARIS))
    assert (outcome.provider, outcome.model, outcome.tier) == (
        "detector",
        pair_dir.name,
        "detector",
    )
    claims = outcome.assessment.claims
    assert [c.claim for c in claims] == ["The tower is in Paris.", "It opened in Berlin."]
    assert [c.supported for c in claims] == [True, False]  # "berlin" is flagged
    assert outcome.grounded_p is not None
    assert outcome.grounded_p < 0.5
    assert outcome.confidence == max(outcome.grounded_p, 1 - outcome.grounded_p)
    assert "none cut at the window" in outcome.assessment.explanation
    await judge.aclose()


async def test_a_supported_sentence_quotes_its_best_chunk_verbatim(pair_dir: Path) -> None:
    judge = build_detector(tier(pair_dir))
    prepared = case("The tower is in Paris.", PARIS)
    outcome = await judge.assess(prepared)
    (claim,) = outcome.assessment.claims
    assert claim.supported
    assert claim.evidence_quote is not None
    assert quote_occurs(claim.evidence_quote, prepared.evidence)
    await judge.aclose()


async def test_binary_mode_fails_when_a_sentence_is_unsupported(pair_dir: Path) -> None:
    judge = build_detector(tier(pair_dir))
    outcome = await judge.assess(case("It opened in Madrid.", PARIS, mode="binary"))
    assert isinstance(outcome.assessment, BinaryAssessment)
    assert outcome.assessment.grounded is False
    await judge.aclose()


async def test_the_explanation_names_what_was_cut_at_the_window(pair_dir: Path) -> None:
    judge = build_detector(tier(pair_dir, max_length=16))
    outcome = await judge.assess(case("The tower is in Paris " * 6 + ".", PARIS))
    assert "cut at the 16-token window" in outcome.assessment.explanation
    await judge.aclose()


async def test_the_span_judge_makes_spans_unsupported_claims(span_dir: Path) -> None:
    span_tier = tier(span_dir, task=None, preset="lettucedetect-base-modernbert")
    judge = build_detector(span_tier)
    outcome = await judge.assess(
        case("The tower is in Paris. It opened in Zürich in 1889.", PARIS, question="Where?")
    )
    claims = outcome.assessment.claims
    assert [(c.claim, c.supported) for c in claims] == [
        ("Zürich", False),
        ("The tower is in Paris.", True),
    ]
    assert outcome.model == "lettucedetect-base-modernbert"
    assert outcome.grounded_p is not None
    assert outcome.grounded_p < 0.5
    await judge.aclose()


class CountingBackend:
    """A pair backend that does not report cuts: every call recorded, answers scripted."""

    name = "fake"
    max_length = 512

    def __init__(self, answer: float | None = 0.8, *, error: Exception | None = None) -> None:
        self.calls: list[int] = []
        self.answer = answer
        self.error = error
        self.delay_s = 0.0

    async def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(len(pairs))
        await asyncio.sleep(self.delay_s)
        if self.error is not None:
            raise self.error
        return [self.answer] * len(pairs)  # type: ignore[list-item]

    async def aclose(self) -> None:
        pass


def fake_judge(backend: CountingBackend, tmp_path: Path, **changes: Any) -> DetectorJudge:
    return DetectorJudge(tier(tmp_path, **({"batch_wait_ms": 50} | changes)), backend)


async def test_concurrent_messages_share_one_backend_call(tmp_path: Path) -> None:
    backend = CountingBackend()
    judge = fake_judge(backend, tmp_path)
    cases = [case(f"The tower is {n} metres tall.", PARIS) for n in range(8)]
    outcomes = await asyncio.gather(*(judge.assess(c) for c in cases))
    assert backend.calls == [8]  # one sentence and one chunk each
    assert all(o.grounded_p == pytest.approx(0.8) for o in outcomes)
    await judge.aclose()


async def test_a_backend_error_is_the_judge_error_never_a_pass(tmp_path: Path) -> None:
    judge = fake_judge(CountingBackend(error=JudgeUnavailable("tei down")), tmp_path)
    with pytest.raises(JudgeUnavailable, match="tei down"):
        await judge.assess(case("The tower is in Paris.", PARIS))
    await judge.aclose()


async def test_a_slow_backend_is_a_timeout(tmp_path: Path) -> None:
    backend = CountingBackend()
    backend.delay_s = 5.0
    judge = fake_judge(backend, tmp_path, timeout_s=0.05, batch_wait_ms=0)
    with pytest.raises(JudgeTimeout):
        await judge.assess(case("The tower is in Paris.", PARIS))
    await judge.aclose()


@pytest.mark.parametrize("answer", [1.5, -0.1, float("nan"), None])
async def test_an_answer_that_is_no_probability_is_malformed(
    answer: float | None, tmp_path: Path
) -> None:
    judge = fake_judge(CountingBackend(answer), tmp_path, batch_wait_ms=0)
    with pytest.raises(MalformedJudgeOutput):
        await judge.assess(case("The tower is in Paris.", PARIS))
    await judge.aclose()


async def test_a_message_needing_more_inputs_than_allowed_is_an_error(tmp_path: Path) -> None:
    judge = fake_judge(CountingBackend(), tmp_path, max_inputs=2)
    with pytest.raises(JudgeError, match="max_inputs"):
        await judge.assess(case("One. Two. Three.", PARIS))
    await judge.aclose()


async def test_a_backend_without_cut_reports_is_estimated_by_characters(tmp_path: Path) -> None:
    backend = CountingBackend()
    backend.max_length = 32
    judge = fake_judge(backend, tmp_path, batch_wait_ms=0)
    outcome = await judge.assess(case("The tower is in Paris " * 6 + ".", PARIS))
    assert "cut at the 32-token window" in outcome.assessment.explanation
    await judge.aclose()


def test_an_http_backend_without_its_model_name_is_a_config_error() -> None:
    http = DetectorTier(kind="detector", task="pair", backend="vllm_score", url="http://vllm:8000")
    with pytest.raises(ConfigError) as raised:
        build_detector(http)
    assert raised.value.field == "model"


def test_scale5_mode_is_the_default(pair_dir: Path) -> None:
    assert case("x.", PARIS).mode is ScoringMode.SCALE5


@pytest.mark.parametrize("task", ["pair", "spans"])
async def test_no_evidence_text_makes_every_sentence_unsupported(
    task: str, pair_dir: Path, span_dir: Path
) -> None:
    changes = {"task": None, "preset": "lettucedetect-base-modernbert"} if task == "spans" else {}
    judge = build_detector(tier(span_dir if task == "spans" else pair_dir, **changes))
    empty = replace(case("The tower is in Paris.", PARIS), passages=(), evidence="")
    outcome = await judge.assess(empty)
    assert outcome.grounded_p == 0.0
    assert [c.supported for c in outcome.assessment.claims] == [False]
    await judge.aclose()

"""The detector kind as a tier of judge.tiers: every backend end to end (the tiny ONNX model
built here, TEI and vLLM through the loopback fake over real HTTP), and its failures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from guard import Guard, JudgeSettings
from guard.assembly import make_judge
from guard.detect.presets import PRESETS
from guard.errors import ConfigError
from guard.models import JudgeRequest, Label, Verdict
from guard.testing.fake_detector_server import DetectorFault, FakeDetectorServer
from guard.testing.tiny_detector import build_tiny_detector

EVIDENCE = "Paris is the capital city of France. The tower was built in 1889."
GROUNDED = "Paris is the capital city of France."
UNGROUNDED = "Madrid hosts Germany museums yearly."


@pytest.fixture
def server() -> Iterator[FakeDetectorServer]:
    with FakeDetectorServer() as srv:
        yield srv


def settings_with(detector: dict[str, Any]) -> JudgeSettings:
    return JudgeSettings.model_validate(
        {"tiers": [{"kind": "detector", "name": "det", **detector}, {"kind": "fake"}]}
    )


async def judged(settings: JudgeSettings, output: str) -> Verdict:
    guard = Guard(make_judge(settings, {}), settings)
    try:
        return await guard.judge(JudgeRequest(output=output, context=EVIDENCE))
    finally:
        await guard.aclose()


async def test_an_onnx_detector_tier_reads_every_message_and_decides_inside_its_bounds(
    tmp_path: Path,
) -> None:
    model = build_tiny_detector(tmp_path / "pair")
    settings = settings_with(
        {"backend": "onnx", "model_dir": str(model), "task": "pair",
         "supported_label": "supported", "pass_at": 0.0, "fail_at": 1.0}
    )  # fmt: skip
    verdict = await judged(settings, GROUNDED)
    assert (verdict.judge.tier, verdict.judge.tier_name) == ("detector", "det")
    (reading,) = verdict.judge.tiers
    assert reading.decided
    assert reading.grounded_p is not None
    assert 0.0 <= reading.grounded_p <= 1.0
    assert verdict.label in (Label.PASS, Label.FAIL)


async def test_an_onnx_span_tier_reports_unsupported_spans_as_claims(tmp_path: Path) -> None:
    model = build_tiny_detector(tmp_path / "spans", task="spans", flagged=("madrid",))
    settings = settings_with(
        {"backend": "onnx", "model_dir": str(model), "preset": "lettucedetect-base-modernbert",
         "supported_label": "supported", "max_length": 512, "pass_at": 0.0, "fail_at": 1.0}
    )  # fmt: skip
    verdict = await judged(settings, UNGROUNDED)
    assert verdict.judge.tier_name == "det"
    assert verdict.judge.tiers[0].grounded_p is not None


@pytest.mark.parametrize("backend", ["tei", "vllm_score"])
async def test_a_served_pair_detector_passes_the_grounded_and_fails_the_rest(
    server: FakeDetectorServer, backend: str
) -> None:
    settings = settings_with(
        {"backend": backend, "url": server.base_url, "model": server.model,
         "task": "pair", "supported_label": "supported"}
    )  # fmt: skip
    good = await judged(settings, GROUNDED)
    assert (good.label, good.judge.tier_name) == (Label.PASS, "det")
    assert good.judge.tiers[0].grounded_p == 1.0
    bad = await judged(settings, UNGROUNDED)
    assert bad.judge.tier_name == "det"
    assert bad.label is Label.FAIL
    assert bad.judge.tiers[0].grounded_p is not None
    assert bad.judge.tiers[0].grounded_p <= 0.1
    assert server.stats()["requests_total"] >= 2


async def test_vllm_classify_and_pooling_read_token_ids_from_the_models_tokenizer(
    tmp_path: Path,
) -> None:
    model = build_tiny_detector(tmp_path / "tok")
    from tokenizers import Tokenizer

    sep = Tokenizer.from_file(str(model / "tokenizer.json")).token_to_id("[SEP]")
    with FakeDetectorServer(sep_token_id=sep) as srv:
        for backend in ("vllm_classify", "vllm_pooling"):
            settings = settings_with(
                {"backend": backend, "url": srv.base_url, "model": srv.model,
                 "model_dir": str(model), "supported_label": "supported",
                 **({"task": "pair"} if backend == "vllm_classify"
                    else {"preset": "lettucedetect-base-modernbert", "max_length": 512}),
                 "pass_at": 0.0, "fail_at": 1.0}
            )  # fmt: skip
            verdict = await judged(settings, GROUNDED)
            assert verdict.judge.tier_name == "det", backend
            assert verdict.judge.tiers[0].error is None, backend


async def test_a_detector_server_down_hands_on_to_the_next_tier_never_a_pass(
    server: FakeDetectorServer,
) -> None:
    settings = settings_with(
        {"backend": "tei", "url": server.base_url, "supported_label": "supported",
         "task": "pair", "pass_at": 0.0, "fail_at": 1.0}
    )  # fmt: skip
    server.inject(DetectorFault("server_error"), times=None)
    verdict = await judged(settings, UNGROUNDED)
    assert verdict.judge.tier_name == "fake"
    reading = verdict.judge.tiers[0]
    assert (reading.decided, reading.grounded_p) == (False, None)
    assert reading.error is not None


def test_a_model_dir_that_does_not_load_fails_at_start_naming_the_file(tmp_path: Path) -> None:
    model = build_tiny_detector(tmp_path / "broken")
    (model / "model.onnx").write_bytes(b"not a model")
    settings = settings_with(
        {"backend": "onnx", "model_dir": str(model), "task": "pair", "supported_label": "supported"}
    )
    with pytest.raises(ConfigError, match=r"model\.onnx"):
        make_judge(settings, {})


def test_a_one_text_template_is_refused_over_http(server: FakeDetectorServer) -> None:
    settings = settings_with(
        {"backend": "tei", "url": server.base_url, "preset": "factcg-deberta-v3-large"}
    )
    with pytest.raises(ConfigError, match="one templated text"):
        make_judge(settings, {})


@pytest.mark.parametrize("name", sorted(PRESETS))
async def test_every_preset_loads_renders_and_maps_its_labels_with_a_tiny_model(
    name: str, tmp_path: Path
) -> None:
    """Mechanics only (random weights): each preset's template renders, its window cuts and
    its supported label is found in the model's label map; a preset that cannot run in
    process is refused at start."""
    preset = PRESETS[name]
    label = preset.supported_label or "LABEL_1"
    labels = ("LABEL_0", "LABEL_1") if label in ("LABEL_0", "LABEL_1") else ("other", label)
    model = build_tiny_detector(
        tmp_path / name, task=preset.task, labels=labels, supported_label=label
    )
    fields = {"backend": "onnx", "model_dir": str(model), "preset": name, "max_length": 128,
              "pass_at": 0.0, "fail_at": 1.0}  # fmt: skip
    if not preset.in_process:
        with pytest.raises((ConfigError, ValidationError)):
            make_judge(settings_with(fields), {})
        return
    settings = settings_with(fields)
    verdict = await judged(settings, GROUNDED + " " + UNGROUNDED)
    assert verdict.judge.tier_name == "det", verdict.explanation
    assert verdict.judge.tiers[0].error is None


async def test_inputs_cut_at_the_models_window_are_counted_in_the_verdict(tmp_path: Path) -> None:
    model = build_tiny_detector(tmp_path / "short", max_length=16)
    settings = settings_with(
        {"backend": "onnx", "model_dir": str(model), "task": "pair",
         "supported_label": "supported", "max_length": 16, "pass_at": 0.0, "fail_at": 1.0}
    )  # fmt: skip
    long_output = "Paris is the capital city of France and the tower was built in 1889 there."
    verdict = await judged(settings, long_output)
    assert verdict.judge.tier_name == "det"
    assert verdict.judge.window_cuts > 0
    assert verdict.judge.tiers[0].window_cuts == verdict.judge.window_cuts
    alone = JudgeSettings.model_validate({"tiers": settings.model_dump()["tiers"][:1]})
    assert (await judged(alone, long_output)).judge.window_cuts > 0  # one tier: said too

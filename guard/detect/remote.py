"""A detector tier's HTTP backend (TEI, vLLM) from its settings.

Servers read a (premise, hypothesis) pair the way the model's tokenizer pairs two texts, so a
pair model served over HTTP takes the two-text ``pair`` template; a preset whose model reads
one templated text (FactCG, HHEM, the MiniCheck variants) runs in process (``backend: onnx``).
vLLM's ``/classify`` and ``/pooling`` read token ids: they need the model's ``tokenizer.json``,
from ``model_dir``.
"""

from __future__ import annotations

from pathlib import Path

from guard.detect.backend import PairBackend, SpanBackend, SpanInput
from guard.detect.settings import DetectorTier
from guard.errors import ConfigError

DEFAULT_HTTP_MAX_LENGTH = 512  # a model's window when neither the preset nor the tier says


def _key(tier: DetectorTier) -> str | None:
    return tier.api_key.get_secret_value() if tier.api_key else None


def _tokenizer(tier: DetectorTier) -> Path:
    if tier.model_dir is None:
        raise ConfigError(
            "model_dir",
            f"{tier.backend} reads token ids: it needs the model's tokenizer.json",
            "set model_dir to a directory holding the served model's tokenizer.json",
        )
    path = tier.model_dir / "tokenizer.json"
    if not path.is_file():
        raise ConfigError(
            "model_dir", f"{path} does not exist", "copy the served model's tokenizer.json there"
        )
    return path


def _required(value: str | None, field: str, fix: str) -> str:
    if not value:
        raise ConfigError(field, "is required for this backend", fix)
    return value


def build_backend(tier: DetectorTier) -> PairBackend | SpanBackend:
    """The HTTP backend of ``tier`` (its settings were validated: ``url`` is set)."""
    spec = tier.spec()
    url = _required(tier.url, "url", "give the server's root URL, e.g. http://127.0.0.1:8080")
    length = spec.max_length or DEFAULT_HTTP_MAX_LENGTH
    key, timeout = _key(tier), tier.timeout_s
    if spec.task == "pair" and spec.template != "pair":
        raise ConfigError(
            "backend",
            f"the {tier.preset or 'given'} template reads one templated text; servers pair two",
            "use backend onnx for this model, or a model served as a cross-encoder",
        )
    label = spec.supported_label
    if tier.backend == "tei":
        from guard.detect.tei import TEIPairBackend

        supported = _required(label, "supported_label", "name the label meaning supported")
        return TEIPairBackend(
            url,
            supported_label=supported,
            model=tier.model,
            max_batch=tier.batch_size,
            api_key=key,
            timeout_s=timeout,
            max_length=length,
        )
    from guard.detect import vllm

    model = _required(tier.model, "model", "give the served model's name (GET /v1/models)")
    if tier.backend == "vllm_score":
        return vllm.VLLMScoreBackend(
            url,
            model=model,
            max_batch=tier.batch_size,
            api_key=key,
            timeout_s=timeout,
            max_length=length,
        )
    if tier.backend == "vllm_classify":
        supported = _required(label, "supported_label", "name the label meaning supported")
        return vllm.VLLMClassifyBackend(
            url,
            model=model,
            supported_label=supported,
            tokenizer=_tokenizer(tier),
            max_batch=tier.batch_size,
            api_key=key,
            timeout_s=timeout,
            max_length=length,
        )
    return vllm.VLLMPoolingSpanBackend(
        url,
        model=model,
        tokenizer=_tokenizer(tier),
        prompt=_as_rendered,
        max_batch=tier.batch_size,
        api_key=key,
        timeout_s=timeout,
        max_length=length,
    )


def _as_rendered(item: SpanInput) -> str:
    """The judge renders a span model's first text itself (:mod:`guard.detect.prompts`)."""
    return item.context

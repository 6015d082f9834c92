"""The ``detector`` judge: a small groundedness model as a tier of the cascade.

:class:`DetectorJudge` implements :class:`guard.providers.base.Judge`. A pair model reads each
sentence of the output against each evidence chunk (:mod:`guard.detect.pairs`), a span model
the answer against the evidence (:mod:`guard.detect.spans`); the judge's outcome carries the
grounded probability (``grounded_p``, what the tier's ``pass_at``/``fail_at`` compare), one claim
per sentence or flagged span, confidence ``max(p, 1 - p)``, and an explanation that says what
was cut at the model's window. Any failure is a :class:`guard.errors.JudgeError` (the backend's,
``JudgeTimeout`` after ``timeout_s``, ``MalformedJudgeOutput`` for an answer that is no
probability): never a pass.

:func:`build_detector` makes the judge of a :class:`~guard.detect.settings.DetectorTier`; the
HTTP backends' modules (``guard.detect.tei``, ``guard.detect.vllm``) are imported only when a
tier names them, and must expose ``build_backend(tier) -> PairBackend | SpanBackend``.
"""

from __future__ import annotations

from typing import Any, cast

from guard.case import PreparedCase
from guard.detect.backend import PairBackend, SpanBackend
from guard.detect.chunking import TokenCounter, estimate_tokens
from guard.detect.pairs import PairReader
from guard.detect.presets import PAIR, render_pair
from guard.detect.reading import Reading
from guard.detect.settings import HTTP_IN_FLIGHT, DetectorTier
from guard.detect.spans import SpanReader
from guard.errors import ConfigError
from guard.models import Usage
from guard.providers.base import Judge, JudgeOutcome
from guard.tiers.assess import assessment_from_p

ESTIMATED_SPECIALS = 4  # special tokens of one input, when the backend cannot count them


class DetectorJudge:
    """Implements :class:`guard.providers.base.Judge` with a detector backend."""

    provider = "detector"

    def __init__(self, tier: DetectorTier, backend: PairBackend | SpanBackend) -> None:
        self.model = tier.model_name
        self.backend = backend
        self.reader = _reader(tier, backend)

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        reading = await self.reader.read_case(case)
        p = min(1.0, max(0.0, reading.grounded_p))
        explanation = self._explain(reading)
        return JudgeOutcome(
            assessment=assessment_from_p(p, case.mode, reading.claims, explanation),
            provider=self.provider,
            model=self.model,
            usage=Usage(),
            tier="detector",
            confidence=max(p, 1.0 - p),
            grounded_p=p,
            window_cuts=reading.cut,
        )

    def _explain(self, reading: Reading) -> str:
        said = f"detector {self.model}: {reading.finding}"
        if not reading.cut:
            return f"{said}; {reading.inputs} input(s), none cut at the window"
        return (
            f"{said}; {reading.cut} of {reading.inputs} input(s) cut at the "
            f"{self.backend.max_length}-token window (the evidence or sentence beyond it "
            "was not read)"
        )

    async def aclose(self) -> None:
        try:
            await self.reader.aclose()
        finally:
            await self.backend.aclose()


def _reader(tier: DetectorTier, backend: PairBackend | SpanBackend) -> PairReader | SpanReader:
    spec = tier.spec()
    count = _counter(backend)
    shared: dict[str, Any] = {
        "count": count,
        "offsets": _method(backend, "token_offsets"),
        "max_inputs": tier.max_inputs,
        "batch_size": tier.batch_size,
        "batch_wait_s": tier.batch_wait_ms / 1000,
        "timeout_s": tier.timeout_s,
        "in_flight": 1 if tier.backend == "onnx" else HTTP_IN_FLIGHT,
    }
    if spec.task == "pair":
        overhead = _overhead(backend, spec.template, count)
        return PairReader(cast(PairBackend, backend), overhead=overhead, **shared)
    overhead = _overhead(backend, PAIR, count)
    return SpanReader(cast(SpanBackend, backend), spec, overhead=overhead, **shared)


def _counter(backend: object) -> TokenCounter:
    """The backend's own token count (a tokenizer at hand), else characters / 4."""
    return cast(TokenCounter, _method(backend, "count_tokens") or estimate_tokens)


def _method(backend: object, name: str) -> Any:
    """The backend's optional method ``name`` (the ONNX backend's tokenizer), or None."""
    found = getattr(backend, name, None)
    return found if callable(found) else None


def _overhead(backend: object, template: str, count: TokenCounter) -> int:
    """Tokens an input takes besides its texts, by the backend when it can say."""
    overhead = getattr(backend, "overhead_tokens", None)
    if callable(overhead):
        return int(overhead())
    frame = 0 if template == PAIR else count(render_pair(template, "", ""))
    return frame + ESTIMATED_SPECIALS


def build_detector(tier: DetectorTier) -> Judge:
    """The judge of ``tier``: its backend built (a model dir loaded, or a client made)."""
    return DetectorJudge(tier, build_backend(tier))


def build_backend(tier: DetectorTier) -> PairBackend | SpanBackend:
    """``tier``'s backend. Raises :class:`~guard.errors.ConfigError` when it cannot be made."""
    if tier.backend != "onnx":
        return _http_backend(tier)
    try:
        from guard.detect import onnx
    except ImportError as exc:
        raise ConfigError(
            "backend",
            f"onnx needs onnxruntime and tokenizers ({exc})",
            "pip install 'groundguard[detector]'",
        ) from exc
    spec, model_dir = tier.spec(), tier.model_dir
    assert model_dir is not None  # the settings require it for onnx
    label, length, threads = spec.supported_label, spec.max_length, tier.threads
    if spec.task == "pair":
        return onnx.OnnxPairBackend(
            model_dir,
            template=spec.template,
            supported_label=label,
            max_length=length,
            threads=threads,
        )
    return onnx.OnnxSpanBackend(
        model_dir, supported_label=label, max_length=length, threads=threads
    )


def _http_backend(tier: DetectorTier) -> PairBackend | SpanBackend:
    from guard.detect.remote import build_backend as remote

    return remote(tier)

"""A pair classifier served by Hugging Face Text Embeddings Inference (TEI): ``POST /predict``.

Request (TEI's ``PredictRequest``): ``{"inputs": [[premise, hypothesis], ...],
"raw_scores": false, "truncate": bool}``; the answer to a batch is one list per input of
``{"label", "score"}`` for every class, sorted by score (TEI applies a sigmoid to a one-label
model and a softmax otherwise unless ``raw_scores``). The score of ``supported_label`` is
P(supported).

TEI refuses more than ``--max-client-batch-size`` inputs per request (default 32, HTTP 413), so
pairs go in slices of ``max_batch``, sent concurrently; :meth:`TEIPairBackend.check` lowers it
to the server's own limit read from ``GET /info``, and checks that the model is a classifier
with ``supported_label`` among its labels and a window of at least ``max_length`` tokens.

``truncate`` is off by default: a pair longer than the model's window is TEI's 413 (a
:class:`~guard.errors.JudgeRejected` naming the length) rather than a verdict on a text the
model did not read in full; the judge sizes evidence chunks to ``max_length``. With
``truncate=True`` TEI cuts the pair itself. Error statuses: 413 (batch or input too large) and
422 (tokenizer) are rejections, 424 (inference failed) is transient, 429 (overloaded) is
:class:`~guard.errors.RateLimited` (see :mod:`guard.detect.http`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from guard.detect.http import (
    DEFAULT_MAX_CONNECTIONS,
    DetectorHTTP,
    check_batch,
    in_batches,
    list_of,
    probability,
)
from guard.errors import ConfigError, MalformedJudgeOutput

TEI_MAX_CLIENT_BATCH = 32  # TEI's default --max-client-batch-size


class TEIPairBackend:
    """Implements :class:`guard.detect.backend.PairBackend` on TEI's ``/predict``."""

    name = "tei"

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None,
        timeout_s: float,
        max_length: int,
        supported_label: str,
        model: str | None = None,
        max_batch: int = TEI_MAX_CLIENT_BATCH,
        truncate: bool = False,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        check_batch(max_batch)
        self.max_length = max_length
        self.supported_label = supported_label
        self.model = model
        self.max_batch = max_batch
        self.truncate = truncate
        self._http = DetectorHTTP(
            self.name, url, api_key=api_key, timeout_s=timeout_s, max_connections=max_connections
        )

    def __repr__(self) -> str:
        return f"TEIPairBackend(model={self.model!r}, supported_label={self.supported_label!r})"

    async def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return await in_batches(pairs, self.max_batch, self._predict)

    async def check(self) -> None:
        """Read ``GET /info``: a :class:`ConfigError` unless the server holds a classifier with
        ``supported_label`` and a window of ``max_length``; adopts its client batch limit."""
        info = await self._http.get("/info")
        if not isinstance(info, dict):
            raise MalformedJudgeOutput("tei: /info is not a JSON object")
        labels = _labels(info.get("model_type"))
        if self.supported_label not in labels:
            raise ConfigError(
                "supported_label",
                f"{self.supported_label!r} is not a label of the served model ({sorted(labels)})",
                "set it to the label that means 'supported' (e.g. entailment)",
            )
        window = info.get("max_input_length")
        if isinstance(window, int) and window < self.max_length:
            raise ConfigError(
                "max_length", f"{self.max_length} is above the server's {window}", f"use {window}"
            )
        limit = info.get("max_client_batch_size")
        if isinstance(limit, int) and limit >= 1:
            self.max_batch = min(self.max_batch, limit)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _predict(self, batch: Sequence[tuple[str, str]]) -> list[float]:
        body = {
            "inputs": [[premise, hypothesis] for premise, hypothesis in batch],
            "raw_scores": False,
            "truncate": self.truncate,
        }
        answer = await self._http.post("/predict", body)
        return [self._supported(row) for row in list_of(answer, len(batch), self.name, "answer")]

    def _supported(self, row: Any) -> float:
        """The score of ``supported_label`` among one input's ``{"label", "score"}`` entries."""
        if not isinstance(row, list):
            raise MalformedJudgeOutput("tei: an input's predictions are not a list")
        for entry in row:
            if isinstance(entry, dict) and entry.get("label") == self.supported_label:
                return probability(entry.get("score"), self.name, f"{self.supported_label} score")
        seen = [entry.get("label") for entry in row if isinstance(entry, dict)]
        raise MalformedJudgeOutput(
            f"tei: no {self.supported_label!r} label in the answer (labels: {seen!r:.120})"
        )


def _labels(model_type: object) -> set[str]:
    """The labels of TEI's ``model_type`` (``{"classifier": {"id2label": {...}}}``)."""
    kind = next(iter(model_type), None) if isinstance(model_type, Mapping) else None
    if kind not in ("classifier", "reranker") or not isinstance(model_type, Mapping):
        raise ConfigError(
            "model", f"TEI serves a {kind!r} model, not a classifier", "serve a pair classifier"
        )
    id2label = model_type[kind].get("id2label") if isinstance(model_type[kind], Mapping) else None
    return {str(label) for label in (id2label or {}).values()}

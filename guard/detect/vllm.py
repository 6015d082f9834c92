"""Detector models served by vLLM's pooling endpoints (``vllm serve <model> --runner pooling``).

* :class:`VLLMScoreBackend` (``vllm_score``): a one-label cross-encoder on ``POST /score`` with
  ``{"model", "text_1": [premise, ...], "text_2": [hypothesis, ...]}`` (lists of one length:
  pair i is ``(text_1[i], text_2[i])``) answered by ``{"data": [{"index", "score"}]}``. The
  score is P(supported): vLLM applies the model's activation (a sigmoid) by default; with
  ``raw_scores=True`` the request says ``"use_activation": false`` and the sigmoid is applied
  here.
* :class:`VLLMClassifyBackend` (``vllm_classify``): a pair classifier on ``POST /classify``,
  answered by ``{"data": [{"index", "label", "probs", "num_classes"}]}``; P(supported) is
  ``probs[i]`` for the class i named ``supported_label``. ``/classify`` reads one text per
  input, so a pair is sent as the token ids of the model's own pair encoding (``tokenizer``, its
  ``tokenizer.json``) or as one text joined by ``pair_separator`` (e.g. ``"</s></s>"`` for a
  RoBERTa model). ``GET /v1/models`` does not carry the label map (its cards hold ``id`` and
  ``max_model_len``), so the class index comes from ``label_map`` or is learned from the
  ``label`` vLLM puts on each answer (the name of the top class); until the supported class has
  been named once, answers are :class:`~guard.errors.MalformedJudgeOutput` asking for
  ``label_map``. An index is never guessed.
* :class:`VLLMPoolingSpanBackend` (``vllm_pooling``): a token classifier on ``POST /pooling``
  with ``{"model", "task": "token_classify", "input": [[token ids], ...]}`` answered by
  ``{"data": [{"index", "data": [[p per class] per token]}]}``. vLLM gives no character
  offsets (``/tokenize`` returns ids and token strings only), so (context, question, answer)
  is encoded here with the model's ``tokenizer.json`` and the answer's unsupported tokens are
  mapped back to character offsets into the answer.

``url`` is the server root (``http://vllm:8000``, no ``/v1``). :meth:`check` reads
``GET /v1/models``: a :class:`~guard.errors.ConfigError` unless ``model`` is served with a
window of at least ``max_length``. Error statuses and shapes: :mod:`guard.detect.http`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from guard.detect.backend import Span, SpanInput
from guard.detect.http import (
    DEFAULT_MAX_CONNECTIONS,
    DetectorHTTP,
    PairEncoding,
    PairTokenizer,
    by_index,
    check_batch,
    in_batches,
    list_of,
    number,
    probability,
    sigmoid,
    softmax,
)
from guard.errors import ConfigError, MalformedJudgeOutput

VLLM_MAX_BATCH = 64  # inputs per request (vLLM has no client limit; this bounds one body)
VLLM_SPAN_MAX_BATCH = 16  # answers per /pooling request (each comes back as a row per token)
DEFAULT_SPAN_THRESHOLD = 0.5  # a token is unsupported at this P(unsupported) or above
_PROBE = "The sky is blue."  # paired with itself by VLLMClassifyBackend.check

LabelMap = Mapping[int, str] | Sequence[str]
Prompt = Callable[[SpanInput], str]


def default_prompt(item: SpanInput) -> str:
    """The first text of a span model's pair: the question (if any), then the context."""
    return f"{item.question}\n\n{item.context}" if item.question else item.context


class _VLLMBackend:
    """The connection and model check the vLLM backends share."""

    name = "vllm"

    def __init__(
        self,
        url: str,
        *,
        model: str,
        api_key: str | None,
        timeout_s: float,
        max_length: int,
        max_batch: int,
        max_connections: int,
    ) -> None:
        check_batch(max_batch)
        if not model:
            raise ConfigError("model", "is empty", "give the name vLLM serves the model under")
        self.model = model
        self.max_length = max_length
        self.max_batch = max_batch
        self._http = DetectorHTTP(
            self.name, url, api_key=api_key, timeout_s=timeout_s, max_connections=max_connections
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    async def check(self) -> None:
        """``GET /v1/models``: a :class:`ConfigError` unless ``model`` is served with a window of
        at least ``max_length`` tokens."""
        listing = await self._http.get("/v1/models")
        cards = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(cards, list):
            raise MalformedJudgeOutput(f"{self.name}: /v1/models has no data list")
        served = {card.get("id"): card for card in cards if isinstance(card, dict)}
        card = served.get(self.model)
        if card is None:
            raise ConfigError(
                "model",
                f"{self.model!r} is not served (served: {sorted(map(str, served))})",
                "set model to the server's --served-model-name",
            )
        window = card.get("max_model_len")
        if isinstance(window, int) and window < self.max_length:
            raise ConfigError(
                "max_length", f"{self.max_length} is above the server's {window}", f"use {window}"
            )

    async def aclose(self) -> None:
        await self._http.aclose()


# --------------------------------------------------------------------------- /score


class VLLMScoreBackend(_VLLMBackend):
    """Implements :class:`guard.detect.backend.PairBackend` on vLLM's ``/score`` (a one-label
    cross-encoder: its one score is P(supported), so it takes no label)."""

    name = "vllm_score"

    def __init__(
        self,
        url: str,
        *,
        model: str,
        api_key: str | None,
        timeout_s: float,
        max_length: int,
        raw_scores: bool = False,
        max_batch: int = VLLM_MAX_BATCH,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        super().__init__(
            url,
            model=model,
            api_key=api_key,
            timeout_s=timeout_s,
            max_length=max_length,
            max_batch=max_batch,
            max_connections=max_connections,
        )
        self.raw_scores = raw_scores

    async def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return await in_batches(pairs, self.max_batch, self._score)

    async def _score(self, batch: Sequence[tuple[str, str]]) -> list[float]:
        body: dict[str, Any] = {
            "model": self.model,
            "text_1": [premise for premise, _ in batch],
            "text_2": [hypothesis for _, hypothesis in batch],
        }
        if self.raw_scores:
            body["use_activation"] = False
        answer = await self._http.post("/score", body)
        data = answer.get("data") if isinstance(answer, dict) else None
        return [self._p(entry.get("score")) for entry in by_index(data, len(batch), self.name)]

    def _p(self, score: object) -> float:
        if self.raw_scores:
            return sigmoid(number(score, self.name, "score"))
        return probability(score, self.name, "score")


# --------------------------------------------------------------------------- /classify


class VLLMClassifyBackend(_VLLMBackend):
    """Implements :class:`guard.detect.backend.PairBackend` on vLLM's ``/classify``."""

    name = "vllm_classify"

    def __init__(
        self,
        url: str,
        *,
        model: str,
        api_key: str | None,
        timeout_s: float,
        max_length: int,
        supported_label: str,
        label_map: LabelMap | None = None,
        tokenizer: str | Path | None = None,
        pair_separator: str | None = None,
        max_batch: int = VLLM_MAX_BATCH,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        if tokenizer is None and not pair_separator:
            raise ConfigError(
                "tokenizer",
                "vllm_classify reads one text per input, so a (premise, hypothesis) pair must be "
                "encoded here",
                "give the model's tokenizer.json, or a pair_separator such as '</s></s>'",
            )
        super().__init__(
            url,
            model=model,
            api_key=api_key,
            timeout_s=timeout_s,
            max_length=max_length,
            max_batch=max_batch,
            max_connections=max_connections,
        )
        self.supported_label = supported_label
        self.pair_separator = pair_separator
        self._tokenizer = (
            None if tokenizer is None else PairTokenizer(tokenizer, max_length, self.name)
        )
        self._labels: dict[int, str] = _label_dict(label_map)
        self._supported = _index_of(self._labels, supported_label)
        if label_map is not None and self._supported is None:
            raise ConfigError(
                "supported_label",
                f"{supported_label!r} is not in label_map ({sorted(self._labels.values())})",
                "name the label that means 'supported'",
            )

    async def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return await in_batches(pairs, self.max_batch, self._classify)

    async def check(self) -> None:
        """The model check of ``/v1/models``; then, with no ``label_map``, one ``/classify`` of
        a sentence paired with itself, whose top class (supported, for any sane model) names
        the supported class. A :class:`ConfigError` if it does not."""
        await super().check()
        if self._supported is not None:
            return
        body = {"model": self.model, "input": [self._input(_PROBE, _PROBE)]}
        answer = await self._http.post("/classify", body)
        data = answer.get("data") if isinstance(answer, dict) else None
        (entry,) = by_index(data, 1, self.name)
        self._learn(_probs(entry, self.name), entry.get("label"))
        if self._supported is None:
            raise ConfigError(
                "label_map",
                f"a sentence paired with itself is not {self.supported_label!r} but "
                f"{entry.get('label')!r}",
                "check supported_label, or give label_map (the model's id2label)",
            )

    async def _classify(self, batch: Sequence[tuple[str, str]]) -> list[float]:
        body = {"model": self.model, "input": [self._input(p, h) for p, h in batch]}
        answer = await self._http.post("/classify", body)
        data = answer.get("data") if isinstance(answer, dict) else None
        rows = [
            (_probs(entry, self.name), entry.get("label"))
            for entry in by_index(data, len(batch), self.name)
        ]
        for probs, label in rows:
            self._learn(probs, label)
        index = self._supported_index(len(rows[0][0]))
        return [probs[index] for probs, _ in rows]

    def _input(self, premise: str, hypothesis: str) -> str | list[int]:
        if self._tokenizer is not None:
            return self._tokenizer.encode(premise, hypothesis).ids
        return f"{premise}{self.pair_separator}{hypothesis}"

    def _learn(self, probs: list[float], label: object) -> None:
        """Record the server's name for the top class; a name that contradicts the known map
        means the map is wrong, and no score is given from it."""
        if not isinstance(label, str):
            return
        top = max(range(len(probs)), key=probs.__getitem__)
        known = self._labels.setdefault(top, label)
        if known != label:
            raise MalformedJudgeOutput(
                f"{self.name}: the server names class {top} {label!r}, label_map says {known!r}"
            )
        if self._supported is None and label == self.supported_label:
            self._supported = top

    def _supported_index(self, classes: int) -> int:
        if self._supported is None:
            raise MalformedJudgeOutput(
                f"{self.name}: which of the {classes} classes is {self.supported_label!r} is not "
                f"known yet (server labels so far: {self._labels}); set label_map"
            )
        if self._supported >= classes:
            raise MalformedJudgeOutput(
                f"{self.name}: {classes} classes, but {self.supported_label!r} is class "
                f"{self._supported}"
            )
        return self._supported


def _probs(entry: Mapping[str, Any], backend: str) -> list[float]:
    """One answer's class probabilities: ``probs`` (documented), else ``probabilities``, else
    a softmax of ``logits``; each checked to be in [0, 1]."""
    values = entry.get("probs") or entry.get("probabilities")
    if values is None and isinstance(entry.get("logits"), list):
        values = softmax([number(x, backend, "logit") for x in entry["logits"]])
    if not isinstance(values, list) or len(values) < 2:
        raise MalformedJudgeOutput(f"{backend}: an answer has no class probabilities")
    return [probability(p, backend, "class probability") for p in values]


def _label_dict(label_map: LabelMap | None) -> dict[int, str]:
    if label_map is None:
        return {}
    if isinstance(label_map, Mapping):
        return {int(index): str(label) for index, label in label_map.items()}
    return dict(enumerate(map(str, label_map)))


def _index_of(labels: Mapping[int, str], wanted: str) -> int | None:
    return next((index for index, label in labels.items() if label == wanted), None)


# --------------------------------------------------------------------------- /pooling spans


class VLLMPoolingSpanBackend(_VLLMBackend):
    """Implements :class:`guard.detect.backend.SpanBackend` on vLLM's ``/pooling`` with the
    ``token_classify`` task.

    Each (context, question, answer) is encoded with ``tokenizer`` as the pair
    (``prompt(item)``, answer); only the first text is cut to fit ``max_length``. A token of the
    answer is unsupported when 1 - P(class ``supported_index``) is at least ``threshold``;
    consecutive unsupported tokens make one :class:`Span` from the first token's start to the
    last one's end (character offsets into the answer), whose ``p_unsupported`` is its tokens'
    highest. ``raw_scores=True``: the server answers logits (``"use_activation": false`` is
    sent) and the softmax is applied here.
    """

    name = "vllm_pooling"

    def __init__(
        self,
        url: str,
        *,
        model: str,
        api_key: str | None,
        timeout_s: float,
        max_length: int,
        tokenizer: str | Path,
        supported_index: int = 0,
        threshold: float = DEFAULT_SPAN_THRESHOLD,
        prompt: Prompt = default_prompt,
        raw_scores: bool = False,
        max_batch: int = VLLM_SPAN_MAX_BATCH,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        if supported_index < 0:
            raise ConfigError("supported_index", "must be 0 or above", "use 0")
        if not 0.0 < threshold <= 1.0:
            raise ConfigError("threshold", f"must be in (0, 1], got {threshold}", "use 0.5")
        super().__init__(
            url,
            model=model,
            api_key=api_key,
            timeout_s=timeout_s,
            max_length=max_length,
            max_batch=max_batch,
            max_connections=max_connections,
        )
        self._tokenizer = PairTokenizer(tokenizer, max_length, self.name)
        self.supported_index = supported_index
        self.threshold = threshold
        self.prompt = prompt
        self.raw_scores = raw_scores

    async def unsupported_spans(self, items: Sequence[SpanInput]) -> list[list[Span]]:
        return await in_batches(items, self.max_batch, self._pool)

    async def _pool(self, batch: Sequence[SpanInput]) -> list[list[Span]]:
        encodings = [self._tokenizer.encode(self.prompt(item), item.answer) for item in batch]
        body: dict[str, Any] = {
            "model": self.model,
            "task": "token_classify",
            "input": [encoding.ids for encoding in encodings],
        }
        if self.raw_scores:
            body["use_activation"] = False
        answer = await self._http.post("/pooling", body)
        data = answer.get("data") if isinstance(answer, dict) else None
        entries = by_index(data, len(batch), self.name)
        return [
            self._spans(encoding, entry.get("data"))
            for encoding, entry in zip(encodings, entries, strict=True)
        ]

    def _spans(self, encoding: PairEncoding, rows: object) -> list[Span]:
        p_unsupported = self._token_probabilities(rows, len(encoding.ids))
        spans: list[Span] = []
        run: list[int] = []  # the current run of unsupported answer tokens
        for i, seq in enumerate(encoding.sequence_ids):
            start, end = encoding.offsets[i]
            if seq != 1 or start == end:
                continue
            if p_unsupported[i] >= self.threshold:
                run.append(i)
                continue
            spans += _close(run, encoding, p_unsupported)
            run = []
        return spans + _close(run, encoding, p_unsupported)

    def _token_probabilities(self, rows: object, n: int) -> list[float]:
        """P(unsupported) per token from the server's per-token class rows."""
        out = []
        for row in list_of(rows, n, self.name, "token rows"):
            if not isinstance(row, list) or len(row) <= self.supported_index:
                raise MalformedJudgeOutput(
                    f"{self.name}: a token row has no class {self.supported_index}"
                )
            if self.raw_scores:
                row = softmax([number(x, self.name, "token logit") for x in row])
            out.append(1.0 - probability(row[self.supported_index], self.name, "token probability"))
        return out


def _close(run: list[int], encoding: PairEncoding, p: list[float]) -> list[Span]:
    """The span of a run of unsupported tokens (none for an empty run)."""
    if not run:
        return []
    start, end = encoding.offsets[run[0]][0], encoding.offsets[run[-1]][1]
    return [Span(start=start, end=end, p_unsupported=max(p[i] for i in run))]

"""The ONNX Runtime backend: a pair classifier or a span detector in process, from a model dir.

* **Pairs** (:class:`OnnxPairBackend`): with the ``pair`` template, the tokenizer's pair encoding
  of (premise, hypothesis), truncated ``only_first`` at ``max_length`` (a hypothesis too long on
  its own is cut too); with a one-text template (FactCG, MiniCheck), the rendered text, its
  premise cut first when it does not fit. P(supported) is the softmax of the logits at the
  supported label.
* **Spans** (:class:`OnnxSpanBackend`): token classification of the pair (first sequence,
  answer). ``SpanInput.context`` *is* the first sequence, as the model reads it: the judge
  renders the template around the passages (:func:`guard.detect.prompts.span_prompt`). Answer
  tokens whose P(unsupported) = 1 - P(supported) is at least :data:`SPAN_THRESHOLD` are
  unsupported; consecutive ones merge into one :class:`~guard.detect.backend.Span`, its offsets
  the tokenizer's character offsets into the answer.

Both report which inputs were cut (:mod:`guard.detect.results`). Inference runs in the backend's
own worker thread, off the event loop (ONNX Runtime releases the GIL while it computes); an
inference failure is ``JudgeUnavailable``, logits that are not finite ``MalformedJudgeOutput``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from tokenizers import Encoding, Tokenizer

from guard.detect.backend import Span, SpanInput
from guard.detect.modeldir import ModelDir, load_model_dir
from guard.detect.presets import PAIR, render_pair
from guard.detect.results import PairScore, SpanResult
from guard.errors import JudgeError, JudgeUnavailable, MalformedJudgeOutput

SPAN_THRESHOLD = 0.5  # an answer token is unsupported at this P(unsupported) or above
T = TypeVar("T")


class _Runner:
    """One model dir: counting, encoding, running the graph, in one worker thread."""

    def __init__(self, model: ModelDir) -> None:
        self.model = model
        self.counter = Tokenizer.from_str(model.tokenizer.to_str())  # no truncation: counts
        self.counter.no_truncation()
        self.counter.no_padding()
        self.encoder = Tokenizer.from_str(model.tokenizer.to_str())
        self.encoder.no_padding()
        self.encoder.enable_truncation(model.max_length, strategy="only_first")
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"onnx-{model.path.name}")

    def count(self, text: str) -> int:
        return len(self.counter.encode(text, add_special_tokens=False).ids)

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        encodings = self.counter.encode_batch(list(texts), add_special_tokens=False)
        return [e.offsets for e in encodings]

    def specials(self, pair: bool) -> int:
        return int(self.encoder.num_special_tokens_to_add(pair))

    def prefix_within(self, text: str, budget: int) -> str:
        """The longest prefix of ``text`` (at a token end) of at most ``budget`` tokens."""
        offsets = self.counter.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= budget:
            return text
        return text[: offsets[budget - 1][1]] if budget > 0 else ""

    def encode_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[Encoding, bool]]:
        """Each (first, second) as the model reads it, truncated ``only_first``, and whether it
        was cut. Each distinct text is tokenized once (a chunk is read with every sentence)."""
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        encoded = self.counter.encode_batch(texts, add_special_tokens=False)
        pieces = dict(zip(texts, encoded, strict=True))
        return [self._pair(pieces[a], pieces[b], a, b) for a, b in pairs]

    def _pair(
        self, first: Encoding, second: Encoding, first_text: str, second_text: str
    ) -> tuple[Encoding, bool]:
        try:
            encoding = self.encoder.post_process(first, second)
        except Exception:  # tokenizers' bare "sequence to truncate too short": the second
            # text alone does not fit; keep what fits of it, with one token of the first
            budget = self.model.max_length - self.specials(pair=True) - 1
            return self.encoder.encode(first_text, self.prefix_within(second_text, budget)), True
        return encoding, bool(encoding.overflowing)

    def supported_p(self, encodings: Sequence[Encoding]) -> np.ndarray:
        """P(supported): [rows] for a pair model, [rows, tokens] for a span model."""
        logits = self._run(self._feeds(encodings))
        if not np.all(np.isfinite(logits)):
            raise MalformedJudgeOutput(f"onnx: {self.model.path.name} gave non-finite logits")
        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
        return np.asarray(probabilities[..., self.model.supported], dtype=np.float64)

    def _feeds(self, encodings: Sequence[Encoding]) -> dict[str, np.ndarray]:
        """The graph's inputs, padded to the longest row."""
        width = max(len(e.ids) for e in encodings)
        feeds = {}
        for name, dtype in self.model.inputs.items():
            fill = self.model.pad_id if name == "input_ids" else 0
            array = np.full((len(encodings), width), fill, dtype=dtype)
            for row, e in enumerate(encodings):
                array[row, : len(e.ids)] = _column(e, name)
            feeds[name] = array
        return feeds

    def _run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        try:
            outputs = self.model.session.run(None, feeds)
        except Exception as exc:  # ORT's pybind errors are plain Exceptions
            raise JudgeUnavailable(
                f"onnx: {self.model.path.name}: inference failed ({exc})"
            ) from exc
        return np.asarray(outputs[0], dtype=np.float64)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in this model's worker thread; an error that is no ``JudgeError``
        (the tokenizer's) becomes one."""
        context = contextvars.copy_context()
        call = functools.partial(fn, *args)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, context.run, call)
        except (JudgeError, asyncio.CancelledError):
            raise
        except Exception as exc:  # tokenizers raises bare Exceptions: wrapped where they enter
            raise JudgeError(f"onnx: {self.model.path.name}: encoding failed ({exc})") from exc

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class OnnxPairBackend:
    """:class:`guard.detect.backend.PairBackend` over ONNX Runtime (see the module docstring)."""

    name = "onnx"

    def __init__(
        self,
        model_dir: Path,
        *,
        template: str = PAIR,
        supported_label: str | None,
        max_length: int | None = None,
        threads: int = 1,
    ) -> None:
        model = load_model_dir(
            model_dir,
            task="pair",
            supported_label=supported_label,
            max_length=max_length,
            threads=threads,
        )
        self._runner = _Runner(model)
        self.template = template
        self.max_length = model.max_length

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the model's tokenizer, without special tokens."""
        return self._runner.count(text)

    def token_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """The character offsets of each text's tokens, in one tokenizer call."""
        return self._runner.offsets(texts)

    def overhead_tokens(self) -> int:
        """Tokens a pair takes besides premise and hypothesis: template and special tokens."""
        if self.template == PAIR:
            return self._runner.specials(pair=True)
        return self._runner.count(render_pair(self.template, "", "")) + self._runner.specials(
            pair=False
        )

    async def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [s.p for s in await self.score_pairs_marked(pairs)]

    async def score_pairs_marked(self, pairs: Sequence[tuple[str, str]]) -> list[PairScore]:
        if not pairs:
            return []
        return await self._runner.call(self._score, list(pairs))

    def _score(self, pairs: list[tuple[str, str]]) -> list[PairScore]:
        if self.template == PAIR:
            encoded = self._runner.encode_pairs(pairs)
        else:
            encoded = [self._encode_text(premise, hypothesis) for premise, hypothesis in pairs]
        p = self._runner.supported_p([e for e, _ in encoded])
        return [PairScore(float(p[i]), cut) for i, (_, cut) in enumerate(encoded)]

    def encode(self, premise: str, hypothesis: str) -> tuple[Encoding, bool]:
        """What the model reads of the pair, and whether it was cut to fit the window."""
        if self.template == PAIR:
            return self._runner.encode_pairs([(premise, hypothesis)])[0]
        return self._encode_text(premise, hypothesis)

    def _encode_text(self, premise: str, hypothesis: str) -> tuple[Encoding, bool]:
        encoding = self._runner.encoder.encode(render_pair(self.template, premise, hypothesis))
        if not encoding.overflowing:
            return encoding, False
        frame = self._runner.count(render_pair(self.template, "", hypothesis))
        budget = self.max_length - self._runner.specials(pair=False) - frame
        fitted = self._runner.prefix_within(premise, budget)
        return self._runner.encoder.encode(render_pair(self.template, fitted, hypothesis)), True

    async def aclose(self) -> None:
        self._runner.close()


class OnnxSpanBackend:
    """:class:`guard.detect.backend.SpanBackend` over ONNX Runtime (see the module docstring)."""

    name = "onnx"

    def __init__(
        self,
        model_dir: Path,
        *,
        supported_label: str | None,
        max_length: int | None = None,
        threads: int = 1,
    ) -> None:
        model = load_model_dir(
            model_dir,
            task="spans",
            supported_label=supported_label,
            max_length=max_length,
            threads=threads,
        )
        self._runner = _Runner(model)
        self.max_length = model.max_length

    def count_tokens(self, text: str) -> int:
        return self._runner.count(text)

    def token_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return self._runner.offsets(texts)

    def overhead_tokens(self) -> int:
        return self._runner.specials(pair=True)

    async def unsupported_spans(self, items: Sequence[SpanInput]) -> list[list[Span]]:
        return [list(r.spans) for r in await self.spans_marked(items)]

    async def spans_marked(self, items: Sequence[SpanInput]) -> list[SpanResult]:
        if not items:
            return []
        return await self._runner.call(self._spans, list(items))

    def _spans(self, items: list[SpanInput]) -> list[SpanResult]:
        encoded = self._runner.encode_pairs([(item.context, item.answer) for item in items])
        p = self._runner.supported_p([e for e, _ in encoded])
        return [
            SpanResult(tuple(read_spans(e, p[row])), cut) for row, (e, cut) in enumerate(encoded)
        ]

    def encode(self, item: SpanInput) -> tuple[Encoding, bool]:
        """What the model reads of the input, and whether it was cut to fit the window."""
        return self._runner.encode_pairs([(item.context, item.answer)])[0]

    async def aclose(self) -> None:
        self._runner.close()


def _column(encoding: Encoding, name: str) -> list[int]:
    if name == "input_ids":
        return encoding.ids
    if name == "attention_mask":
        return encoding.attention_mask
    return encoding.type_ids


def read_spans(encoding: Encoding, p_supported: np.ndarray) -> list[Span]:
    """The answer's unsupported spans: consecutive answer tokens (sequence 1) at or above
    :data:`SPAN_THRESHOLD`, merged, as character offsets into the answer."""
    spans: list[Span] = []
    current: Span | None = None
    for i, (sequence, (start, end)) in enumerate(
        zip(encoding.sequence_ids, encoding.offsets, strict=True)
    ):
        if sequence != 1 or start == end:
            continue
        p = 1.0 - float(p_supported[i])
        if p < SPAN_THRESHOLD:
            if current is not None:
                spans.append(current)
            current = None
        elif current is None:
            current = Span(start, end, p)
        else:
            current = Span(current.start, end, max(current.p_unsupported, p))
    if current is not None:
        spans.append(current)
    return spans

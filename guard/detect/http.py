"""What the HTTP detector backends (:mod:`guard.detect.tei`, :mod:`guard.detect.vllm`) share:
one pooled keep-alive client per backend, the mapping of HTTP failures onto
:mod:`guard.errors`, strict readers of the servers' numbers, batching, and the local tokenizer
that pair and span models need where the server takes only token ids.

Failures, whatever the server (each a :class:`~guard.errors.JudgeError`, never a score):

* connection refused, reset or dropped mid-answer -> :class:`JudgeUnavailable`
* no answer within ``timeout_s`` (waiting for a pooled connection included) ->
  :class:`JudgeTimeout`
* 429 (TEI: the model is overloaded) -> :class:`RateLimited` with ``Retry-After`` as
  ``retry_after_s``; the budget layer waits and retries, the backend never sleeps
* 408, 409, 424 (TEI: inference failed), 5xx -> :class:`JudgeUnavailable`
* any other 4xx (400, 401, 403, 404, 413 too large, 422 tokenizer error) -> :class:`JudgeRejected`
* a 200 that is not the documented shape (not JSON, wrong length, a label missing, NaN, a
  probability outside [0, 1]) -> :class:`MalformedJudgeOutput`

Every message names the backend and carries the server's own error text (TEI's
``{"error", "error_type"}``, vLLM's ``{"error": {"message", "type"}}`` or older flat
``{"message", "type"}``, FastAPI's ``{"detail"}``), with the API key redacted.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import orjson

from guard.errors import (
    ConfigError,
    JudgeError,
    JudgeRejected,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
    RateLimited,
)
from guard.providers.errors import parse_retry_after
from guard.redact import redact

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_MAX_CONNECTIONS = 16  # pooled keep-alive connections per backend (calls in flight)
KEEPALIVE_EXPIRY_S = 60.0  # an idle pooled connection is closed after this
MAX_ERROR_CHARS = 300  # of a server's error text kept in a message
_TRANSIENT = frozenset({408, 409, 424})  # TEI 424: "Inference failed" (backend error)
_JSON = {"content-type": "application/json", "accept": "application/json"}


# --------------------------------------------------------------------------- the client


class DetectorHTTP:
    """A keep-alive HTTP/1.1 client to one model server, bounded by ``max_connections``.

    ``url`` is the server's root (``http://tei:8080``, ``http://vllm:8000``): paths are the
    endpoints' own (``/predict``, ``/score``). ``timeout_s`` bounds each call as a whole.
    The environment (proxies, ``.netrc``) is not read: the core takes explicit arguments.
    """

    def __init__(
        self,
        backend: str,
        url: str,
        *,
        api_key: str | None,
        timeout_s: float,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        check_url(url)
        if not timeout_s > 0:
            raise ConfigError("timeout_s", f"must be above 0, got {timeout_s}", "use e.g. 5")
        if max_connections < 1:
            raise ConfigError("max_connections", "must be at least 1", "use e.g. 16")
        self.backend = backend
        self.timeout_s = timeout_s
        self._secrets = (api_key,) if api_key else ()
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.AsyncClient(
            base_url=url.rstrip("/"),
            headers=headers,
            timeout=httpx2.Timeout(timeout_s),
            limits=httpx2.Limits(
                max_connections=max_connections,
                max_keepalive_connections=max_connections,
                keepalive_expiry=KEEPALIVE_EXPIRY_S,
            ),
            trust_env=False,
        )

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """``body`` as JSON to ``path``; the decoded JSON answer of a 2xx."""
        return await self._call("POST", path, orjson.dumps(body))

    async def get(self, path: str) -> Any:
        return await self._call("GET", path, None)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _call(self, method: str, path: str, content: bytes | None) -> Any:
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._client.request(method, path, content=content, headers=_JSON)
        except (TimeoutError, httpx2.TimeoutException):
            raise JudgeTimeout(f"{self.backend}: no answer within {self.timeout_s:g}s") from None
        except httpx2.RequestError as exc:
            detail = redact(f"{type(exc).__name__}: {exc}", self._secrets)
            raise JudgeUnavailable(f"{self.backend}: cannot reach the server ({detail})") from exc
        if response.status_code >= 400:
            raise status_error(self.backend, response, self._secrets)
        return decode(response.content, self.backend)


def decode(content: bytes, backend: str) -> Any:
    """A JSON answer. Python's ``json`` is tried when orjson refuses, so that a ``NaN`` written
    by a Python server is reported as a non-finite score rather than as "not JSON"."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(content)
    except ValueError:
        raise MalformedJudgeOutput(f"{backend}: the answer is not JSON") from None


def check_url(url: str) -> None:
    """A ConfigError unless ``url`` is an absolute http(s) URL."""
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        raise ConfigError("url", f"not a URL: {exc}", "give e.g. http://127.0.0.1:8080") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError("url", f"{url!r} is not an http(s) URL", "give e.g. http://tei:8080")


# --------------------------------------------------------------------------- errors


def status_error(
    backend: str, response: httpx2.Response, secrets: Sequence[str] = ()
) -> JudgeError:
    """The :class:`JudgeError` for an error status, with the server's own message."""
    status = response.status_code
    detail = redact(f"{backend}: HTTP {status}: {server_message(response)}", secrets)
    if status == 429:
        return RateLimited(detail, status=status, retry_after_s=parse_retry_after(response.headers))
    if status in _TRANSIENT or status >= 500:
        return JudgeUnavailable(
            detail, status=status, retry_after_s=parse_retry_after(response.headers)
        )
    return JudgeRejected(detail, status=status)


def server_message(response: httpx2.Response) -> str:
    """The error text of a TEI, vLLM or FastAPI error body, else the start of the body."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        body = None
    text = _message_of(body) if isinstance(body, dict) else None
    if text is None:
        text = response.content.decode("utf-8", "replace").strip() or response.reason_phrase
    return text[:MAX_ERROR_CHARS]


def _message_of(body: Mapping[str, Any]) -> str | None:
    error = body.get("error")
    if isinstance(error, Mapping):  # vLLM (OpenAI style)
        body = error
    elif isinstance(error, str):  # TEI: {"error": "...", "error_type": "overloaded"}
        kind = body.get("error_type")
        return f"{error} ({kind})" if kind else error
    message = body.get("message", body.get("detail"))
    if message is None:
        return None
    kind = body.get("type")
    return f"{message} ({kind})" if kind else str(message)


# --------------------------------------------------------------------------- reading numbers


def number(value: object, backend: str, what: str) -> float:
    """``value`` as a finite float, else :class:`MalformedJudgeOutput` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedJudgeOutput(f"{backend}: {what} is not a number: {value!r:.40}")
    if not math.isfinite(value):
        raise MalformedJudgeOutput(f"{backend}: {what} is not finite: {value!r}")
    return float(value)


def probability(value: object, backend: str, what: str) -> float:
    """``value`` as a probability in [0, 1]; anything else is :class:`MalformedJudgeOutput`
    (a logit where a probability was expected shows up here)."""
    p = number(value, backend, what)
    if not 0.0 <= p <= 1.0:
        raise MalformedJudgeOutput(f"{backend}: {what} is outside [0, 1]: {p:g}")
    return p


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def softmax(xs: Sequence[float]) -> list[float]:
    top = max(xs)
    exps = [math.exp(x - top) for x in xs]
    total = sum(exps)
    return [e / total for e in exps]


def list_of(value: object, n: int, backend: str, what: str) -> list[Any]:
    """``value`` as a list of exactly ``n`` entries (one per input, in order)."""
    if not isinstance(value, list):
        raise MalformedJudgeOutput(f"{backend}: {what} is not a list")
    if len(value) != n:
        raise MalformedJudgeOutput(f"{backend}: {what} has {len(value)} entries for {n} inputs")
    return value


def by_index(data: object, n: int, backend: str) -> list[Mapping[str, Any]]:
    """vLLM's ``data`` entries put in input order by their ``index`` (0..n-1, each once)."""
    entries = list_of(data, n, backend, "data")
    ordered: list[Mapping[str, Any] | None] = [None] * n
    for entry in entries:
        index = entry.get("index") if isinstance(entry, dict) else None
        if not isinstance(index, int) or not 0 <= index < n or ordered[index] is not None:
            raise MalformedJudgeOutput(f"{backend}: data entry with a bad index: {index!r:.20}")
        ordered[index] = entry
    return [entry for entry in ordered if entry is not None]


# --------------------------------------------------------------------------- batching


async def in_batches(
    inputs: Sequence[T], size: int, call: Callable[[Sequence[T]], Coroutine[Any, Any, list[R]]]
) -> list[R]:
    """``call`` on slices of at most ``size`` inputs, concurrently, results in input order. The
    first failure cancels the other slices and is raised as itself (not as a group)."""
    if not inputs:
        return []
    slices = [inputs[i : i + size] for i in range(0, len(inputs), size)]
    if len(slices) == 1:
        return await call(slices[0])
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(call(part)) for part in slices]
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [result for task in tasks for result in task.result()]


def check_batch(max_batch: int) -> None:
    if max_batch < 1:
        raise ConfigError("max_batch", f"must be at least 1, got {max_batch}", "use e.g. 32")


# --------------------------------------------------------------------------- local tokenizer


@dataclass(frozen=True)
class PairEncoding:
    """One (first, second) pair as the model reads it: token ids, and for each token which text
    it comes from (0, 1, or None for special tokens) and its character offsets in that text."""

    ids: list[int]
    sequence_ids: list[int | None]
    offsets: list[tuple[int, int]]


class PairTokenizer:
    """A model's ``tokenizer.json`` (Hugging Face ``tokenizers``), encoding text pairs with the
    model's own special tokens. Only the first text is cut to fit ``max_length`` tokens (context
    or premise; a cut context can only make more of the answer look unsupported); a second text
    too long on its own is :class:`JudgeRejected`, never judged in part."""

    def __init__(self, path: str | Path, max_length: int, backend: str) -> None:
        try:
            import tokenizers
        except ImportError:
            raise ConfigError(
                "tokenizer", "needs the 'tokenizers' package", "pip install tokenizers"
            ) from None
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(path))
        except Exception as exc:  # the binding raises bare Exception for any bad file
            raise ConfigError(
                "tokenizer", f"cannot load {path}: {exc}", "give the model's tokenizer.json"
            ) from None
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length, strategy="only_first")
        self._tokenizer = tokenizer
        self.max_length = max_length
        self.backend = backend

    def encode(self, first: str, second: str) -> PairEncoding:
        try:
            encoding = self._tokenizer.encode(first, second)
        except Exception as exc:  # "Truncation error: ... too short": the second text alone
            raise JudgeRejected(
                f"{self.backend}: the text to judge does not fit in max_length "
                f"({self.max_length} tokens) even with no context: split it ({exc})"
            ) from None
        return PairEncoding(
            ids=list(encoding.ids),
            sequence_ids=list(encoding.sequence_ids),
            offsets=[(int(a), int(b)) for a, b in encoding.offsets],
        )

"""Every default of the judge core, in one place."""

from __future__ import annotations

from typing import Final, Literal

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RETRIES = 2
RETRY_BASE_DELAY_S = 0.5
RETRY_MAX_DELAY_S = 8.0
RETRY_AFTER_CAP_S = 60.0
DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_CONTEXT_CHARS = 4000
DEFAULT_MAX_OUTPUT_CHARS = 4000
DEFAULT_MAX_TOKENS = 4096  # room for per-claim JSON on a 4,000-character output
PROMPT_VERSION = "groundedness-v1"
SCHEMA_VERSION = "1"
MAX_EVIDENCE_ITEMS = 1000  # documents or turns rendered per request; the rest count as cut
DEFAULT_ON_TRUNCATED_OUTPUT: Final[Literal["judge_chunks"]] = "judge_chunks"  # or fail, pass
DEFAULT_MAX_OUTPUT_CHUNKS = 4  # windows of max_output_chars judged per output
DEFAULT_INJECTION_POLICY: Final[Literal["fail"]] = "fail"  # or flag, error
OFFLOAD_MIN_CHARS = 20_000  # inputs at least this long are worked on in a worker thread
PREPARE_THREADS = 2  # worker threads per process for CPU-heavy work (guard.offload)

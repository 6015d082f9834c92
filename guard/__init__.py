"""groundguard's judge core: decides whether an answer is grounded in its evidence.

It knows nothing of Kafka; :mod:`consumers` is the streaming runtime built on it.

Map of the package, in the order a request goes through it::

    models, strictjson       the request and verdict contract; reading its JSON strictly
    skips                    why a verdict is ``skipped`` (typed; the verdict keeps the text)
    engine                   the Guard: parse -> prepare -> judge -> decide, one verdict
    prepare/                 a request made ready for a judge (used by the engine only):
                             mapping, sanitize, truncate, excerpt, evidence, injection
    case                     the prepared case every judge reads
    providers/               LLM judges (OpenAI, Anthropic): prompts, credentials, pricing,
                             provider errors; the factory builds one from the settings
    offline/                 the offline judge (no LLM)
    budgets/                 layers around a judge: sampling, cache, cost, breaker, rate limit,
                             concurrency, retries
    batch/                   delivery: batch: calls gathered into provider batches (the
                             batching judge, item ids, the journal of submitted batches)
    decide/                  from a judge's answer to the verdict: assessment, scoring, quotes,
                             policies (windows, injection), cascade (offline screen, then LLM)
    assembly                 the judge the settings ask for, assembled in one place
    boundary                 the typed Protocol the runtime holds the judge as
    stream/                  judging an answer while it streams: spans, hold and release, the
                             evidence of a chat request, server-sent events
    replay                   judging a JSONL file without Kafka
    settings, defaults       the settings model (imports no layer above it); every default
    errors, retry, redact,   the exception root; bounded retries; secrets out of messages;
    offload                  CPU-heavy work off the event loop
    tracing                  the no-op tracing hooks an edge may install (OpenTelemetry spans
                             and evaluation events; never imported here)
    testing/                 fakes for tests (a fake judge and fake LLM APIs); nothing imports
                             them but tests and guard.assembly for ``provider: fake``

The names below load on first use (PEP 562): importing :mod:`guard.settings` loads no judge.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guard.case import Passage, PreparedCase
    from guard.decide.assessment import BinaryAssessment, ClaimAssessment, Scale5Assessment
    from guard.engine import Guard
    from guard.errors import (
        ConfigError,
        GuardError,
        InvalidRequest,
        JudgeError,
        JudgementSkipped,
    )
    from guard.models import (
        ContextField,
        Document,
        JudgeRequest,
        Label,
        Message,
        ScoringMode,
        Verdict,
    )
    from guard.providers.base import Judge, JudgeOutcome
    from guard.settings import JudgeSettings, Provider
    from guard.skips import SkipReason

_HOMES = {
    "BinaryAssessment": "guard.decide.assessment",
    "ClaimAssessment": "guard.decide.assessment",
    "ConfigError": "guard.errors",
    "ContextField": "guard.models",
    "Document": "guard.models",
    "Guard": "guard.engine",
    "GuardError": "guard.errors",
    "InvalidRequest": "guard.errors",
    "Judge": "guard.providers.base",
    "JudgeError": "guard.errors",
    "JudgeOutcome": "guard.providers.base",
    "JudgeRequest": "guard.models",
    "JudgeSettings": "guard.settings",
    "JudgementSkipped": "guard.errors",
    "Label": "guard.models",
    "Message": "guard.models",
    "Passage": "guard.case",
    "PreparedCase": "guard.case",
    "Provider": "guard.settings",
    "Scale5Assessment": "guard.decide.assessment",
    "ScoringMode": "guard.models",
    "SkipReason": "guard.skips",
    "Verdict": "guard.models",
}

__all__ = [
    "BinaryAssessment",
    "ClaimAssessment",
    "ConfigError",
    "ContextField",
    "Document",
    "Guard",
    "GuardError",
    "InvalidRequest",
    "Judge",
    "JudgeError",
    "JudgeOutcome",
    "JudgeRequest",
    "JudgeSettings",
    "JudgementSkipped",
    "Label",
    "Message",
    "Passage",
    "PreparedCase",
    "Provider",
    "Scale5Assessment",
    "ScoringMode",
    "SkipReason",
    "Verdict",
]


def __getattr__(name: str) -> Any:
    """Load the module that defines ``name`` when it is first asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)

"""groundguard's judge core: decides whether an answer is grounded in its evidence.

It knows nothing of Kafka; :mod:`consumers` is the streaming runtime built on it.
"""

from guard.assessment import BinaryAssessment, ClaimAssessment, Scale5Assessment
from guard.case import Passage, PreparedCase
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
    "Verdict",
]

"""Shared by the offline judge's unit tests: one answer judged the way ``run`` judges it."""

from __future__ import annotations

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.models import JudgeRequest
from guard.offline import OfflineJudge
from guard.offline.judge import Decision


def decide(
    output: str, context: str | list[str] | list[dict[str, str]], question: str | None = None
) -> Decision:
    """The offline judge's decision on ``output`` against ``context``, prepared by the core."""
    settings = JudgeSettings()
    request = JudgeRequest.model_validate(
        {"output": output, "context": context, "question": question}
    )
    case = Guard(OfflineJudge(settings), settings).prepare(request)
    assert isinstance(case, PreparedCase)
    return OfflineJudge(settings).decide(case)

"""Fakes shipped for users' own tests: an in-process judge and loopback fakes of the LLM APIs.

:class:`FakeLLMServer` and :class:`Fault` load on first use, so that
``python -m guard.testing.fake_server`` does not import its own module twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guard.testing.fake_cache import FakePromptCache
from guard.testing.fake_judge import FakeJudge

if TYPE_CHECKING:
    from guard.testing.fake_server import FakeLLMServer, Fault

__all__ = ["FakeJudge", "FakeLLMServer", "FakePromptCache", "Fault"]


def __getattr__(name: str) -> Any:
    if name in ("FakeLLMServer", "Fault"):
        from guard.testing import fake_server

        return getattr(fake_server, name)
    raise AttributeError(f"module 'guard.testing' has no attribute {name!r}")

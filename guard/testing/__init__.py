"""Fakes shipped for users' own tests: an in-process judge and loopback fakes of the LLM APIs."""

from guard.testing.fake_judge import FakeJudge
from guard.testing.fake_server import FakeLLMServer, Fault

__all__ = ["FakeJudge", "FakeLLMServer", "Fault"]

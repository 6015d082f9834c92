"""The specialist judges: the real openai SDK over loopback HTTP against FakeSpecialistServer.

Each format's request as the server received it, each way of reading a reply, the server's
failures as JudgeError kinds, and the assessment in scale5 and binary modes.
"""

from __future__ import annotations

import asyncio
import math
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import pytest

from guard.case import Passage, PreparedCase
from guard.decide.assessment import BinaryAssessment, Scale5Assessment
from guard.errors import (
    JudgeRejected,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
    QuotaExhausted,
    RateLimited,
)
from guard.models import ContextField, Cut, ScoringMode, Truncation
from guard.retry import RetryPolicy
from guard.specialist.judge import SpecialistJudge, build_specialist
from guard.specialist.minicheck import SYSTEM_PROMPT
from guard.specialist.settings import SpecialistTier
from guard.testing.fake_specialist import (
    HALLUCINATION_MARKER,
    FakeSpecialistServer,
    SpecialistReply,
    Token,
    answer,
    error,
    hang,
)

EVIDENCE = "Our return policy allows returns within 30 days."
GOOD = "You can return items within 30 days."
BAD = f"You can return items within 90 days. {HALLUCINATION_MARKER}"
QUESTION = "How long do I have to return items?"
LYNX_PASS = '{"REASONING": ["The document says 30 days."], "SCORE": "PASS"}'
LYNX_FAIL = '{"REASONING": ["The document says 30 days, not 90."], "SCORE": "FAIL"}'


def case(output: str = GOOD, mode: ScoringMode = ScoringMode.SCALE5) -> PreparedCase:
    cut = Cut(original_chars=len(EVIDENCE), kept_chars=len(EVIDENCE), truncated=False)
    return PreparedCase(
        request_id="r1",
        output=output,
        evidence=f"[1] {EVIDENCE}",
        passages=(Passage("[1]", EVIDENCE),),
        source=ContextField.CONTEXT,
        mode=mode,
        threshold=0.5,
        question=QUESTION,
        truncation=Truncation(context=cut, output=cut),
        injections=(),
    )


class RetryLog:
    def __init__(self) -> None:
        self.kinds: list[str] = []

    def __call__(self, attempt: int, error: Exception, delay: float) -> None:
        self.kinds.append(getattr(error, "kind", "?"))


async def _no_sleep(_: float) -> None:
    return None


@pytest.fixture(scope="module")
def server() -> Iterator[FakeSpecialistServer]:
    with FakeSpecialistServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: FakeSpecialistServer) -> None:
    server.reset()


class Judges:
    """Makes judges against the fake and closes them after the test."""

    def __init__(self, server: FakeSpecialistServer) -> None:
        self.server = server
        self.made: list[SpecialistJudge] = []
        self.retries = RetryLog()

    def __call__(self, fmt: str, *, retries: int = 0, **settings: Any) -> SpecialistJudge:
        tier = SpecialistTier.model_validate(
            {
                "kind": "specialist",
                "format": fmt,
                "base_url": self.server.base_url,
                "model": f"{fmt}-model",
                "timeout_s": 5.0,
                **settings,
            }
        )
        policy = RetryPolicy(max_retries=retries, sleep=_no_sleep, on_retry=self.retries)
        judge = SpecialistJudge(tier, None, retry=policy)
        self.made.append(judge)
        return judge


@pytest.fixture
async def judges(server: FakeSpecialistServer) -> AsyncIterator[Judges]:
    made = Judges(server)
    yield made
    await asyncio.gather(*(j.aclose() for j in made.made))


# --------------------------------------------------------------------------- requests


class TestRequests:
    async def test_lynx_sends_the_card_prompt_as_one_user_message(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        await judges("lynx").assess(case())
        (body,) = server.requests
        assert body["model"] == "lynx-model"
        assert (body["temperature"], body["max_tokens"]) == (0, 1024)
        (message,) = body["messages"]
        assert message["role"] == "user"
        content = message["content"]
        assert f"QUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION):\n{QUESTION}\n" in content
        assert f"--\nDOCUMENT:\n{EVIDENCE}\n\n--\nANSWER:\n{GOOD}\n\n--\n" in content
        assert "logprobs" not in body
        assert "response_format" not in body

    async def test_granite_sends_context_and_assistant_turns_and_the_risk_as_kwargs(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        await judges("granite_guardian").assess(case())
        (body,) = server.requests
        assert body["messages"] == [
            {"role": "context", "content": EVIDENCE},
            {"role": "assistant", "content": GOOD},
        ]
        assert body["chat_template_kwargs"] == {"guardian_config": {"risk_name": "groundedness"}}
        assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, 5, 20)
        assert "response_format" not in body

    async def test_granite_for_ollama_names_the_risk_in_the_system_message(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        await judges("granite_guardian", granite_risk_via="system").assess(case())
        (body,) = server.requests
        assert body["messages"][0] == {"role": "system", "content": "groundedness"}
        assert [m["role"] for m in body["messages"][1:]] == ["context", "assistant"]
        assert "chat_template_kwargs" not in body

    async def test_minicheck_sends_one_request_per_sentence_answer_only_in_the_user_turn(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        output = "You can return items within 30 days. Returns are free. Ask the desk."
        await judges("minicheck").assess(case(output))
        bodies = server.requests
        claims = sorted(b["messages"][1]["content"].rpartition("\nClaim: ")[2] for b in bodies)
        assert claims == sorted(
            ["You can return items within 30 days.", "Returns are free.", "Ask the desk."]
        )
        for body in bodies:
            system, user = body["messages"]
            assert system == {"role": "system", "content": SYSTEM_PROMPT}
            assert user["role"] == "user"
            assert user["content"].startswith(f"Document: {EVIDENCE}\nClaim: ")
            assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, 5, 4)

    async def test_without_use_logprobs_none_are_asked_for(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        await judges("granite_guardian", use_logprobs=False).assess(case())
        await judges("minicheck", use_logprobs=False).assess(case())
        for body in server.requests:
            assert "logprobs" not in body
            assert "top_logprobs" not in body

    async def test_max_tokens_is_sent_as_set(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        await judges("minicheck", max_tokens=1).assess(case())
        assert server.requests[0]["max_tokens"] == 1

    async def test_the_key_is_sent_as_a_bearer_token(self, server: FakeSpecialistServer) -> None:
        tier = SpecialistTier(
            kind="specialist",
            format="lynx",
            base_url=server.base_url,
            model="m",
            api_key_env="VLLM_KEY",
        )
        judge = build_specialist(tier, {"VLLM_KEY": "token-abc123"})
        try:
            await judge.assess(case())
        finally:
            await judge.aclose()
        assert server.authorizations == ["Bearer token-abc123"]


# --------------------------------------------------------------------------- replies


class TestLynxReplies:
    @pytest.mark.parametrize(
        "text",
        [
            LYNX_PASS,
            f"Sure. Here is the verdict:\n```json\n{LYNX_PASS}\n```\nThat is all.",
            '{\n  "SCORE": "PASS",\n  "REASONING": "30 days in both"\n}',
        ],
    )
    async def test_pass_wrapped_or_not_is_grounded(
        self, server: FakeSpecialistServer, judges: Judges, text: str
    ) -> None:
        server.queue(answer(text))
        outcome = await judges("lynx").assess(case())
        assert (outcome.grounded_p, outcome.tier, outcome.confidence) == (1.0, "specialist", None)
        assert outcome.assessment == Scale5Assessment(
            explanation=outcome.assessment.explanation, claims=[], score=5
        )
        assert outcome.assessment.explanation.startswith("Lynx: PASS.")

    async def test_fail_is_not_grounded_with_the_answer_as_the_unsupported_claim(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(answer(LYNX_FAIL))
        outcome = await judges("lynx").assess(case(BAD))
        assert outcome.grounded_p == 0.0
        assert isinstance(outcome.assessment, Scale5Assessment)
        assert outcome.assessment.score == 1
        (claim,) = outcome.assessment.claims
        assert (claim.claim, claim.supported) == (BAD, False)
        assert claim.reason == "The document says 30 days, not 90."

    @pytest.mark.parametrize(
        "reply",
        [
            answer("The answer is faithful. PASS"),
            answer('{"REASONING": [], "SCORE": "OK"}'),
            answer(f"{LYNX_PASS}\n{LYNX_FAIL}"),
            answer(""),
            answer("   \n"),
            answer('{"REASONING": ["The document says'),
            answer(LYNX_PASS, finish_reason="length"),
        ],
        ids=["prose", "bad-score", "two-objects", "empty", "blank", "cut-json", "cut"],
    )
    async def test_anything_else_is_malformed(
        self, server: FakeSpecialistServer, judges: Judges, reply: SpecialistReply
    ) -> None:
        server.queue(reply)
        with pytest.raises(MalformedJudgeOutput):
            await judges("lynx").assess(case())


class TestGraniteReplies:
    async def test_no_with_logprobs_gives_one_minus_the_risk(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(answer("No", p=0.8))
        outcome = await judges("granite_guardian").assess(case())
        assert outcome.grounded_p == pytest.approx(0.8)
        assert outcome.confidence == pytest.approx(0.8)
        assert isinstance(outcome.assessment, Scale5Assessment)
        assert outcome.assessment.score == 4  # 1 + round(4 * 0.8)

    async def test_yes_with_logprobs_is_not_grounded(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(answer("Yes", p=0.9))
        outcome = await judges("granite_guardian").assess(case(BAD))
        assert outcome.grounded_p == pytest.approx(0.1)
        assert [c.supported for c in outcome.assessment.claims] == [False]

    async def test_the_risk_sums_yes_and_no_over_every_token(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        tokens = (
            Token("Yes", -0.5, (("Yes", -0.5), ("No", -1.5))),
            Token("\n", -0.1, (("\n", -0.1), ("no", -3.0))),
        )
        server.queue(SpecialistReply(text="Yes\n<confidence> Low </confidence>", tokens=tokens))
        yes, no = math.exp(-0.5), math.exp(-1.5) + math.exp(-3.0)
        outcome = await judges("granite_guardian").assess(case())
        assert outcome.grounded_p == pytest.approx(1 - yes / (yes + no))
        assert "Low confidence" in outcome.assessment.explanation

    async def test_without_logprobs_the_answer_is_one_or_zero(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(answer("No"), answer("Yes"))
        judge = judges("granite_guardian", use_logprobs=False)
        grounded, risky = await judge.assess(case()), await judge.assess(case(BAD))
        assert (grounded.grounded_p, grounded.confidence) == (1.0, None)
        assert (risky.grounded_p, risky.confidence) == (0.0, None)

    async def test_a_server_that_sends_no_logprobs_though_asked_falls_back_to_the_answer(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(answer("No"))  # tokens=None: "logprobs": null
        outcome = await judges("granite_guardian").assess(case())
        assert (outcome.grounded_p, outcome.confidence) == (1.0, None)

    @pytest.mark.parametrize(
        "reply",
        [
            answer("Yes, the answer is risky."),
            answer("grounded"),
            answer(""),
            answer("No\n<confidence> Hi", finish_reason="length"),
            SpecialistReply(raw=b"not json"),
        ],
        ids=["sentence", "other-word", "empty", "cut", "body-not-json"],
    )
    async def test_anything_else_is_malformed(
        self, server: FakeSpecialistServer, judges: Judges, reply: SpecialistReply
    ) -> None:
        server.queue(reply)
        with pytest.raises(MalformedJudgeOutput):
            await judges("granite_guardian").assess(case())


class TestMiniCheckReplies:
    TWO = "You can return items within 30 days. Returns are free."

    def script(self, p_first: float, p_second: float) -> Any:
        """Yes with p_first for the first sentence, p_second for the second."""

        def reply(body: dict[str, Any]) -> SpecialistReply:
            claim = body["messages"][1]["content"].rpartition("\nClaim: ")[2]
            p = p_first if claim.startswith("You can") else p_second
            return answer("Yes" if p >= 0.5 else "No", p=p if p >= 0.5 else 1 - p)

        return reply

    async def test_grounded_when_every_sentence_is_supported_p_the_least(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.set_script(self.script(0.95, 0.7))
        outcome = await judges("minicheck").assess(case(self.TWO))
        assert outcome.grounded_p == pytest.approx(0.7)
        assert [c.supported for c in outcome.assessment.claims] == [True, True]
        assert [c.claim for c in outcome.assessment.claims] == [
            "You can return items within 30 days.",
            "Returns are free.",
        ]

    async def test_one_unsupported_sentence_makes_it_not_grounded(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.set_script(self.script(0.95, 0.2))
        outcome = await judges("minicheck").assess(case(self.TWO, ScoringMode.BINARY))
        assert outcome.grounded_p == pytest.approx(0.2)
        assert isinstance(outcome.assessment, BinaryAssessment)
        assert outcome.assessment.grounded is False
        assert [c.supported for c in outcome.assessment.claims] == [True, False]

    async def test_without_logprobs_yes_and_no_are_one_and_zero(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.set_script(lambda body: answer("Yes"))
        outcome = await judges("minicheck", use_logprobs=False).assess(case(self.TWO))
        assert (outcome.grounded_p, outcome.confidence) == (1.0, None)

    async def test_a_one_token_yes_cut_at_max_tokens_is_a_whole_answer(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        """The reference asks for exactly one token: its "Yes" always ends at the limit."""
        server.set_script(lambda body: answer("Yes", p=0.9, finish_reason="length"))
        outcome = await judges("minicheck", max_tokens=1).assess(case())
        assert outcome.grounded_p == pytest.approx(0.9)

    @pytest.mark.parametrize(
        "reply",
        [answer("Ye", finish_reason="length"), answer("Maybe"), answer("")],
        ids=["cut", "garbage", "empty"],
    )
    async def test_a_bad_answer_for_any_sentence_is_malformed(
        self, server: FakeSpecialistServer, judges: Judges, reply: SpecialistReply
    ) -> None:
        server.set_script(lambda body: reply if "free" in str(body["messages"]) else answer("Yes"))
        with pytest.raises(MalformedJudgeOutput):
            await judges("minicheck").assess(case(self.TWO))

    async def test_calls_run_side_by_side_within_max_in_flight(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.set_script(lambda body: hang(0.05, answer("Yes")))
        output = " ".join(f"Sentence number {i} is here." for i in range(8))
        outcome = await judges("minicheck", max_in_flight=3).assess(case(output))
        assert len(outcome.assessment.claims) == 8
        assert len(server.requests) == 8
        assert 1 < server.peak_in_flight <= 3

    async def test_usage_adds_up_over_the_calls(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        outcome = await judges("minicheck").assess(case(self.TWO))
        one = await judges("minicheck").assess(case("Returns are free."))
        assert outcome.usage.input_tokens > one.usage.input_tokens > 0
        assert outcome.usage.output_tokens == 2 * one.usage.output_tokens


# --------------------------------------------------------------------------- failures


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TestFailures:
    async def test_server_down_is_unavailable_after_the_retries(self) -> None:
        tier = SpecialistTier(
            kind="specialist",
            format="lynx",
            base_url=f"http://127.0.0.1:{_unused_port()}/v1",
            model="m",
        )
        log = RetryLog()
        judge = SpecialistJudge(
            tier, None, retry=RetryPolicy(max_retries=2, sleep=_no_sleep, on_retry=log)
        )
        try:
            with pytest.raises(JudgeUnavailable) as caught:
                await judge.assess(case())
        finally:
            await judge.aclose()
        assert caught.value.retriable
        assert log.kinds == ["judge_unavailable", "judge_unavailable"]

    async def test_a_hung_server_is_a_timeout(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(hang(3.0))
        with pytest.raises(JudgeTimeout):
            await judges("minicheck", timeout_s=0.3).assess(case())

    async def test_500_is_unavailable_and_retried(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(error(500, "engine died"), answer(LYNX_PASS))
        outcome = await judges("lynx", retries=1).assess(case())
        assert outcome.grounded_p == 1.0
        assert judges.retries.kinds == ["judge_unavailable"]

    async def test_500_past_the_retries_raises_with_the_status(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.set_script(lambda body: error(500, "engine died"))
        with pytest.raises(JudgeUnavailable) as caught:
            await judges("granite_guardian", retries=2).assess(case())
        assert caught.value.status == 500
        assert len(server.requests) == 3

    async def test_429_is_rate_limited_with_the_servers_hint(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(error(429, "slow down", "rate_limit_exceeded", retry_after_s=2))
        with pytest.raises(RateLimited) as caught:
            await judges("minicheck").assess(case())
        assert (caught.value.status, caught.value.retry_after_s) == (429, 2.0)

    async def test_429_quota_is_not_retried(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.queue(error(429, "You exceeded your current quota", "insufficient_quota"))
        with pytest.raises(QuotaExhausted):
            await judges("lynx", retries=2).assess(case())
        assert judges.retries.kinds == []

    @pytest.mark.parametrize("status", [400, 401, 404])
    async def test_client_errors_are_rejected_and_not_retried(
        self, server: FakeSpecialistServer, judges: Judges, status: int
    ) -> None:
        server.queue(error(status, "no such model"))
        with pytest.raises(JudgeRejected) as caught:
            await judges("lynx", retries=2).assess(case())
        assert caught.value.status == status
        assert judges.retries.kinds == []

    async def test_the_key_never_appears_in_an_error(self, server: FakeSpecialistServer) -> None:
        key = "sk-live-abcdefghijklmnop0123456789"
        server.queue(error(401, f"invalid key {key}"))
        tier = SpecialistTier(
            kind="specialist", format="lynx", base_url=server.base_url, model="m", api_key=key
        )
        judge = build_specialist(tier, {})
        try:
            with pytest.raises(JudgeRejected) as caught:
                await judge.assess(case())
        finally:
            await judge.aclose()
        assert key not in str(caught.value)

    async def test_one_failed_sentence_fails_the_whole_minicheck_judgement(
        self, server: FakeSpecialistServer, judges: Judges
    ) -> None:
        server.set_script(lambda body: error(500) if "free" in str(body["messages"]) else hang(0.5))
        with pytest.raises(JudgeUnavailable):
            await judges("minicheck").assess(case("Returns last 30 days. Returns are free."))


# --------------------------------------------------------------------------- assessments


class TestAssessments:
    """What each format's reading becomes in each scoring mode."""

    CASES: ClassVar[list[tuple[str, SpecialistReply, float, int, bool]]] = [
        ("lynx", answer(LYNX_PASS), 1.0, 5, True),
        ("lynx", answer(LYNX_FAIL), 0.0, 1, False),
        ("granite_guardian", answer("No", p=0.97), 0.97, 5, True),
        ("granite_guardian", answer("No", p=0.6), 0.6, 3, True),
        ("granite_guardian", answer("Yes", p=0.7), 0.3, 2, False),
        ("minicheck", answer("Yes", p=0.55), 0.55, 3, True),
        ("minicheck", answer("No", p=0.9), 0.1, 1, False),
    ]

    @pytest.mark.parametrize(("fmt", "reply", "p", "raw", "grounded"), CASES)
    async def test_scale5_rates_p_to_the_nearest_quarter(
        self,
        server: FakeSpecialistServer,
        judges: Judges,
        fmt: str,
        reply: SpecialistReply,
        p: float,
        raw: int,
        grounded: bool,
    ) -> None:
        server.set_script(lambda body: reply)
        outcome = await judges(fmt).assess(case())
        assert outcome.grounded_p == pytest.approx(p)
        assert isinstance(outcome.assessment, Scale5Assessment)
        assert outcome.assessment.score == raw

    @pytest.mark.parametrize(("fmt", "reply", "p", "raw", "grounded"), CASES)
    async def test_binary_is_grounded_at_one_half_and_every_claim_supported(
        self,
        server: FakeSpecialistServer,
        judges: Judges,
        fmt: str,
        reply: SpecialistReply,
        p: float,
        raw: int,
        grounded: bool,
    ) -> None:
        server.set_script(lambda body: reply)
        outcome = await judges(fmt).assess(case(mode=ScoringMode.BINARY))
        assert isinstance(outcome.assessment, BinaryAssessment)
        assert outcome.assessment.grounded is grounded
        assert all(c.supported for c in outcome.assessment.claims) is grounded

    @pytest.mark.parametrize("fmt", ["lynx", "granite_guardian", "minicheck"])
    async def test_the_marker_script_tells_good_from_bad_for_every_format(
        self, judges: Judges, fmt: str
    ) -> None:
        judge = judges(fmt)
        good, bad = await judge.assess(case(GOOD)), await judge.assess(case(BAD))
        assert good.grounded_p is not None
        assert bad.grounded_p is not None
        assert good.grounded_p > 0.5 > bad.grounded_p
        assert (good.provider, good.model) == (f"specialist:{fmt}", f"{fmt}-model")


# --------------------------------------------------------------------------- as a tier


async def test_a_specialist_tier_screens_before_the_last_tier_and_hands_on_when_down() -> None:
    """judge.tiers: [specialist (lynx), fake]: the specialist decides what it reads (a lynx
    PASS is grounded_p 1.0), and a server that is down hands every message on, never a pass."""
    from guard import Guard, JudgeSettings
    from guard.assembly import make_judge
    from guard.models import JudgeRequest, Label

    with FakeSpecialistServer() as srv:
        tiers = [
            {"kind": "specialist", "name": "lynx", "format": "lynx", "base_url": srv.base_url,
             "model": "PatronusAI/Llama-3-Patronus-Lynx-8B-Instruct", "max_retries": 0},
            {"kind": "fake"},
        ]  # fmt: skip
        settings = JudgeSettings.model_validate({"tiers": tiers})
        guard = Guard(make_judge(settings, {}), settings)
        srv.queue(answer(LYNX_FAIL))
        verdict = await guard.judge(JudgeRequest(output=BAD, context=EVIDENCE))
        assert (verdict.label, verdict.judge.tier, verdict.judge.tier_name) == (
            Label.FAIL,
            "specialist",
            "lynx",
        )
        assert [(t.name, t.decided) for t in verdict.judge.tiers] == [("lynx", True)]
        srv.queue(error(503, "model loading"))
        handed_on = await guard.judge(JudgeRequest(output=BAD, context=EVIDENCE))
        assert handed_on.judge.tier_name == "fake"
        first = handed_on.judge.tiers[0]
        assert (first.name, first.decided, first.grounded_p) == ("lynx", False, None)
        assert first.error == "judge_unavailable"
        await guard.aclose()

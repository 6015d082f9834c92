"""IBM Granite Guardian 3.0-3.2 (ibm-granite/granite-guardian-3.x), groundedness risk: the
model's own chat template, and its Yes/No answer read strictly.

Sources:

* Messages, from the model cards' "Usage 2: Example for Hallucination risks in RAG"
  (huggingface.co/ibm-granite/granite-guardian-3.1-2b and -8b, README "Quickstart Example"):
  ``[{"role": "context", "content": context_text}, {"role": "assistant", "content":
  response_text}]`` with ``guardian_config = {"risk_name": "groundedness"}`` passed to
  ``apply_chat_template``. The template (tokenizer_config.json) builds the whole prompt from
  these two turns, the context as "Context:" and the answer as "Assistant Message:", followed
  by the groundedness risk definition; we send no prompt text of our own.
* Through an OpenAI-compatible server, ``guardian_config`` reaches the template as vLLM's
  ``chat_template_kwargs`` body field ("Additional kwargs to pass to the template renderer",
  vllm/entrypoints/openai/protocol.py). Ollama's granite3-guardian template reads the risk
  name from the system prompt instead (ollama.com/library/granite3-guardian, template blob
  25a6bf4e64bf; ibm-granite/gguf test/prompts/README.md): ``granite_risk_via: system`` sends
  it as a system message. The Hugging Face template reads a third message as the tool list,
  so the system message is never sent to it.
* Labels: "Yes" means the risk is present, here that the answer is not grounded; "No" that it
  is (cards: ``safe_token = "No"``, ``unsafe_token = "Yes"``; "Groundedness: assistant's
  response includes claims or facts not supported by or contradicted by the provided
  context"). 3.0 and 3.1 answer the bare word; 3.2 adds ``<confidence> High|Low
  </confidence>`` (ibm-granite/gguf test/prompts/README.md; granite-guardian
  evaluation/models/granite_guardian_3.py).
* Probability, as the cards' ``get_probabilities`` computes it: over every generated token's
  reported alternatives, the probability mass of tokens reading "yes" and of those reading
  "no" (stripped, case ignored) are summed, each from 1e-50, and P(risk) is the yes share of
  the two (the cards' softmax over their logs). The grounded probability is 1 - P(risk). The
  cards look at the top 20 alternatives; we ask for
  :data:`~guard.specialist.settings.TOP_LOGPROBS`, which servers allow by default.

Not confirmed: that Ollama's OpenAI-compatible endpoint passes the ``context`` role through to
its template and returns logprobs (its documentation was not found); that TGI can select the
risk at all (its chat completions take no template arguments, so the template's default risk,
harm, would apply: use vLLM or Ollama). Granite Guardian 3.3 and later select the risk by
``criteria_id`` and answer in ``<score>`` tags: a different format, not this one.

Reading: the answer, stripped, must be Yes or No (any case), optionally followed by the 3.2
confidence tag; anything else is :class:`MalformedJudgeOutput`, as is a reply cut at
``max_tokens`` that is not already such an answer. Without logprobs (or when they hold no
yes/no token) the grounded probability is 1.0 for No and 0.0 for Yes. With them, the probability
decides, and the answer's claim is unsupported when it is below 0.5 (greedy decoding makes the
answer the likelier label, so the two part only near 0.5, where the sum over later tokens
tips it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from guard.case import PreparedCase
from guard.errors import MalformedJudgeOutput
from guard.specialist.formats import (
    Call,
    Reading,
    decision_confidence,
    document_text,
    logprob_fields,
    unsupported,
)
from guard.specialist.reply import Position, Reply, label_mass
from guard.specialist.settings import TOP_LOGPROBS, GraniteRiskVia, SpecialistFormat

RISK_NAME = "groundedness"
FLOOR = 1e-50  # the cards' starting mass of each label
_ANSWER = re.compile(
    r"\A\s*(yes|no)\s*(?:<confidence>\s*(high|low)\s*</confidence>)?\s*\Z", re.IGNORECASE
)


def parse(text: str) -> tuple[bool, str | None]:
    """(risk present, the 3.2 confidence word or None) of a Granite Guardian answer."""
    match = _ANSWER.match(text)
    if match is None:
        raise MalformedJudgeOutput("granite_guardian answer is not Yes or No")
    level = match.group(2)
    return match.group(1).lower() == "yes", level.capitalize() if level else None


def risk_probability(positions: Sequence[Position]) -> float | None:
    """P(risk) from the Yes/No token logprobs, as the model cards compute it; None when no
    alternative reads yes or no."""
    yes, no = label_mass(positions, "yes"), label_mass(positions, "no")
    if yes == 0.0 and no == 0.0:
        return None
    return (FLOOR + yes) / (2 * FLOOR + yes + no)


class GraniteGuardian:
    """The ``granite_guardian`` format: one call per output window."""

    name: SpecialistFormat = "granite_guardian"

    def __init__(self, *, use_logprobs: bool, risk_via: GraniteRiskVia) -> None:
        self.use_logprobs = use_logprobs
        self.risk_via = risk_via

    def calls(self, case: PreparedCase) -> list[Call]:
        turns = (
            {"role": "context", "content": document_text(case)},
            {"role": "assistant", "content": case.output},
        )
        extra: dict[str, Any] = logprob_fields(self.use_logprobs, TOP_LOGPROBS)
        if self.risk_via == "system":
            return [Call(({"role": "system", "content": RISK_NAME}, *turns), case.output, extra)]
        extra["chat_template_kwargs"] = {"guardian_config": {"risk_name": RISK_NAME}}
        return [Call(turns, case.output, extra)]

    def read(self, calls: Sequence[Call], replies: Sequence[Reply]) -> Reading:
        (call,), (reply,) = calls, replies
        risky, level = parse(reply.text)
        p_risk = risk_probability(reply.positions) if reply.positions else None
        grounded_p = (0.0 if risky else 1.0) if p_risk is None else 1.0 - p_risk
        said = f"Granite Guardian: {'Yes' if risky else 'No'} (groundedness risk"
        said += f", {level} confidence" if level else ""
        said += ")" if p_risk is None else f", P(risk) {p_risk:.3f})"
        confidence = None if p_risk is None else decision_confidence(grounded_p)
        if grounded_p >= 0.5:
            return Reading(grounded_p, confidence, said)
        reason = "claims or facts not supported by or contradicted by the document"
        return Reading(grounded_p, confidence, said, (unsupported(call.claim, reason),))

"""The ``specialist`` judge kind: groundedness models with their own prompt formats behind an
OpenAI-compatible chat completions endpoint (vLLM, TGI, Ollama).

Formats (each module cites the model card or reference code it follows, and says what it
assumes):

* ``lynx`` (:mod:`guard.specialist.lynx`): PatronusAI Lynx 8B/70B, a JSON verdict PASS/FAIL;
* ``granite_guardian`` (:mod:`guard.specialist.granite`): IBM Granite Guardian 3.0-3.2, the
  groundedness risk, Yes (not grounded) / No, P(risk) from the Yes/No token logprobs;
* ``minicheck`` (:mod:`guard.specialist.minicheck`): Bespoke-MiniCheck-7B, Yes/No per claim
  sentence, grounded_p the minimum P(Yes) over them.

Errors are :mod:`guard.errors` kinds: the server's failures as
:func:`guard.providers.errors.map_sdk_error` maps them (``JudgeTimeout``, ``JudgeUnavailable``,
``RateLimited``, ``QuotaExhausted``, ``JudgeRejected``), and any reply that is not the format's
answer, read strictly, :class:`~guard.errors.MalformedJudgeOutput`; never a made-up score.
Build one with :func:`guard.specialist.judge.build_specialist` from a
:class:`guard.specialist.settings.SpecialistTier`. Nothing is imported here: the settings load
without the SDK (``guard.settings`` reads the tier settings).
"""

"""The cascade of tiers: an ordered list of judges, each deciding what it is sure of.

Each tier is any judge kind (offline rules, a small detector model, a specialist model behind an
OpenAI-compatible server, an LLM). A tier decides pass when its ``grounded_p`` is at or above
its ``pass_at``, fail at or below its ``fail_at``, and hands the message on otherwise; the last
tier always decides. See ``docs/architecture.md``.
"""

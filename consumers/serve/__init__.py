"""``groundguard serve``: the HTTP check API, for callers that must not send an ungrounded reply.

Map (one concept per module):

* :mod:`~consumers.serve.app`: the routes and the flow of one check;
* :mod:`~consumers.serve.body`: reading the body, JSON and the deadline header (4xx naming the
  field);
* :mod:`~consumers.serve.auth`: bearer API keys from a file, compared in constant time;
* :mod:`~consumers.serve.deadline`: the verdict by the deadline (``on_deadline`` policy);
* :mod:`~consumers.serve.admission`: the in-flight bound (429 at once, no queue);
* :mod:`~consumers.serve.outcomes`: the HTTP status of a verdict (budget refusals);
* :mod:`~consumers.serve.metrics`: request latency by outcome, in-flight, shed;
* :mod:`~consumers.serve.openapi`: the OpenAPI document (``schemas/serve.openapi.json``);
* :mod:`~consumers.serve.service`: the process: signals and the graceful stop;
* :mod:`~consumers.serve.proxy`: the OpenAI- and Anthropic-compatible streaming proxy (hold
  and release: :mod:`guard.stream`);
* :mod:`~consumers.serve.errors`: :class:`~consumers.serve.errors.Refused` and its kinds.

It shares the judge core (:class:`guard.boundary.GuardCore` from
:func:`guard.assembly.build_guard`), the settings, budgets, cache, metrics and health routes
with ``groundguard run``, and runs on :class:`consumers.asgi.AsgiServer` (Starlette on uvicorn).
"""

from __future__ import annotations

from consumers.serve.service import serve_http

__all__ = ["serve_http"]

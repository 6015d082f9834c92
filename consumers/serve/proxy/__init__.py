"""``serve``'s streaming proxy: OpenAI- and Anthropic-compatible routes that forward to a
configured upstream and release the answer only as far as it is judged grounded.

Map:

* :mod:`~consumers.serve.proxy.api`: the routes and the flow of one proxied answer;
* :mod:`~consumers.serve.proxy.upstream`: the upstream client, headers and credentials;
* :mod:`~consumers.serve.proxy.wire`: the OpenAI and Anthropic wire formats, read and written.

The hold and release itself, the spans and the evidence of a chat request are in
:mod:`guard.stream` (no HTTP there).
"""

from __future__ import annotations

from consumers.serve.proxy.api import ProxyApi

__all__ = ["ProxyApi"]

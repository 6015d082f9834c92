"""Kafka request-reply: the headers (:mod:`.headers`) and the client (:class:`ScreeningClient`)."""

from consumers.reply.client import DEFAULT_REPLY_TOPIC_PREFIX, ScreeningClient, unanswered
from consumers.reply.headers import CORRELATION_ID_HEADER, REPLY_TOPIC_HEADER

__all__ = [
    "CORRELATION_ID_HEADER",
    "DEFAULT_REPLY_TOPIC_PREFIX",
    "REPLY_TOPIC_HEADER",
    "ScreeningClient",
    "unanswered",
]

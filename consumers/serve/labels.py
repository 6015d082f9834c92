"""``POST /v1/labels``: a reviewer's label of a message this server judged.

With ``judge.cascade.learn`` the label replaces the LLM's label of that message's screen
readings (:meth:`guard.learning.learner.Learner.relabel`). The body is a
:class:`guard.models.ReviewLabel`; the answer is ``{"request_id", "applied"}``: ``applied`` is
false when the server does not remember the request (it judged it long ago, or never), which is
counted, never an error. Without learning the endpoint answers 409 ``learning_off``.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from consumers.serve import body
from consumers.serve.auth import ApiKeys
from consumers.serve.errors import BadRequest, Refused
from guard.learning.learner import Learner
from guard.models import ReviewLabel

MAX_LABEL_BYTES = 16_384  # a request id, a label, a reviewer and a note
LABEL_WAIT_S = 10.0  # the most a label's body may take to arrive


async def label(request: Request, learner: Learner | None, keys: ApiKeys) -> Response:
    """Apply the label in ``request`` to ``learner``."""
    try:
        keys.check(request.headers.get("authorization"))
        body.check_content_type(request)
        raw = await body.read_body(request, MAX_LABEL_BYTES, LABEL_WAIT_S, lambda _: None)
        try:
            review = ReviewLabel.model_validate(body.decode_object(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or None
            raise BadRequest("invalid_label", str(first["msg"]), field=field, status=422) from exc
        if learner is None:
            raise Refused(
                "learning_off",
                "judge.cascade.learn is off: nothing here learns from labels",
                status=409,
            )
    except Refused as exc:
        return exc.response()
    applied = learner.relabel(review.request_id, review.label)
    return JSONResponse({"request_id": review.request_id, "applied": applied})

"""Why ``serve`` refuses a request: one exception, answered as a 4xx/5xx JSON body.

Hierarchy (under :class:`consumers.errors.ConsumerError`, the package's root)::

    Refused                 a request the API will not judge; status, code, field, message
    ├── BadRequest          400/408/413/415/422: the body, a header or a field is wrong
    ├── Unauthorized        401: no or an unknown bearer API key
    └── Unavailable         429 shed (the in-flight bound reached); 503 cut off by the stop

The body is ``{"error": {"code", "message", "field"}}``: ``field`` names the JSON path
(``output``, ``requests.3.context``) or header (``x-groundguard-deadline-ms``) at fault, or
``null``. Messages never quote a credential or the request body.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import JSONResponse

from consumers.errors import ConsumerError


class Refused(ConsumerError):
    """A request the API answers with ``status`` and an error body instead of a verdict."""

    status = 400

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.field = field
        self.status = status or type(self).status
        self.headers = dict(headers or {})
        super().__init__(f"{code}: {message}")

    def response(self) -> JSONResponse:
        body = {"error": {"code": self.code, "message": self.message, "field": self.field}}
        return JSONResponse(body, self.status, headers=self.headers)


class BadRequest(Refused):
    status = 400


class Unauthorized(Refused):
    status = 401

    def __init__(self, message: str) -> None:
        super().__init__(
            "unauthorized",
            message,
            field="authorization",
            headers={"WWW-Authenticate": 'Bearer realm="groundguard"'},
        )


class Unavailable(Refused):
    status = 429

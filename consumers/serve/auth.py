"""Bearer API keys for ``serve``: read from a file (a mounted Kubernetes Secret), compared in
constant time, never logged.

The file holds one key per line; blank lines and lines starting with ``#`` are skipped. Every
``/v1`` request must send ``Authorization: Bearer <key>`` with one of them. The file is read
again when its modification time changes, so a rotated Secret takes effect without a restart.
Without a file there is no authentication (``serve`` logs a warning at start).
"""

from __future__ import annotations

import hmac
from pathlib import Path

from consumers.errors import SettingsError
from consumers.serve.errors import Unauthorized

MIN_KEY_CHARS = 16  # shorter keys are guessable; refused at start


def read_keys(path: Path) -> tuple[bytes, ...]:
    """The keys in ``path``; a :class:`SettingsError` (never quoting a key) when unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            "serve.api_keys_file", f"cannot read {path}: {type(exc).__name__}", "fix the file"
        ) from None
    keys = tuple(
        line.strip().encode()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )
    if not keys:
        raise SettingsError(
            "serve.api_keys_file", f"{path} holds no key", "write one API key per line"
        )
    short = [n for n, key in enumerate(keys, 1) if len(key) < MIN_KEY_CHARS]
    if short:
        raise SettingsError(
            "serve.api_keys_file",
            f"key number {short[0]} in {path} is shorter than {MIN_KEY_CHARS} characters",
            "use long random keys, e.g. `openssl rand -hex 32`",
        )
    return keys


class ApiKeys:
    """Checks ``Authorization`` headers against the keys in a file (None: everyone passes)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._keys: tuple[bytes, ...] = ()
        self._mtime_ns = -1
        if path is not None:
            self._reload()

    @property
    def required(self) -> bool:
        return self.path is not None

    def check(self, authorization: str | None) -> None:
        """Return when the header carries a known key; :class:`Unauthorized` otherwise."""
        if self.path is None:
            return
        if not authorization:
            raise Unauthorized("send Authorization: Bearer <API key>")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("the Authorization header must be 'Bearer <API key>'")
        if not self._known(token.strip().encode("utf-8", "surrogateescape")):
            raise Unauthorized("unknown API key")

    def _known(self, presented: bytes) -> bool:
        self._maybe_reload()
        found = False
        for key in self._keys:  # every key compared, so timing says nothing about which
            found |= hmac.compare_digest(presented, key)
        return found

    def _maybe_reload(self) -> None:
        assert self.path is not None
        try:
            mtime_ns = self.path.stat().st_mtime_ns
        except OSError:
            return  # a Secret being swapped: keep the keys we have
        if mtime_ns != self._mtime_ns:
            try:
                self._reload()
            except SettingsError:
                return  # a half-written file: keep the keys we have

    def _reload(self) -> None:
        assert self.path is not None
        mtime_ns = self.path.stat().st_mtime_ns
        self._keys = read_keys(self.path)
        self._mtime_ns = mtime_ns

"""Bearer API keys for ``serve``: read from a file (a mounted Kubernetes Secret), compared in
constant time, never logged.

The file holds one key per line; blank lines and lines starting with ``#`` are skipped. Every
``/v1`` request must send ``Authorization: Bearer <key>`` with one of them. Without a file there
is no authentication (see :mod:`consumers.serve.service` for where that is allowed).

Rotation fails closed. Each request stats the file (one system call); when its device, inode,
size or modification time changed it is read again, so a key removed from a rotated Secret
stops working at once, without a restart. A file that is now empty, holds a short key or cannot
be read leaves **no** key valid (every request 401) and logs ``serve.api_keys_unusable``; a
deleted file the same, logging ``serve.api_keys_missing``; each is logged once, when it
happens, and the keys come back when the file is fixed. Write the file atomically (a rename,
as Kubernetes does for a Secret): a half-written file refuses requests while it is half-written.
At start an unusable file is a bad setting (exit 2).
"""

from __future__ import annotations

import hmac
from pathlib import Path

import structlog

from consumers.errors import SettingsError
from consumers.serve.errors import Unauthorized

log = structlog.get_logger("consumers.serve")

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
        self._seen: tuple[int, ...] | None = None
        if path is not None:
            self._keys = read_keys(path)  # a SettingsError at start when unusable
            self._seen = _signature(path)

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
        """Read the file again when it changed; fail closed when it is gone or unusable."""
        assert self.path is not None
        try:
            seen: tuple[int, ...] | None = _signature(self.path)
        except OSError as exc:
            seen = None
            if self._seen is not None:
                log.error("serve.api_keys_missing", path=str(self.path), error=type(exc).__name__)
        if seen == self._seen:
            return
        self._seen, self._keys = seen, ()
        if seen is None:
            return
        try:
            self._keys = read_keys(self.path)
        except SettingsError as exc:
            log.error("serve.api_keys_unusable", problem=str(exc), keys_valid=0)
            return
        log.info("serve.api_keys_reloaded", path=str(self.path), keys=len(self._keys))


def _signature(path: Path) -> tuple[int, ...]:
    """What changes when the file is rewritten or replaced (a Secret's symlink swapped)."""
    st = path.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

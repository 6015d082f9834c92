"""API key rotation fails closed: a key removed from ``serve.api_keys_file`` stops working on
the next request, an emptied, unusable or deleted file leaves no key valid (logged once), and
the keys come back when the file does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from consumers.serve.auth import ApiKeys
from consumers.serve.errors import Unauthorized

OLD, NEW = "o" * 32, "n" * 40


def rewrite(path: Path, text: str, tick: int) -> None:
    """Rewrite ``path`` with a modification time of its own (same-tick rewrites can share
    one), as a rotation would."""
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(tick, tick))


def accepts(keys: ApiKeys, key: str) -> bool:
    try:
        keys.check(f"Bearer {key}")
    except Unauthorized:
        return False
    return True


@pytest.fixture
def path(tmp_path: Path) -> Path:
    found = tmp_path / "api-keys"
    found.write_text(f"{OLD}\n{NEW}\n", encoding="utf-8")
    return found


def test_a_key_removed_from_the_file_stops_working_on_the_next_request(path: Path) -> None:
    keys = ApiKeys(path)
    assert accepts(keys, OLD)
    assert accepts(keys, NEW)
    rewrite(path, f"{NEW}\n", 1)
    assert not accepts(keys, OLD)
    assert accepts(keys, NEW)


@pytest.mark.parametrize("text", ["", "\n\n", "# all keys revoked\n", "short\n"])
def test_an_emptied_or_unusable_file_leaves_no_key_valid_and_says_so_once(
    path: Path, text: str
) -> None:
    keys = ApiKeys(path)
    with capture_logs() as logs:
        rewrite(path, text, 2)
        assert not accepts(keys, OLD)
        assert not accepts(keys, NEW)
    events = [e["event"] for e in logs]
    assert events == ["serve.api_keys_unusable"]
    assert OLD not in str(logs)
    assert NEW not in str(logs)


def test_a_deleted_file_fails_closed_with_a_log_line_and_recovers_when_restored(
    path: Path,
) -> None:
    keys = ApiKeys(path)
    with capture_logs() as logs:
        path.unlink()
        assert not accepts(keys, OLD)
        assert not accepts(keys, NEW)
        rewrite(path, f"{OLD}\n", 3)
        assert accepts(keys, OLD)
        assert not accepts(keys, NEW)
    assert [e["event"] for e in logs] == ["serve.api_keys_missing", "serve.api_keys_reloaded"]
    assert logs[0]["log_level"] == "error"


def test_a_secret_swapped_by_symlink_is_read_again(tmp_path: Path) -> None:
    """Kubernetes mounts a Secret as symlinks into a directory it swaps atomically: the path
    keeps its name and the file behind it is a new one."""
    first, second = tmp_path / "..v1", tmp_path / "..v2"
    first.mkdir()
    second.mkdir()
    (first / "api-keys").write_text(OLD, encoding="utf-8")
    (second / "api-keys").write_text(NEW, encoding="utf-8")
    data = tmp_path / "..data"
    data.symlink_to(first)
    link = tmp_path / "api-keys"
    link.symlink_to(data / "api-keys")
    keys = ApiKeys(link)
    assert accepts(keys, OLD)
    swap = tmp_path / "..data_tmp"
    swap.symlink_to(second)
    swap.replace(data)
    assert accepts(keys, NEW)
    assert not accepts(keys, OLD)

"""Reading the service settings: a YAML/JSON file overlaid with ``GROUNDGUARD_...`` environment
variables (``__`` separates nested fields, e.g. ``GROUNDGUARD_TOPICS__VERDICTS=guard.verdicts``,
``GROUNDGUARD_JUDGE__PROVIDER=openai``), validated into a
:class:`~consumers.settings.ServiceSettings`.

Environment variables win over the file. :func:`load_settings` is the only place that reads
them; a bad setting raises :class:`consumers.errors.SettingsError` naming the field and the fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_settings import EnvSettingsSource

from consumers.errors import SettingsError
from consumers.settings import ENV_PREFIX, NOT_SETTINGS, ServiceSettings

_FIXES = {
    "missing": "set it in the config file or as an environment variable",
    "extra_forbidden": "remove it; check the spelling against the documented settings",
    "enum": "use one of the allowed values",
    "literal_error": "use one of the allowed values",
    "int_parsing": "use a whole number",
    "float_parsing": "use a number",
    "bool_parsing": "use true or false",
    "greater_than_equal": "raise the value",
    "greater_than": "raise the value",
    "less_than_equal": "lower the value",
    "string_too_short": "give a non-empty value",
    "string_pattern_mismatch": "use one of the allowed values",
}


class _MappingEnvSource(EnvSettingsSource):
    """Reads ``GROUNDGUARD_...`` variables from a given mapping instead of ``os.environ``."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(ServiceSettings)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items()}


def read_config_file(path: Path) -> dict[str, Any]:
    """The mapping in a YAML or JSON settings file. A :class:`SettingsError` otherwise, which
    names the file, line, column and problem but never quotes the file's text: the offending
    line may hold a password or an API key."""
    if not path.is_file():
        raise SettingsError("config", f"file {path} does not exist", "pass an existing --config")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(
            "config", f"{path} is not UTF-8 text (byte {exc.start})", "save the file as UTF-8"
        ) from None
    try:
        data = _parse(text, json_file=path.suffix == ".json")
    except _DuplicateKey as exc:
        raise SettingsError(
            "config",
            f"{path}: {exc.where}key '{exc.key}' is given twice (the last would win silently)",
            "keep one of them",
        ) from None
    except json.JSONDecodeError as exc:
        raise _syntax_error(path, exc.lineno, exc.colno, exc.msg) from None
    except yaml.YAMLError as exc:
        raise _syntax_error(path, *_yaml_position(exc), _yaml_problem(exc)) from None
    except RecursionError:
        raise SettingsError(
            "config",
            f"{path} is nested too deeply to read",
            "write the settings as a flat mapping of key: value pairs",
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError(
            "config", f"{path} does not hold a mapping", "write the settings as key: value pairs"
        )
    return data


class _DuplicateKey(Exception):
    def __init__(self, key: object, line: int | None) -> None:
        self.key = key
        self.where = f"line {line}: " if line is not None else ""


_MERGE_TAG = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (at any depth)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:  # '<<: *base' merges keys a later key may override
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, Hashable) and key in seen:
                raise _DuplicateKey(key, key_node.start_mark.line + 1)
            if isinstance(key, Hashable):
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _json_object(text: str) -> Any:
    """``text`` as JSON, a key given twice in one object refused (the line is found after)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        for key in keys:
            if keys.count(key) > 1:
                raise _DuplicateKey(key, None)
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=unique)
    except _DuplicateKey as exc:
        lines = [n for n, line in enumerate(text.splitlines(), 1) if f'"{exc.key}"' in line]
        raise _DuplicateKey(exc.key, lines[1] if len(lines) > 1 else None) from None


def _parse(text: str, *, json_file: bool) -> Any:
    return _json_object(text) if json_file else yaml.load(text, Loader=_UniqueKeyLoader)


# Quoted parts of PyYAML's problems may be file text (a tag or alias name): only a character
# (',' or '\t') or a token name ('<block end>') is kept.
_QUOTED = re.compile(r"'([^']*)'")
_HARMLESS_QUOTE = re.compile(r"\\?.|<[a-z ]+>")


def _unquoted(text: str) -> str:
    def keep(match: re.Match[str]) -> str:
        return match.group(0) if _HARMLESS_QUOTE.fullmatch(match.group(1)) else "'...'"

    return _QUOTED.sub(keep, text)


def _yaml_position(exc: yaml.YAMLError) -> tuple[int | None, int | None]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (None, None)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    text = ": ".join(str(p) for p in parts if p) or type(exc).__name__
    return _unquoted(text)


def _syntax_error(path: Path, line: int | None, column: int | None, problem: str) -> SettingsError:
    where = f"line {line}, column {column}" if line is not None else "unknown position"
    return SettingsError(
        "config",
        f"{path} is not valid YAML/JSON at {where}: {problem}",
        "fix the file's syntax there",
    )


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged


def _as_settings_error(exc: ValidationError) -> SettingsError:
    error = exc.errors()[0]
    message = str(error.get("msg", "invalid value"))
    if "[" in message and " || " in message:  # a cross-field check from _cross_checks
        head, fix = message.split(" || ", 1)
        field, problem = head.split("] ", 1)
        return SettingsError(field.split("[", 1)[1], problem, fix)
    field = ".".join(str(part) for part in error.get("loc", ())) or "settings"
    env = ENV_PREFIX + field.upper().replace(".", "__")
    fix = _FIXES.get(str(error.get("type")), "correct the value")
    return SettingsError(field, message, f"{fix} (file key '{field}' or env {env})")


def _check_env_names(environ: Mapping[str, str]) -> None:
    """A misspelt top-level variable would be ignored silently: refuse it instead. (Nested
    sections forbid unknown keys themselves.)"""
    fields = {name.upper() for name in ServiceSettings.model_fields}
    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX) or name.upper() in NOT_SETTINGS:
            continue
        top = name.upper()[len(ENV_PREFIX) :].split("__", 1)[0]
        if top not in fields:
            raise SettingsError(
                name,
                "is not a setting of groundguard run",
                "check the spelling against consumers/settings.py (nested keys "
                "use __, e.g. GROUNDGUARD_TOPICS__VERDICTS) or unset it",
            )


def load_settings(path: Path | None, environ: Mapping[str, str]) -> ServiceSettings:
    """The settings from ``path`` (YAML or JSON) overlaid with ``GROUNDGUARD_...`` variables."""
    _check_env_names(environ)
    file_values = read_config_file(path) if path is not None else {}
    try:
        env_values = _MappingEnvSource(environ)()
        settings = ServiceSettings.model_validate(_merge(file_values, env_values))
    except ValidationError as exc:
        raise _as_settings_error(exc) from exc
    except ValueError as exc:  # pydantic-settings: an env value that should be JSON is not
        raise SettingsError(
            "environment",
            str(exc),
            "nested values in env vars must be JSON or use __ to set one field at a time",
        ) from exc
    return settings

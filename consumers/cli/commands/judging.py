"""Judge options shared by the commands that judge (``check``, ``replay``, ``demo``): flags and a
``--config`` file turned into :class:`~guard.settings.JudgeSettings`. The judge itself is built
by :func:`guard.assembly.build_guard`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from consumers.config import read_config_file
from guard.errors import ConfigError
from guard.models import ContextField, ScoringMode
from guard.settings import JudgeSettings, Provider

# flag dest -> JudgeSettings field
_FLAG_FIELDS = {
    "judge": "provider",
    "model": "model",
    "base_url": "base_url",
    "mode": "mode",
    "threshold": "threshold",
    "context_field": "context_field",
    "timeout": "timeout_s",
    "max_context_chars": "max_context_chars",
    "max_output_chars": "max_output_chars",
    "api_key_file": "api_key_file",
    "price_file": "price_file",
}


SOURCE_HELP = "the grounding source (default context)"


def add_judge_arguments(parser: argparse.ArgumentParser, *, source_help: str = SOURCE_HELP) -> None:
    group = parser.add_argument_group("the judge")
    group.add_argument(
        "--config",
        type=Path,
        help="a YAML/JSON settings file; its `judge:` section (or the whole file) "
        "gives judge settings, which the flags below override",
    )
    group.add_argument(
        "--judge",
        choices=[p.value for p in Provider],
        help="offline (default: no network, no key), openai, anthropic, "
        "cascade (offline first, LLM when unsure), fake (tests)",
    )
    group.add_argument(
        "--model", help="judge model (default gpt-4o-mini; claude-haiku-4-5 for anthropic)"
    )
    group.add_argument("--base-url", help="an OpenAI-compatible endpoint (vLLM, Ollama, proxy)")
    group.add_argument(
        "--mode",
        choices=[m.value for m in ScoringMode],
        help="scale5: raw 1-5, score (raw-1)/4 (default); binary: 1 grounded / 0",
    )
    group.add_argument("--threshold", type=float, help="pass at score >= threshold (default 0.5)")
    group.add_argument(
        "--context-field",
        choices=[c.value for c in ContextField],
        help=source_help,
    )
    group.add_argument("--timeout", type=float, help="seconds per judge call (default 30)")
    group.add_argument("--max-context-chars", type=int, help="evidence kept (default 4000)")
    group.add_argument(
        "--max-output-chars",
        type=int,
        help="output judged per window (default 4000; a longer output is judged "
        "in up to 4 windows, see on_truncated_output in README)",
    )
    group.add_argument(
        "--api-key-file",
        type=Path,
        help="read the API key from this file instead of the environment",
    )
    group.add_argument("--price-file", type=Path, help="extra or overriding model prices (JSON)")


def _config_section(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    loaded = read_config_file(path)
    section = loaded.get("judge", loaded)
    if not isinstance(section, dict):
        raise ConfigError("judge", "expected a mapping", "indent the judge settings under judge:")
    return dict(section)


def config_error(exc: ValidationError, prefix: str = "judge") -> ConfigError:
    """The first problem of a validation error, as a ConfigError naming the field and a fix."""
    first = exc.errors()[0]
    field = ".".join([prefix, *(str(p) for p in first["loc"])])
    allowed = first.get("ctx", {}).get("expected")
    fix = f"use one of {allowed}" if allowed else "see `groundguard check --help` and README.md"
    return ConfigError(field, first["msg"], fix)


def judge_settings_from(args: argparse.Namespace) -> JudgeSettings:
    values = _config_section(getattr(args, "config", None))
    for flag, field in _FLAG_FIELDS.items():
        value = getattr(args, flag, None)
        if value is not None:
            values[field] = value
    try:
        return JudgeSettings.model_validate(values)
    except ValidationError as exc:
        raise config_error(exc) from exc
